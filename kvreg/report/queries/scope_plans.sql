-- scope_plans: the plans(users, context_tokens, tpot_s, ttft_s) table macro restricted to what the report
-- lists (temp table report_plans, read by plan_options).
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp.
-- Inputs: plans macro (kvreg/sql/275_plans.sql); parameters $users, $context_tokens, $tpot_s, $ttft_s
--   (the report's workload), $models, $hardware, $engines, $weights_dtypes, $kv_dtypes (VARCHAR[]),
--   $tp (BIGINT[]).
-- Units: as plans (sequences, devices, seconds, USD per hour).
SELECT * FROM plans($users, $context_tokens, $tpot_s, ttft_s := $ttft_s)
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
