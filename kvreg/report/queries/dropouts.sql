-- dropouts: each listed device on which no listed configuration serves a model's workload, and why; and each
-- listed engine release under which a device that serves the model otherwise does not (the engine release does
-- not run there: engine_support's reason, 'platform: …', e.g. vLLM on a Mac only through its CPU backend).
-- Grain: one row per model × hardware × reason (a device that serves the model in some configuration of every
--   listed engine release has no row); configs lists the configurations that fail for that reason.
-- Inputs: report_options (plan_options.sql: the plans verdict and the engine's start check per option).
-- Columns: model_id, hardware_id, reason (the plans / engine text: weights do not fit, one sequence does not
--   fit, TPOT, TTFT, interconnect, engine refuses to start), configs (text: 'bf16/fp8 TP 1 vllm-0.33; …'),
--   n_configs, model_idx, hardware_idx.
WITH o AS (SELECT * FROM report_options),
gone AS (SELECT model_id, hardware_id FROM o GROUP BY model_id, hardware_id HAVING NOT bool_or(meets)),
out AS (
    SELECT model_id, hardware_id, NULL::VARCHAR AS engine_id FROM gone
    UNION ALL
    -- the device serves the model under another release, but this release does not run there
    SELECT e.model_id, e.hardware_id, e.engine_id
    FROM (SELECT model_id, hardware_id, engine_id FROM o GROUP BY ALL
          HAVING NOT bool_or(meets) AND bool_or(coalesce(reason, '') LIKE 'platform:%')) e
    ANTI JOIN gone g ON g.model_id = e.model_id AND g.hardware_id = e.hardware_id
)
SELECT o.model_id, o.hardware_id, coalesce(o.reason, 'no listed configuration meets the workload') AS reason,
       string_agg(format('{}/{} TP {} {}', o.weights_dtype, o.kv_dtype, o.tp, o.engine_id), '; '
                  ORDER BY o.weights_idx, o.kv_idx, o.tp_idx, o.engine_idx) AS configs,
       count(*) AS n_configs, min(o.model_idx) AS model_idx, min(o.hardware_idx) AS hardware_idx
FROM o JOIN out ON out.model_id = o.model_id AND out.hardware_id = o.hardware_id
               AND (out.engine_id IS NULL OR out.engine_id = o.engine_id)
GROUP BY o.model_id, o.hardware_id, reason
ORDER BY model_idx, hardware_idx, n_configs DESC, reason
