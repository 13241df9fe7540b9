-- chart_roofline: decode throughput ceiling against batch size for each model's primary configuration
-- (as chart_capacity: first weights dtype, first KV dtype, first engine, smallest TP whose weights fit)
-- on each listed hardware, at the workload's context, for the batches that fit the KV pool.
-- Grain: one row per model × hardware × batch.
-- Inputs: report_roofline (scope_roofline.sql: the roofline view, kvreg/sql/260_roofline.sql: batch, batch_fits, decode_tok_per_s, tok_per_s_per_seq,
--   expected_decode_tok_per_s), report_chart_capacity, report_workload (workload.sql: users resolved from a request rate), report_items.
-- Units: tokens per second (aggregate over the batch, and per sequence); expected_* NULL when the
--   hardware states no efficiency.
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
cfg AS (SELECT DISTINCT model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp FROM report_chart_capacity),
w AS (SELECT * FROM report_workload)
SELECT r.model_id, r.hardware_id, r.tp, r.batch, r.decode_tok_per_s, r.tok_per_s_per_seq,
       r.expected_decode_tok_per_s
FROM report_roofline r
JOIN cfg ON cfg.model_id = r.model_id AND cfg.hardware_id = r.hardware_id AND cfg.engine_id = r.engine_id
        AND cfg.weights_dtype = r.weights_dtype AND cfg.kv_dtype = r.kv_dtype AND cfg.tp = r.tp
CROSS JOIN w
JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = r.model_id
JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = r.hardware_id
WHERE r.context_tokens = w.context_tokens AND r.batch_fits
ORDER BY pm.item_idx, ph.item_idx, r.batch
