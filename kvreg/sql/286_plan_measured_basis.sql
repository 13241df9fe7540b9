-- plan_measured_basis(fitted, measured): table macro, each recommendation resting on a guessed efficiency (the †
-- call) against the same workload sized at the vendor's measured figure: what it costs there and whether the pick
-- changes — the ONE comparison `kvreg plan` (kvreg/plan.py) and the report (kvreg/report/queries/guess_plans.sql)
-- print.
-- fitted, measured: the NAMES of two tables of ranked_plans (280) rows for one workload and the same lists, ranked
--   with efficiency_basis 'fitted' and 'vendor_measured' (kvreg plan's plan_ranked / plan_ranked_measured, the
--   report's report_plans / report_plans_vendor).
-- A recommendation is such a call when decode speed binds (binding_constraint 'tpot') and its bandwidth efficiency is
--   only the hardware entry's stated figure (plan_efficiency.bandwidth_level 'stated', 274): the report's †.
-- Grain: one row per model whose recommendation (rank_in_model 1, rank_list 'priced' or 'no price') is such a call
--   and whose vendor has a measured figure that differs (otherwise nothing would move: no row).
-- Inputs: the two tables, plan_efficiency (274), engines (engine family).
-- Units: devices, USD per hour, USD per million output tokens (plan_usd_per_million_output_tokens, 275), fractions.
--   model_id, hardware_id, engine_id, devices, usd_per_hour, bandwidth_efficiency   the recommendation as sized
--   vendor_hardware_id, vendor_engine_family   where the measured figure comes from (plan_efficiency)
--   vendor_bandwidth_efficiency, vendor_evidence  the figure the measured ranking sized this hardware at, and its
--             evidence line
--   at_*      the best option on the SAME hardware and engine at that figure (it may take another TP or precision):
--             at_tp, at_weights_dtype, at_kv_dtype, at_devices, at_usd_per_hour, at_usd_per_million_output_tokens,
--             at_binding_constraint; NULL when that hardware serves the workload at no configuration at that figure
--   top_*     the recommendation at that figure (rank_in_model 1 of the measured ranking): top_hardware_id,
--             top_engine_id, top_tp, top_weights_dtype, top_kv_dtype, top_devices, top_usd_per_hour,
--             top_usd_per_million_output_tokens
--   flips     the measured ranking recommends other hardware or another engine release
--   holds     it recommends the same hardware and engine with the same device count: the call holds at the measured
--             figure (a "second plan" would change nothing; say so in one clause)
CREATE OR REPLACE MACRO plan_measured_basis(fitted, measured) AS TABLE
WITH rec AS (
    SELECT f.* FROM query_table(fitted) f
    JOIN engines en ON en.engine_id = f.engine_id
    JOIN plan_efficiency pe ON pe.hardware_id = f.hardware_id AND pe.engine_family = en.engine
    WHERE f.rank_in_model = 1 AND f.rank_list IN ('priced', 'no price') AND f.binding_constraint = 'tpot'
      AND pe.bandwidth_level = 'stated'
),
m AS (SELECT * FROM query_table(measured)),
v AS (SELECT m.*, plan_usd_per_million_output_tokens(m.usd_per_hour, m.replicas, m.batch_per_replica,
                                                     m.tpot_at_batch_s) AS usd_per_million_output_tokens
      FROM m WHERE m.feasible AND m.rank_list IN ('priced', 'no price')),
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
    -- the figure the measured ranking sized this hardware at (every row of it carries it, feasible or not)
    SELECT r.model_id, any_value(x.bandwidth_efficiency) AS vendor_bandwidth_efficiency,
           any_value(x.efficiency_evidence) AS vendor_evidence
    FROM rec r JOIN m x ON x.model_id = r.model_id AND x.hardware_id = r.hardware_id AND x.engine_id = r.engine_id
    GROUP BY r.model_id
),
top AS (
    SELECT v.model_id, v.hardware_id AS top_hardware_id, v.engine_id AS top_engine_id, v.tp AS top_tp,
           v.weights_dtype AS top_weights_dtype, v.kv_dtype AS top_kv_dtype, v.gpus AS top_devices,
           v.usd_per_hour AS top_usd_per_hour, v.usd_per_million_output_tokens AS top_usd_per_million_output_tokens
    FROM v WHERE v.rank_in_model = 1
)
SELECT r.model_id, r.hardware_id, r.engine_id, r.gpus AS devices, r.usd_per_hour, r.bandwidth_efficiency,
       pe.vendor_hardware_id, pe.vendor_engine_family,
       f.vendor_bandwidth_efficiency, f.vendor_evidence,
       s.* EXCLUDE (model_id), t.* EXCLUDE (model_id),
       t.top_hardware_id IS NOT NULL AND (t.top_hardware_id, t.top_engine_id) <> (r.hardware_id, r.engine_id) AS flips,
       coalesce(t.top_hardware_id = r.hardware_id AND t.top_engine_id = r.engine_id AND t.top_devices = r.gpus, FALSE)
           AS holds
FROM rec r
JOIN engines en ON en.engine_id = r.engine_id
JOIN plan_efficiency pe ON pe.hardware_id = r.hardware_id AND pe.engine_family = en.engine
JOIN fig f ON f.model_id = r.model_id
LEFT JOIN same s ON s.model_id = r.model_id
LEFT JOIN top t ON t.model_id = r.model_id
-- no measured device of the same vendor: the figure is unchanged, there is no second plan
WHERE f.vendor_bandwidth_efficiency IS DISTINCT FROM r.bandwidth_efficiency
