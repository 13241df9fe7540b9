-- scope_roofline: the roofline view at the report's workload context, restricted to what the report lists
-- (temp table report_roofline, read by chart_roofline only), at the precisions and engines the charts show
-- (chart_scope.sql's lists: the report's models, hardware and TP sizes, the shown weights/KV dtypes and engines).
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × batch.
-- Inputs: roofline (kvreg/sql/260_roofline.sql); parameters $context_tokens (BIGINT), $models, $hardware,
--   $engines, $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]).
-- Units: as roofline (tokens per second).
SELECT * FROM roofline
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
  AND context_tokens = $context_tokens
