-- scope_capacity: the capacity view restricted to what one report lists (materialised once per report as
-- the temp table report_capacity, which grid, options, plan_options, chart_capacity and sensitivity read).
-- Every context of the contexts axis is kept: the capacity chart and the sensitivity use them all.
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × context_tokens.
-- Inputs: capacity_at over the contexts axis (kvreg/sql/245_capacity_at.sql: the capacity view with the report's
--   engine_settings as knob parameters, NULL = each release's default); parameters $models, $hardware,
--   $engines, $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]): the report's lists;
--   $gpu_memory_utilization, $max_num_seqs, $max_num_batched_tokens, $enforce_eager, $num_speculative_tokens, $block_size.
-- Units: as capacity (bytes, sequences, tokens).
-- Why: filtering with constant lists lets DuckDB push the filter into the view's scans; joining the
--   report_items table instead evaluates the view over the whole registry first.
SELECT * FROM capacity_at((SELECT list(context_tokens ORDER BY context_tokens) FROM contexts),
                          gpu_memory_utilization := $gpu_memory_utilization, max_num_seqs := $max_num_seqs,
                          max_num_batched_tokens := $max_num_batched_tokens, enforce_eager := $enforce_eager,
                          num_speculative_tokens := $num_speculative_tokens, block_size := $block_size)
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
