-- plan_options: the workload sized by the plans(users, context_tokens, tpot_s, ttft_s) table macro
-- (kvreg/sql/145_plans.sql), restricted to what the report lists; same columns as options.sql plus
-- the plans verdict (feasible, reason, max_context_tokens, tpot_at_batch_s, prefill_floor_s).
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp.
-- Inputs: report_plans (scope_plans.sql: the plans macro for the report; model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp, feasible, reason,
--   max_seqs_per_replica, rate_max_batch, replicas, batch_per_replica, gpus, usd_per_hour,
--   binding_constraint, tpot_at_batch_s, prefill_floor_s, max_context_tokens), report_capacity (naive plan),
--   report_items, report_workloads, models, hardware, report_rates (scope_rates.sql: the report's cost basis),
--   report_engine_admission.
-- Units: sequences, devices, seconds, tokens, USD per hour and per month.
--   planned_seqs   sequences one replica serves: least(KV capacity, largest batch meeting TPOT, and — for an
--                  engine release with accounting data — the sequences engine_capacity admits at the context)
--   replicas, devices, usd_per_hour  the plans figures, re-sized with planned_seqs when the engine admits
--                  fewer than plans (plans sizes on first principles; an engine never runs more than it admits)
--   engine_limited the engine's admission, not plans, sets planned_seqs
--   binding        plain words: 'capacity' | 'tpot' | 'none' from plans.binding_constraint, or engine admission
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
w AS (SELECT * FROM report_workloads WHERE report_id = $report),
joined AS (
    SELECT p.model_id, coalesce(m.name, p.model_id) AS model_name, p.hardware_id,
           coalesce(h.name, p.hardware_id) AS hardware_name, p.engine_id,
           p.weights_dtype, p.kv_dtype, p.tp, w.context_tokens, w.users, w.hours_per_month,
           c.pool_bytes, c.seq_bytes, c.max_seqs, c.naive_max_seqs, e.admitted_seqs AS engine_seqs,
           e.starts AS engine_starts, p.feasible AS plans_feasible, p.reason AS plans_reason,
           p.max_seqs_per_replica, p.rate_max_batch, p.batch_per_replica, p.replicas AS plans_replicas,
           p.binding_constraint, p.tpot_at_batch_s, p.prefill_floor_s, p.max_context_tokens,
           CASE WHEN c.naive_max_seqs > 0 THEN ceil(w.users / c.naive_max_seqs)::BIGINT * p.tp END AS naive_devices,
           rt.usd_per_hour AS price_usd_per_hour, rt.price_provider, rt.price_date,
           pm.item_idx AS model_idx, ph.item_idx AS hardware_idx, pw.item_idx AS weights_idx,
           pk.item_idx AS kv_idx, pt.item_idx AS tp_idx, pe.item_idx AS engine_idx
    FROM report_plans p
    CROSS JOIN w
    JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = p.model_id
    JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = p.hardware_id
    JOIN pick pe ON pe.item_kind = 'engine' AND pe.item_id = p.engine_id
    JOIN pick pw ON pw.item_kind = 'weights_dtype' AND pw.item_id = p.weights_dtype
    JOIN pick pk ON pk.item_kind = 'kv_dtype' AND pk.item_id = p.kv_dtype
    JOIN pick pt ON pt.item_kind = 'tp' AND pt.item_value = p.tp
    JOIN models m ON m.model_id = p.model_id
    JOIN hardware h ON h.hardware_id = p.hardware_id
    JOIN report_rates rt ON rt.hardware_id = p.hardware_id
    LEFT JOIN report_capacity c
           ON c.model_id = p.model_id AND c.hardware_id = p.hardware_id AND c.engine_id = p.engine_id
          AND c.weights_dtype = p.weights_dtype AND c.kv_dtype = p.kv_dtype AND c.tp = p.tp
          AND c.context_tokens = w.context_tokens
    LEFT JOIN report_engine_admission e
           ON e.model_id = p.model_id AND e.hardware_id = p.hardware_id AND e.engine_id = p.engine_id
          AND e.weights_dtype = p.weights_dtype AND e.kv_dtype = p.kv_dtype AND e.tp = p.tp
          AND e.context_tokens = w.context_tokens
),
judged AS (
    SELECT *, plans_feasible AND coalesce(engine_seqs > 0, true) AS feasible,
           CASE WHEN NOT plans_feasible THEN plans_reason
                WHEN engine_starts = false
                    THEN 'engine: refuses to start (one request of this context does not fit its KV cache)'
                WHEN engine_seqs = 0 THEN 'engine: admits no sequence of this context' END AS reason,
           coalesce(engine_seqs < least(max_seqs_per_replica, rate_max_batch), false) AS engine_limited
    FROM joined
),
sized AS (
    SELECT *,
           CASE WHEN feasible THEN least(max_seqs_per_replica, rate_max_batch,
                                         coalesce(engine_seqs, max_seqs_per_replica)) END AS planned_seqs,
           CASE WHEN NOT feasible THEN NULL
                WHEN engine_limited THEN ceil(users / planned_seqs)::BIGINT
                ELSE plans_replicas::BIGINT END AS replicas,
           replicas * tp AS devices,
           price_usd_per_hour * devices AS usd_per_hour,
           price_usd_per_hour * devices * hours_per_month AS usd_per_month,
           replicas * planned_seqs AS users_capacity,
           CASE WHEN NOT feasible THEN NULL
                WHEN engine_limited THEN 'engine admission'
                WHEN binding_constraint = 'capacity' THEN 'KV cache memory'
                WHEN binding_constraint = 'tpot' THEN 'decode speed (TPOT)'
                WHEN binding_constraint = 'none' THEN 'neither (one replica holds every user)' END AS binding
    FROM judged
)
SELECT *, feasible AS meets,
       -- Plan on the engine's number (kv-arithmetic-hybrid-attention.txt, rule 3): options an engine
       -- release with accounting data admits rank before first-principles ones, which stay as the comparison.
       row_number() OVER (PARTITION BY model_id
                          ORDER BY NOT feasible, engine_seqs IS NULL, usd_per_hour IS NULL, usd_per_hour, devices,
                                   hardware_idx, weights_idx, kv_idx, tp_idx, engine_idx) AS rank_in_model
FROM sized
ORDER BY model_idx, rank_in_model
