-- scope_engine_capacity: engine_capacity_at over the max_model_lens and contexts axes (and, for the report, the
-- batched_tokens axis $batched_axis) with the report's engine_settings (NULL = each release's default for the
-- device), restricted to what one report lists; materialised once per report as the temp table
-- report_engine_capacity_axis (kvreg/report/context.py availability), from which two tables are cut:
--   report_engine_capacity_all: the rows at the report's max_num_batched_tokens (at_report_setting:
--     $max_num_batched_tokens, else the release's default for the device, default_batched), i.e. the rows of
--     engine_capacity_at(lens, max_num_batched_tokens := $max_num_batched_tokens, …) (205: default_batched is
--     batched_set = release_batched either way; the axis holds every release default, kvreg/engine_tables.py).
--     Cut from it: report_engine_capacity (the max_model_lens axis: report_engine_admission, engine_quirks,
--     naive_gap; every max_model_len of the axis is kept for the capacity chart), and the engine side of capacity_at
--     (the contexts axis), which reads these rows through a temp engine_capacity_at while report_capacity is
--     materialised (kvreg/report/share.py _share_engine_capacity).
--   report_engine_batched ($batched_axis given: the report, batched_axis.sql): every setting of the axis at the
--     workload's context $context_tokens, which plan_levers_admission (kvreg/sql/284, the report's levers) reads
--     through a temp engine_capacity_at (kvreg/report/share.py _share_engine_batched).
-- So the engine's admission chain (kvreg/sql 200–220) is planned and evaluated once per report instead of twice
-- (~0.55 s CPU of DuckDB binding, optimising and fixed operator cost each, benchmarks/README.md "html10").  A row at
-- one max_model_len and one setting does not depend on the lists' other values (220: its first-principles sums are
-- per context; 205 and 215: the pools and request blocks per setting).  The batched rows at the other lengths are
-- dropped by the WHERE, which DuckDB applies in the chain's pools × request-blocks join (37,120 rows kept of 225,280
-- for the Q4 2026 report).  With $batched_axis NULL (kvreg diff) this is the call at the report's setting alone.
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × max_model_len
--   × max_num_batched_tokens (the report's setting; every setting of $batched_axis at $context_tokens).
-- Inputs: engine_capacity_at (kvreg/sql/220_engine_capacity.sql: the lists also as its only_models, only_hardware,
--   only_engines, so its first scans are cut, not only its result); tables max_model_lens, contexts; parameters
--   $models, $hardware, $engines, $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]), $weights_pairs (STRUCT(model_id, weights_dtype)[]: the precisions each model is sized at, report_weights, kvreg/sql/031), $context_tokens (the
--   workload's), $batched_axis (BIGINT[] constant, or NULL), and the knobs $gpu_memory_utilization, $max_num_seqs,
--   $max_num_batched_tokens, $enforce_eager, $num_speculative_tokens, $block_size.
-- Units: as engine_capacity (sequences, tokens, bytes); at_report_setting BOOLEAN.
SELECT *
FROM (SELECT *, CASE WHEN $max_num_batched_tokens IS NULL THEN default_batched
                     ELSE max_num_batched_tokens = $max_num_batched_tokens END AS at_report_setting
      FROM engine_capacity_at((SELECT list(DISTINCT n ORDER BY n)
                                  FROM (SELECT max_model_len AS n FROM max_model_lens
                                        UNION ALL SELECT context_tokens FROM contexts)),
                                 batched_axis := $batched_axis, max_num_batched_tokens := $max_num_batched_tokens,
                                 gpu_memory_utilization := $gpu_memory_utilization, max_num_seqs := $max_num_seqs,
                                 enforce_eager := $enforce_eager, num_speculative_tokens := $num_speculative_tokens,
                                 block_size := $block_size,
                                 only_models := $models, only_hardware := $hardware, only_engines := $engines))
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
  AND list_contains($weights_pairs, {'model_id': model_id, 'weights_dtype': weights_dtype})
  AND (at_report_setting OR ($batched_axis IS NOT NULL AND max_model_len = $context_tokens))
