-- guess_plans: each call resting on a guessed efficiency, sized again at the same vendor's measured figure.
-- A recommendation is such a call (the summary's †) when decode speed binds (binding_key 'tpot') and its bandwidth
-- efficiency is only the hardware entry's stated figure (plan_options.sql speed_estimated).  Its second plan is
-- ranked_plans(efficiency_basis := 'vendor_measured') for that model (temp table report_plans_vendor,
-- kvreg/report/context.py vendor_plans): the stated figure replaced by the same vendor's lowest measured one
-- (kvreg/sql/274_plan_efficiency.sql), every other device at its own figure, ranked by the one rule.
-- Grain: one row per model whose recommendation is such a call.
-- Inputs: report_options (plan_options.sql), report_plans_vendor (scope_plans.sql at 'vendor_measured').
-- Units: devices, USD per hour, USD per million output tokens (plan_usd_per_million_output_tokens, 275), fractions.
--   hardware_id, engine_id, devices, usd_per_hour, bandwidth_efficiency   the recommendation as printed
--   at_*      the best option on the SAME hardware and engine at the vendor's figure (it may take another TP or
--             precision): at_tp, at_weights_dtype, at_kv_dtype, at_devices, at_usd_per_hour,
--             at_usd_per_million_output_tokens, at_binding_constraint (plans' words); NULL when that hardware
--             serves the workload at no configuration at that figure
--   top_*     the recommendation at the vendor's figure (rank_in_model 1 of the second ranking): top_hardware_id,
--             top_engine_id, top_tp, top_weights_dtype, top_kv_dtype, top_devices, top_usd_per_hour,
--             top_usd_per_million_output_tokens
--   vendor_bandwidth_efficiency, vendor_evidence  the figure the second ranking sized this hardware at, and its
--             evidence line (plan_efficiency.vendor_evidence through plans)
--   flips     the second ranking recommends other hardware or another engine release (FALSE when it recommends
--             nothing: top_* NULL, no listed configuration serves the workload at that figure)
--   A model whose vendor has no measured device under the engine family (the figure would not change) has no row.
WITH rec AS (SELECT * FROM report_options WHERE rank_in_model = 1 AND meets AND binding_key = 'tpot'
                                              AND speed_estimated),
v AS (SELECT p.*, plan_usd_per_million_output_tokens(p.usd_per_hour, p.replicas, p.batch_per_replica,
                                                     p.tpot_at_batch_s) AS usd_per_million_output_tokens
      FROM report_plans_vendor p
      WHERE p.feasible AND p.rank_list IN ('priced', 'no price')),
same AS (
    SELECT r.model_id, arg_min(v.tp, v.rank_in_model) AS at_tp,
           arg_min(v.weights_dtype, v.rank_in_model) AS at_weights_dtype,
           arg_min(v.kv_dtype, v.rank_in_model) AS at_kv_dtype, arg_min(v.gpus, v.rank_in_model) AS at_devices,
           arg_min(v.usd_per_hour, v.rank_in_model) AS at_usd_per_hour,
           arg_min(v.usd_per_million_output_tokens, v.rank_in_model) AS at_usd_per_million_output_tokens,
           arg_min(v.binding_constraint, v.rank_in_model) AS at_binding_constraint
    FROM rec r JOIN v ON v.model_id = r.model_id AND v.hardware_id = r.hardware_id AND v.engine_id = r.engine_id
    GROUP BY r.model_id
),
fig AS (
    -- the figure the second ranking sized this hardware at (every row of it carries it, feasible or not)
    SELECT r.model_id, any_value(p.bandwidth_efficiency) AS vendor_bandwidth_efficiency,
           any_value(p.efficiency_evidence) AS vendor_evidence
    FROM rec r JOIN report_plans_vendor p ON p.model_id = r.model_id AND p.hardware_id = r.hardware_id
                                         AND p.engine_id = r.engine_id
    GROUP BY r.model_id
),
top AS (
    SELECT v.model_id, v.hardware_id AS top_hardware_id, v.engine_id AS top_engine_id, v.tp AS top_tp,
           v.weights_dtype AS top_weights_dtype, v.kv_dtype AS top_kv_dtype, v.gpus AS top_devices,
           v.usd_per_hour AS top_usd_per_hour, v.usd_per_million_output_tokens AS top_usd_per_million_output_tokens
    FROM v WHERE v.rank_in_model = 1
)
SELECT r.model_id, r.model_name, r.hardware_id, r.engine_id, r.devices, r.usd_per_hour, r.bandwidth_efficiency,
       f.vendor_bandwidth_efficiency, f.vendor_evidence,
       s.* EXCLUDE (model_id), t.* EXCLUDE (model_id),
       t.top_hardware_id IS NOT NULL AND (t.top_hardware_id, t.top_engine_id) <> (r.hardware_id, r.engine_id) AS flips
FROM rec r
JOIN fig f ON f.model_id = r.model_id
LEFT JOIN same s ON s.model_id = r.model_id
LEFT JOIN top t ON t.model_id = r.model_id
-- no measured device of the same vendor under this engine family: the figure is unchanged, there is no second plan
WHERE f.vendor_bandwidth_efficiency IS DISTINCT FROM r.bandwidth_efficiency
ORDER BY r.model_idx
