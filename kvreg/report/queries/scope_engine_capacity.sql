-- scope_engine_capacity: engine_capacity_at over the max_model_lens and contexts axes together with the report's
-- engine_settings (NULL = each release's default for the device: then exactly the engine_capacity rows with
-- default_batched), restricted to what one report lists; materialised once per report as the temp table
-- report_engine_capacity_all (kvreg/report/context.py availability).  Cut from it: report_engine_capacity (the
-- max_model_lens axis: report_engine_admission, engine_quirks, naive_gap; every max_model_len of the axis is kept
-- for the capacity chart), and the engine side of capacity_at (the contexts axis), which reads these rows through
-- a temp engine_capacity_at while report_capacity is materialised (context.py _share_engine_capacity): the engine's
-- admission chain (kvreg/sql 200–220) is evaluated once per report instead of twice.  A row at one max_model_len
-- does not depend on the list's other values (220: its first-principles sums are per context).
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × max_model_len
--   (× max_num_batched_tokens should a release have several defaults).
-- Inputs: engine_capacity_at (kvreg/sql/220_engine_capacity.sql: the lists also as its only_models, only_hardware,
--   only_engines, so its first scans are cut, not only its result); tables max_model_lens, contexts; parameters
--   $models, $hardware, $engines, $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]), and the knobs
--   $gpu_memory_utilization, $max_num_seqs, $max_num_batched_tokens, $enforce_eager, $num_speculative_tokens,
--   $block_size.
-- Units: as engine_capacity (sequences, tokens, bytes).
SELECT * FROM engine_capacity_at((SELECT list(DISTINCT n ORDER BY n)
                                  FROM (SELECT max_model_len AS n FROM max_model_lens
                                        UNION ALL SELECT context_tokens FROM contexts)),
                                 gpu_memory_utilization := $gpu_memory_utilization, max_num_seqs := $max_num_seqs,
                                 max_num_batched_tokens := $max_num_batched_tokens, enforce_eager := $enforce_eager,
                                 num_speculative_tokens := $num_speculative_tokens, block_size := $block_size,
                                 only_models := $models, only_hardware := $hardware, only_engines := $engines)
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
