-- unpriced_options: the options that serve a model's workload on hardware with no price on the report's
-- cost basis, ranked on device count in their own list (never silently after priced ones).
-- Grain: one row per model × unpriced option that meets the workload; unpriced_rank 1 = fewest devices.
-- Inputs: report_options (plan_options.sql; usd_per_hour NULL = no price on the basis, report_rates).
-- Units: devices, sequences per replica.
SELECT o.*, row_number() OVER (PARTITION BY o.model_id
                               ORDER BY o.devices, o.hardware_idx, o.weights_idx, o.kv_idx, o.tp_idx, o.engine_idx)
           AS unpriced_rank
FROM report_options o
WHERE o.meets AND o.usd_per_hour IS NULL
ORDER BY o.model_idx, unpriced_rank
