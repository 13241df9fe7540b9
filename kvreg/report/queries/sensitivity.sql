-- sensitivity: what would change each model's recommended answer.
-- Grain: one row per model with a recommended option (rank_in_model = 1 and it meets the workload).
-- Inputs: report_options (options.sql or plan_options.sql for this report), report_capacity_axis (every axis context), report_engine_admission,
--   report_binding_names.
-- Units: sequences (users), tokens, devices, USD per hour.
--   users_capacity          users the recommended devices hold at the workload context
--   longest_context_tokens  the longest context (contexts axis) at which those devices still hold every user
--                           (memory only: engine-admitted when known, else first principles)
--   naive_devices           devices the naive formula would buy for the same workload
--   alt_*                   the cheapest option that meets the workload at another weights/KV precision pair
--   next_*                  the next cheapest option under the same engine (another hardware, precision or TP)
--   eng_*                   the cheapest option that meets the workload under another listed engine release;
--                           eng_admission_known: that engine has accounting data (else it is first principles)
--                           (engine-admitted sequences cap its replicas; plan_options.sql)
--   single_seq_context_tokens  the plans view's max_context_tokens (longest context at which one sequence fits
--                           and meets the TPOT on one replica), capped at the model's native context
--   native_limited          true when that cap is the model's native context
--   tok_per_s_per_replica   sustained output tokens/s of one replica: batch_per_replica ÷ tpot_at_batch_s (each
--                           running sequence emits one token per decode step); NULL without the plans figures
--   tok_per_s_total         replicas × tok_per_s_per_replica
--   usd_per_million_output_tokens  usd_per_hour ÷ (tok_per_s_total × 3,600) × 10^6 (plan_usd_per_million_output_tokens,
--                           275; output tokens only: prefill
--                           is paid in the same hours and not counted apart)
--   limit_memory_seqs, limit_tpot_seqs, limit_engine_seqs  sequences per replica each constraint allows (KV pool,
--                           largest batch meeting the TPOT, engine admission; NULL where not known)
--   binding, binding_key, one_replica  the recommendation's (report_options: the summary table's column)
--   binding_seqs            sequences per replica the binding limit allows
--   margin_next             how much more the next constraint allows than the binding one (0.25 = 25 % more);
--                           next_constraint names it ('memory' | 'tpot' | 'engine'), next_constraint_name in words
--                           (binding_names.sql)
--   ru_*                    the runner-up: the cheapest option that meets the workload on other hardware, same
--                           engine; ru_extra = its cost ÷ the recommendation's − 1
--   ru_flip_usd_per_device_hour  the runner-up's price per device-hour at which the two cost the same
--                           (plan_flip_usd_per_device_hour, 283); ru_flip_change its change in price (−0.2 = 20 % lower)
WITH rec AS (SELECT * FROM report_options WHERE rank_in_model = 1 AND meets),
ru AS (
    SELECT o.model_id, arg_min(o.hardware_id, o.rank_in_model) AS ru_hardware_id,
           arg_min(o.tp, o.rank_in_model) AS ru_tp, arg_min(o.weights_dtype, o.rank_in_model) AS ru_weights_dtype,
           arg_min(o.kv_dtype, o.rank_in_model) AS ru_kv_dtype, arg_min(o.devices, o.rank_in_model) AS ru_devices,
           arg_min(o.usd_per_hour, o.rank_in_model) AS ru_usd_per_hour,
           arg_min(o.price_usd_per_hour, o.rank_in_model) AS ru_price_usd_per_hour
    FROM report_options o JOIN rec r USING (model_id)
    WHERE o.meets AND o.engine_id = r.engine_id AND o.hardware_id <> r.hardware_id
    GROUP BY o.model_id
),
limits AS (
    -- the binding limit is report_options.binding_key (the same column the summary table prints); the next limit
    -- is the tightest of the others that allows more
    SELECT model_id, limit_memory_seqs, limit_tpot_seqs, limit_engine_seqs, binding_seqs,
           CASE WHEN list_count(others) > 0 THEN list_min(others) / binding_seqs - 1 END AS margin_next,
           CASE WHEN list_count(others) = 0 THEN NULL
                WHEN list_min(others) = limit_engine_seqs THEN 'engine'
                WHEN list_min(others) = limit_tpot_seqs THEN 'tpot' ELSE 'memory' END AS next_constraint
    FROM (
        SELECT model_id, lm AS limit_memory_seqs, lt AS limit_tpot_seqs, le AS limit_engine_seqs, bs AS binding_seqs,
               list_filter([lm, lt, le], lambda x: x IS NOT NULL AND x > bs) AS others
        FROM (SELECT model_id, coalesce(max_seqs_per_replica, max_seqs) AS lm, rate_max_batch AS lt,
                     engine_seqs AS le,
                     CASE binding_key WHEN 'tpot' THEN rate_max_batch WHEN 'engine' THEN engine_seqs
                                      ELSE coalesce(max_seqs_per_replica, max_seqs) END AS bs
              FROM rec)
    )
),
alt AS (
    SELECT o.model_id, arg_min(o.hardware_id, o.rank_in_model) AS alt_hardware_id,
           arg_min(o.weights_dtype, o.rank_in_model) AS alt_weights_dtype,
           arg_min(o.kv_dtype, o.rank_in_model) AS alt_kv_dtype, arg_min(o.tp, o.rank_in_model) AS alt_tp,
           arg_min(o.devices, o.rank_in_model) AS alt_devices, arg_min(o.usd_per_hour, o.rank_in_model) AS alt_usd_per_hour
    FROM report_options o JOIN rec r USING (model_id)
    WHERE o.meets AND (o.weights_dtype, o.kv_dtype) <> (r.weights_dtype, r.kv_dtype)
    GROUP BY o.model_id
),
nxt AS (
    SELECT o.model_id, arg_min(o.hardware_id, o.rank_in_model) AS next_hardware_id,
           arg_min(o.weights_dtype, o.rank_in_model) AS next_weights_dtype,
           arg_min(o.kv_dtype, o.rank_in_model) AS next_kv_dtype, arg_min(o.tp, o.rank_in_model) AS next_tp,
           arg_min(o.devices, o.rank_in_model) AS next_devices,
           arg_min(o.usd_per_hour, o.rank_in_model) AS next_usd_per_hour
    FROM report_options o JOIN rec r USING (model_id)
    WHERE o.meets AND o.engine_id = r.engine_id AND o.rank_in_model > 1
    GROUP BY o.model_id
),
eng AS (
    SELECT o.model_id, arg_min(o.engine_id, o.rank_in_model) AS eng_engine_id,
           arg_min(o.hardware_id, o.rank_in_model) AS eng_hardware_id,
           arg_min(o.weights_dtype, o.rank_in_model) AS eng_weights_dtype,
           arg_min(o.kv_dtype, o.rank_in_model) AS eng_kv_dtype, arg_min(o.tp, o.rank_in_model) AS eng_tp,
           arg_min(o.planned_seqs, o.rank_in_model) AS eng_planned_seqs,
           arg_min(o.devices, o.rank_in_model) AS eng_devices,
           arg_min(o.usd_per_hour, o.rank_in_model) AS eng_usd_per_hour,
           arg_min(o.binding, o.rank_in_model) AS eng_binding,
           arg_min(o.engine_seqs IS NOT NULL, o.rank_in_model) AS eng_admission_known
    FROM report_options o JOIN rec r USING (model_id)
    WHERE o.meets AND o.engine_id <> r.engine_id
    GROUP BY o.model_id
)
SELECT o.model_id, o.users, o.users_capacity, o.devices, o.naive_devices,
       max(c.context_tokens) FILTER (WHERE coalesce(e.admitted_seqs, c.max_seqs) * o.replicas >= o.users)
           AS longest_context_tokens,
       any_value(a.alt_hardware_id) AS alt_hardware_id, any_value(a.alt_weights_dtype) AS alt_weights_dtype,
       any_value(a.alt_kv_dtype) AS alt_kv_dtype, any_value(a.alt_tp) AS alt_tp,
       any_value(a.alt_devices) AS alt_devices, any_value(a.alt_usd_per_hour) AS alt_usd_per_hour,
       any_value(COLUMNS(n.* EXCLUDE (model_id))), any_value(COLUMNS(g.* EXCLUDE (model_id))),
       least(any_value(o.max_context_tokens), any_value(m.native_context_tokens)) AS single_seq_context_tokens,
       any_value(o.max_context_tokens) > any_value(m.native_context_tokens) AS native_limited,
       any_value(o.batch_per_replica / o.tpot_at_batch_s) AS tok_per_s_per_replica,
       any_value(o.replicas * o.batch_per_replica / o.tpot_at_batch_s) AS tok_per_s_total,
       any_value(plan_usd_per_million_output_tokens(o.usd_per_hour, o.replicas, o.batch_per_replica,
                                                    o.tpot_at_batch_s))
           AS usd_per_million_output_tokens,
       any_value(o.binding) AS binding, any_value(o.binding_key) AS binding_key, any_value(o.one_replica) AS one_replica,
       any_value(COLUMNS(l.* EXCLUDE (model_id))), any_value(nb.binding_name) AS next_constraint_name,
       any_value(COLUMNS(u.* EXCLUDE (model_id))),
       any_value(u.ru_usd_per_hour / o.usd_per_hour - 1) AS ru_extra,
       any_value(plan_flip_usd_per_device_hour(o.usd_per_hour, u.ru_devices)) AS ru_flip_usd_per_device_hour,
       any_value(plan_flip_usd_per_device_hour(o.usd_per_hour, u.ru_devices) / u.ru_price_usd_per_hour - 1)
           AS ru_flip_change
FROM rec o
JOIN models m ON m.model_id = o.model_id
JOIN report_capacity_axis c ON c.model_id = o.model_id AND c.hardware_id = o.hardware_id AND c.engine_id = o.engine_id
               AND c.weights_dtype = o.weights_dtype AND c.kv_dtype = o.kv_dtype AND c.tp = o.tp
LEFT JOIN report_engine_admission e
       ON e.model_id = c.model_id AND e.hardware_id = c.hardware_id AND e.engine_id = c.engine_id
      AND e.weights_dtype = c.weights_dtype AND e.kv_dtype = c.kv_dtype AND e.tp = c.tp
      AND e.context_tokens = c.context_tokens
LEFT JOIN alt a ON a.model_id = o.model_id
LEFT JOIN nxt n ON n.model_id = o.model_id
LEFT JOIN eng g ON g.model_id = o.model_id
LEFT JOIN limits l ON l.model_id = o.model_id
LEFT JOIN report_binding_names nb ON nb.binding_key = l.next_constraint
LEFT JOIN ru u ON u.model_id = o.model_id
GROUP BY o.model_id, o.users, o.users_capacity, o.devices, o.naive_devices
ORDER BY o.model_id
