-- plan_options: the workload sized and ranked by the ranked_plans table macro (kvreg/sql/280_ranked_plans.sql
-- over 275_plans.sql: the sizing and ranking `kvreg plan` prints), restricted to what the report lists; same
-- columns as options.sql plus the plans verdict (feasible, reason, max_context_tokens, tpot_at_batch_s,
-- prefill_floor_s).  No figure is re-sized here: an engine release with accounting rules is already sized
-- on its own pool and admission in plans (capacity_at), so the report and the CLI agree row by row.
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp.
-- Inputs: report_plans (scope_plans.sql: model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp, feasible,
--   reason, max_seqs_per_replica, rate_max_batch, replicas, batch_per_replica, gpus, usd_per_hour,
--   binding_constraint, tpot_at_batch_s, prefill_floor_s, max_context_tokens, pool_basis, engine_starts,
--   rank_list, rank_in_model; priced on the report's cost basis), report_capacity (naive plan), report_items, report_weights,
--   report_workload (workload.sql: users resolved from a request rate), models, hardware, report_binding_names (binding_names.sql), report_rates (scope_rates.sql: the rate per device-hour on that basis).
-- Units: sequences, devices, seconds, tokens, USD per hour and per month.
--   planned_seqs   sequences one replica serves: least(capacity — the engine's admission for an engine release
--                  with accounting data —, largest batch meeting TPOT)
--   replicas, devices, usd_per_hour  the plans figures
--   engine_seqs    the sequences the engine admits at the context (pool_basis 'engine'), else NULL
--   engine_limited the engine's admission sets planned_seqs (binding_constraint 'admission')
--   binding_key    the per-replica limit that is tightest, by plans' own rule (max_seqs_per_replica ≤
--                  rate_max_batch: 'engine' when sized on the engine's admission, else 'memory'; otherwise 'tpot');
--                  named even when one replica holds every user (plans.binding_constraint 'none'), so the table
--                  and the decision text read one column
--   one_replica    plans.binding_constraint = 'none': one replica holds every user within every limit
--   binding        binding_names.sql's words for binding_key, plus '; one replica holds every user' when one_replica
--   bandwidth_efficiency, compute_efficiency, efficiency_evidence  the efficiencies plans sized the decode
--                  speed with (speed_efficiency, 254) and their one-line evidence
--   speed_estimated  the bandwidth efficiency is the hardware entry's stated figure (speed_efficiency level
--                  'stated'): nothing measured on this device, its architecture or its other engines
--   weights_published  a checkpoint of this weight precision exists (report_weights.published, kvreg/sql/031:
--                  a listed checkpoint or the model's own dtype); FALSE: sized on derived weights, which the
--                  summary and the per-model tables mark
--   rank_in_model  ranked_plans' rank (engine-admitted options first, $/hour on one rate basis, unpriced
--                  options ranked apart on devices); rank_list names the list
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
w AS (SELECT * FROM report_workload),
o AS (
SELECT p.model_id, coalesce(m.name, p.model_id) AS model_name, p.hardware_id,
       coalesce(h.name, p.hardware_id) AS hardware_name, p.engine_id,
       p.weights_dtype, p.kv_dtype, p.tp, w.context_tokens, w.users, w.hours_per_month,
       c.pool_bytes, c.seq_bytes, c.max_seqs, c.naive_max_seqs,
       CASE WHEN p.pool_basis = 'engine' THEN p.max_seqs_per_replica END AS engine_seqs,
       p.engine_starts, p.feasible AS plans_feasible, p.reason AS plans_reason,
       p.max_seqs_per_replica, p.rate_max_batch, p.batch_per_replica, p.replicas AS plans_replicas,
       p.binding_constraint, p.tpot_at_batch_s, p.prefill_floor_s, p.max_context_tokens,
       CASE WHEN c.naive_max_seqs > 0 THEN ceil(w.users / c.naive_max_seqs)::BIGINT * p.tp END AS naive_devices,
       rt.usd_per_hour AS price_usd_per_hour, rt.price_provider, rt.price_date,
       pm.item_idx AS model_idx, ph.item_idx AS hardware_idx, pw.weights_idx AS weights_idx, pw.published AS weights_published,
       pk.item_idx AS kv_idx, pt.item_idx AS tp_idx, pe.item_idx AS engine_idx,
       p.feasible, p.reason, p.binding_constraint = 'admission' AS engine_limited,
       CASE WHEN p.feasible THEN least(p.max_seqs_per_replica, p.rate_max_batch) END AS planned_seqs,
       p.replicas, p.gpus AS devices, p.usd_per_hour,
       p.usd_per_hour * w.hours_per_month AS usd_per_month,
       p.replicas * least(p.max_seqs_per_replica, p.rate_max_batch) AS users_capacity,
       CASE WHEN NOT p.feasible THEN NULL
            WHEN p.rate_max_batch IS NULL OR p.max_seqs_per_replica <= p.rate_max_batch
                THEN CASE WHEN p.pool_basis = 'engine' THEN 'engine' ELSE 'memory' END
            ELSE 'tpot' END AS binding_key,
       p.binding_constraint = 'none' AS one_replica,
       p.feasible AS meets, p.rank_list, p.rank_in_model,
       p.bandwidth_efficiency, p.compute_efficiency, p.efficiency_evidence,
       en.engine AS engine_family, coalesce(se.bandwidth_level = 'stated', FALSE) AS speed_estimated
FROM report_plans p
CROSS JOIN w
JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = p.model_id
JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = p.hardware_id
JOIN pick pe ON pe.item_kind = 'engine' AND pe.item_id = p.engine_id
JOIN report_weights pw ON pw.report_id = $report AND pw.model_id = p.model_id
                      AND pw.weights_dtype = p.weights_dtype
JOIN pick pk ON pk.item_kind = 'kv_dtype' AND pk.item_id = p.kv_dtype
JOIN pick pt ON pt.item_kind = 'tp' AND pt.item_value = p.tp
JOIN models m ON m.model_id = p.model_id
JOIN hardware h ON h.hardware_id = p.hardware_id
JOIN report_rates rt ON rt.hardware_id = p.hardware_id
JOIN engines en ON en.engine_id = p.engine_id
LEFT JOIN speed_efficiency se ON se.hardware_id = p.hardware_id AND se.engine_family = en.engine
LEFT JOIN report_capacity c
       ON c.model_id = p.model_id AND c.hardware_id = p.hardware_id AND c.engine_id = p.engine_id
      AND c.weights_dtype = p.weights_dtype AND c.kv_dtype = p.kv_dtype AND c.tp = p.tp
      AND c.context_tokens = w.context_tokens
)
SELECT o.*, bn.binding_name || CASE WHEN o.one_replica THEN '; one replica holds every user' ELSE '' END AS binding
FROM o LEFT JOIN report_binding_names bn USING (binding_key)
ORDER BY model_idx, rank_in_model
