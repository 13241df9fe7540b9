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
--   holds     the second ranking recommends the same hardware, engine and device count: the call holds at the
--             measured figure (printed as one clause, not as a second plan)
--   A model whose vendor has no measured device under the engine family (the figure would not change) has no row.
-- The comparison is plan_measured_basis (kvreg/sql/286), the one `kvreg plan` prints; this adds the report's names.
SELECT r.model_name, g.*
FROM plan_measured_basis('report_plans', 'report_plans_vendor') g
JOIN report_options r ON r.model_id = g.model_id AND r.rank_in_model = 1 AND r.meets AND r.binding_key = 'tpot'
                     AND r.speed_estimated
ORDER BY r.model_idx
