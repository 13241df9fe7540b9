-- dropouts: each listed device on which no listed configuration serves a model's workload, and why.
-- Grain: one row per model × hardware × reason (a device that serves the model in some configuration has
--   no row); configs lists the configurations that fail for that reason.
-- Inputs: report_options (plan_options.sql: the plans verdict and the engine's start check per option).
-- Columns: model_id, hardware_id, reason (the plans / engine text: weights do not fit, one sequence does not
--   fit, TPOT, TTFT, interconnect, engine refuses to start), configs (text: 'bf16/fp8 TP 1 vllm-0.33; …'),
--   n_configs, model_idx, hardware_idx.
WITH o AS (SELECT * FROM report_options),
out AS (
    SELECT model_id, hardware_id FROM o GROUP BY model_id, hardware_id HAVING NOT bool_or(meets)
)
SELECT o.model_id, o.hardware_id, coalesce(o.reason, 'no listed configuration meets the workload') AS reason,
       string_agg(format('{}/{} TP {} {}', o.weights_dtype, o.kv_dtype, o.tp, o.engine_id), '; '
                  ORDER BY o.weights_idx, o.kv_idx, o.tp_idx, o.engine_idx) AS configs,
       count(*) AS n_configs, min(o.model_idx) AS model_idx, min(o.hardware_idx) AS hardware_idx
FROM o JOIN out USING (model_id, hardware_id)
GROUP BY o.model_id, o.hardware_id, reason
ORDER BY model_idx, hardware_idx, n_configs DESC, reason
