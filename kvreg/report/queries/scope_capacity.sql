-- scope_capacity: the capacity view restricted to what one report lists, at the contexts $contexts, materialised
-- once per report over the whole contexts axis as report_capacity_all (kvreg/report/context.py rank_options), from
-- which report_capacity (every listed configuration at the report's contexts and its workload context: grid,
-- options, plan_options, naive_gap) and report_capacity_axis (every axis context, only for the precisions and
-- engines the charts show, chart_scope.sql: chart_capacity and sensitivity) are cut; `kvreg diff` materialises
-- report_capacity at the report's contexts only.  Once the engine side was filtered by the report's lists (15 s
-- of 19 s for the Q4 2026 definition before), the fixed cost of each evaluation (the engine pools, ~0.6 s) is more
-- than the axis contexts' rows: one evaluation of 46,080 rows 1.1 s CPU against 0.48 + 0.99 s for two.
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × context_tokens.
-- Inputs: capacity_at over the contexts axis (kvreg/sql/245_capacity_at.sql: the capacity view with the report's
--   engine_settings as knob parameters, NULL = each release's default); parameters $models, $hardware,
--   $engines, $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]), $weights_pairs (STRUCT(model_id, weights_dtype)[]: each model's own precisions, report_weights, kvreg/sql/031): the report's lists; $contexts (BIGINT[]);
--   $gpu_memory_utilization, $max_num_seqs, $max_num_batched_tokens, $enforce_eager, $num_speculative_tokens, $block_size.
-- Units: as capacity (bytes, sequences, tokens).
-- Why: filtering with constant lists lets DuckDB push the filter into the view's scans; joining the
--   report_items table instead evaluates the view over the whole registry first.
SELECT * FROM capacity_at($contexts,
                          gpu_memory_utilization := $gpu_memory_utilization, max_num_seqs := $max_num_seqs,
                          max_num_batched_tokens := $max_num_batched_tokens, enforce_eager := $enforce_eager,
                          num_speculative_tokens := $num_speculative_tokens, block_size := $block_size,
                          only_models := $models, only_hardware := $hardware)
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
  AND list_contains($weights_pairs, {'model_id': model_id, 'weights_dtype': weights_dtype})
