-- chart_cost: what each listed device costs per million output tokens for each model at the workload: the
-- device's cheapest option that meets the workload (its rank_in_model order), priced on the report's basis.
-- Grain: one row per model × hardware with an option that meets the workload.
-- Inputs: report_options (plan_options.sql: usd_per_hour on the report's cost basis, replicas,
--   batch_per_replica, tpot_at_batch_s), report_items.
-- Units: USD per million output tokens (usd_per_hour ÷ (replicas × batch_per_replica ÷ tpot_at_batch_s × 3,600)
--   × 10^6, plan_usd_per_million_output_tokens (275); NULL without a price or without the plans throughput); devices.
SELECT model_id, any_value(model_name) AS model_name, hardware_id, min(model_idx) AS model_idx,
       min(hardware_idx) AS hardware_idx,
       arg_min(devices, rank_in_model) AS devices,
       arg_min(plan_usd_per_million_output_tokens(usd_per_hour, replicas, batch_per_replica, tpot_at_batch_s),
               rank_in_model)
           AS usd_per_million_output_tokens
FROM report_options
WHERE meets
GROUP BY model_id, hardware_id
ORDER BY model_idx, hardware_idx
