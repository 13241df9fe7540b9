-- options: every configuration the report lists, sized for its workload from capacity alone
-- (used when the plans macro of the roofline issue is absent).
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp, at the workload's context.
-- Inputs: report_capacity (scope_capacity.sql), report_binding_names (binding_names.sql), report_items, report_weights (kvreg/sql/031), report_workload (workload.sql: users resolved from a request rate), hardware, report_rates (the report's cost basis), report_engine_admission.
-- Units: sequences, devices, USD per hour and per month.
--   planned_seqs  sequences one replica serves: engine-admitted when known, else first principles
--   replicas      ceil(users / planned_seqs); devices = replicas × tp
--   naive_devices what the naive planner would buy: ceil(users / naive_max_seqs) × tp
--   binding_key   the per-replica limit (memory only: no speed data here): 'engine' when the engine admits fewer
--                 than the pool holds, else 'memory'; NULL when nothing fits
--   one_replica   one replica holds every user
--   binding       binding_names.sql's words for binding_key (+ '; one replica holds every user'), as plan_options.sql
--   reason        why nothing fits (weights do not fit, one sequence does not fit)
--   weights_published  a checkpoint of this weight precision exists (report_weights.published); FALSE = derived
--   rank_in_model 1 = cheapest option for the model (priced options first, then fewest devices)
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
w AS (SELECT * FROM report_workload),
sized AS (
    SELECT c.model_id, coalesce(m.name, c.model_id) AS model_name, c.hardware_id,
           coalesce(h.name, c.hardware_id) AS hardware_name, c.engine_id,
           c.weights_dtype, c.kv_dtype, c.tp, c.context_tokens, w.users, w.hours_per_month,
           c.pool_bytes, c.seq_bytes, c.max_seqs, c.naive_max_seqs, e.admitted_seqs AS engine_seqs,
           coalesce(e.admitted_seqs, c.max_seqs) AS planned_seqs,
           CASE WHEN coalesce(e.admitted_seqs, c.max_seqs) > 0
                THEN ceil(w.users / coalesce(e.admitted_seqs, c.max_seqs))::BIGINT END AS replicas,
           replicas * c.tp AS devices,
           CASE WHEN c.naive_max_seqs > 0 THEN ceil(w.users / c.naive_max_seqs)::BIGINT * c.tp END AS naive_devices,
           rt.usd_per_hour AS price_usd_per_hour, rt.price_provider, rt.price_date,
           rt.usd_per_hour * devices AS usd_per_hour,
           rt.usd_per_hour * devices * w.hours_per_month AS usd_per_month,
           replicas * coalesce(e.admitted_seqs, c.max_seqs) AS users_capacity,
           CASE WHEN c.pool_bytes <= 0 THEN 'weights do not fit'
                WHEN coalesce(e.admitted_seqs, c.max_seqs) = 0 THEN 'one sequence does not fit' END AS why_not,
           CASE WHEN why_not IS NOT NULL THEN NULL
                WHEN e.admitted_seqs IS NOT NULL AND e.admitted_seqs < c.max_seqs THEN 'engine'
                ELSE 'memory' END AS binding_key,
           replicas = 1 AS one_replica,
           pm.item_idx AS model_idx, ph.item_idx AS hardware_idx, pw.weights_idx AS weights_idx, pw.published AS weights_published,
           pk.item_idx AS kv_idx, pt.item_idx AS tp_idx, pe.item_idx AS engine_idx
    FROM report_capacity c
    CROSS JOIN w
    JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = c.model_id
    JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = c.hardware_id
    JOIN pick pe ON pe.item_kind = 'engine' AND pe.item_id = c.engine_id
    JOIN report_weights pw ON pw.report_id = $report AND pw.model_id = c.model_id
                         AND pw.weights_dtype = c.weights_dtype
    JOIN pick pk ON pk.item_kind = 'kv_dtype' AND pk.item_id = c.kv_dtype
    JOIN pick pt ON pt.item_kind = 'tp' AND pt.item_value = c.tp
    JOIN models m ON m.model_id = c.model_id
    JOIN hardware h ON h.hardware_id = c.hardware_id
    JOIN report_rates rt ON rt.hardware_id = c.hardware_id
    LEFT JOIN report_engine_admission e
           ON e.model_id = c.model_id AND e.hardware_id = c.hardware_id AND e.engine_id = c.engine_id
          AND e.weights_dtype = c.weights_dtype AND e.kv_dtype = c.kv_dtype AND e.tp = c.tp
          AND e.context_tokens = c.context_tokens
    WHERE c.context_tokens = w.context_tokens
)
SELECT s.* EXCLUDE (why_not), devices IS NOT NULL AS meets, devices IS NOT NULL AS feasible,
       why_not AS reason,
       bn.binding_name || CASE WHEN one_replica THEN '; one replica holds every user' ELSE '' END AS binding, NULL::BIGINT AS max_context_tokens,
       NULL::DOUBLE AS tpot_at_batch_s, NULL::BIGINT AS batch_per_replica, NULL::BIGINT AS rate_max_batch,
       NULL::BIGINT AS max_seqs_per_replica, engine_seqs IS NOT NULL AND engine_seqs < max_seqs AS engine_limited,
       row_number() OVER (PARTITION BY model_id
                          ORDER BY devices IS NULL, usd_per_hour IS NULL, usd_per_hour, devices,
                                   hardware_idx, weights_idx, kv_idx, tp_idx, engine_idx) AS rank_in_model
FROM sized s
LEFT JOIN report_binding_names bn USING (binding_key)
ORDER BY model_idx, rank_in_model
