-- plan_options: the workload sized by the plans(users, context_tokens, tpot_s, ttft_s) table macro
-- (roofline issue), restricted to what the report lists; same columns as options.sql.
-- Capacity columns (sequences per replica, naive devices) come from capacity at the workload context
-- under the report's first engine, which is also the engine_id reported.
-- Grain: one row per plans row for a listed model × hardware × weights_dtype × kv_dtype × tp.
-- Inputs: plans macro (expected columns: model_id, hardware_id, weights_dtype, kv_dtype, tp,
--   replicas, gpus, usd_per_hour, binding), report_items, report_workloads, models, hardware.
-- Units: devices, USD per hour and per month.
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
w AS (SELECT * FROM report_workloads WHERE report_id = $report),
first_engine AS (SELECT arg_min(item_id, item_idx) AS engine_id FROM pick WHERE item_kind = 'engine'),
sized AS (
    SELECT p.model_id, coalesce(m.name, p.model_id) AS model_name, p.hardware_id,
           coalesce(h.name, p.hardware_id) AS hardware_name, fe.engine_id,
           p.weights_dtype, p.kv_dtype, p.tp, w.context_tokens, w.users, w.hours_per_month,
           c.pool_bytes, c.seq_bytes, c.max_seqs, c.naive_max_seqs, e.admitted_seqs AS engine_seqs,
           coalesce(e.admitted_seqs, c.max_seqs) AS planned_seqs,
           p.replicas::BIGINT AS replicas, p.gpus::BIGINT AS devices,
           CASE WHEN c.naive_max_seqs > 0 THEN ceil(w.users / c.naive_max_seqs)::BIGINT * p.tp END AS naive_devices,
           h.price_usd_per_hour, h.price_provider, h.price_date,
           p.usd_per_hour, p.usd_per_hour * w.hours_per_month AS usd_per_month,
           p.replicas::BIGINT * coalesce(e.admitted_seqs, c.max_seqs) AS users_capacity, p.binding::VARCHAR AS binding,
           pm.item_idx AS model_idx, ph.item_idx AS hardware_idx, pw.item_idx AS weights_idx,
           pk.item_idx AS kv_idx, pt.item_idx AS tp_idx, 0 AS engine_idx
    FROM plans($users, $context_tokens, $tpot_s, $ttft_s) p
    CROSS JOIN w
    CROSS JOIN first_engine fe
    JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = p.model_id
    JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = p.hardware_id
    JOIN pick pw ON pw.item_kind = 'weights_dtype' AND pw.item_id = p.weights_dtype
    JOIN pick pk ON pk.item_kind = 'kv_dtype' AND pk.item_id = p.kv_dtype
    JOIN pick pt ON pt.item_kind = 'tp' AND pt.item_value = p.tp
    JOIN models m ON m.model_id = p.model_id
    JOIN hardware h ON h.hardware_id = p.hardware_id
    LEFT JOIN capacity c
           ON c.model_id = p.model_id AND c.hardware_id = p.hardware_id AND c.engine_id = fe.engine_id
          AND c.weights_dtype = p.weights_dtype AND c.kv_dtype = p.kv_dtype AND c.tp = p.tp
          AND c.context_tokens = w.context_tokens
    LEFT JOIN report_engine_admission e
           ON e.model_id = p.model_id AND e.hardware_id = p.hardware_id AND e.engine_id = fe.engine_id
          AND e.weights_dtype = p.weights_dtype AND e.kv_dtype = p.kv_dtype AND e.tp = p.tp
          AND e.context_tokens = w.context_tokens
)
SELECT *, devices IS NOT NULL AS meets,
       row_number() OVER (PARTITION BY model_id
                          ORDER BY devices IS NULL, usd_per_hour IS NULL, usd_per_hour, devices,
                                   hardware_idx, weights_idx, kv_idx, tp_idx) AS rank_in_model
FROM sized
ORDER BY model_idx, rank_in_model
