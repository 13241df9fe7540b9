-- sensitivity: what would change each model's recommended answer.
-- Grain: one row per model with a recommended option (rank_in_model = 1 and it meets the workload).
-- Inputs: report_options (options.sql for this report), capacity, report_engine_admission.
-- Units: sequences (users), tokens, devices.
--   users_capacity          users the recommended devices hold at the workload context
--   longest_context_tokens  the longest context (contexts axis) at which those devices still hold every user
--   naive_devices           devices the naive formula would buy for the same workload
SELECT o.model_id, o.users, o.users_capacity, o.devices, o.naive_devices,
       max(c.context_tokens) FILTER (WHERE coalesce(e.admitted_seqs, c.max_seqs) * o.replicas >= o.users)
           AS longest_context_tokens
FROM report_options o
JOIN capacity c ON c.model_id = o.model_id AND c.hardware_id = o.hardware_id AND c.engine_id = o.engine_id
               AND c.weights_dtype = o.weights_dtype AND c.kv_dtype = o.kv_dtype AND c.tp = o.tp
LEFT JOIN report_engine_admission e
       ON e.model_id = c.model_id AND e.hardware_id = c.hardware_id AND e.engine_id = c.engine_id
      AND e.weights_dtype = c.weights_dtype AND e.kv_dtype = c.kv_dtype AND e.tp = c.tp
      AND e.context_tokens = c.context_tokens
WHERE o.rank_in_model = 1 AND o.meets
GROUP BY ALL
ORDER BY o.model_id
