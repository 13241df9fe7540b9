-- scope_roofline: the roofline view at the report's workload context, restricted to what the report lists
-- (temp table report_roofline, read by chart_roofline only), at the precisions and engines the charts show
-- (chart_scope.sql's lists: the report's models, hardware and TP sizes, the shown weights/KV dtypes and engines).
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × batch.
-- Inputs: roofline_at (kvreg/sql/260_roofline.sql: the roofline view at the workload context only, with the
--   report's engine_settings as knob parameters, NULL = each release's default, and its pool side cut to the
--   report's models and hardware; the view over the whole registry's contexts axis cost 1.3 s CPU of the Q4 2026
--   report); parameters $context_tokens (BIGINT), $models, $hardware, $engines, $weights_dtypes, $kv_dtypes
--   (VARCHAR[]), $tp (BIGINT[]), $weights_pairs (STRUCT(model_id, weights_dtype)[]: the precisions each model is sized at, report_weights, kvreg/sql/031); $gpu_memory_utilization, $max_num_seqs, $max_num_batched_tokens,
--   $enforce_eager, $num_speculative_tokens, $block_size.
-- Units: as roofline (tokens per second).
SELECT * FROM roofline_at([$context_tokens],
                          gpu_memory_utilization := $gpu_memory_utilization, max_num_seqs := $max_num_seqs,
                          max_num_batched_tokens := $max_num_batched_tokens, enforce_eager := $enforce_eager,
                          num_speculative_tokens := $num_speculative_tokens, block_size := $block_size,
                          only_models := $models, only_hardware := $hardware)
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
  AND list_contains($weights_pairs, {'model_id': model_id, 'weights_dtype': weights_dtype})
