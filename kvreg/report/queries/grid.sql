-- grid: the capacity rows a report asks for, naive vs first principles vs engine, in the report's order.
-- Grain: one row per model × context × hardware × weights_dtype × kv_dtype × tp × engine listed by report $report.
-- Inputs: report_capacity (scope_capacity.sql), report_items, report_weights (kvreg/sql/031: the per-model weight
--   precisions, weights_idx their order, published: FALSE = derived weights, which the tables mark), models, hardware, report_engine_admission (engine_capacity or empty),
--   report_shown_precisions (shown_precisions.sql).
-- printed: the row is the model's shown configuration family (the recommendation's weights dtype, KV dtype and engine,
--   else the report's first; every hardware and TP): the PDF appendix prints those rows only, the HTML every row
--   (weights_printed: the weights dtype and engine alone, for the per-device budget table).
-- max_seqs here is capacity.first_principles_seqs (per-kind arithmetic on the same pool), beside the engine's
--   admitted_seqs; capacity.max_seqs is the engine figure for an engine release with accounting data.
-- Units: bytes per device, sequences; ratios are plain numbers (naive ÷ first principles,
--   first principles ÷ engine-admitted).
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report)
SELECT c.model_id, coalesce(m.name, c.model_id) AS model_name, c.hardware_id,
       coalesce(h.name, c.hardware_id) AS hardware_name, c.engine_id, c.weights_dtype, c.kv_dtype, c.tp,
       c.context_tokens, c.context_label, c.within_native,
       c.seq_bytes, c.naive_seq_bytes, c.pool_bytes, c.naive_pool_bytes, c.weights_bytes_per_rank, c.weights_basis,
       c.claimed_bytes, c.reserve_bytes, c.resident_bytes, c.usable_bytes,
       c.first_principles_seqs AS max_seqs, c.naive_max_seqs, c.naive_max_seqs / nullif(c.first_principles_seqs, 0) AS naive_ratio,
       c.fits, c.pool_bytes > 0 AS weights_fit, c.kv_pool_share,
       e.admitted_seqs AS engine_seqs, e.starts AS engine_starts,
       e.request_len_capped AS engine_request_len_capped, e.logged_kv_tokens,
       c.first_principles_seqs / nullif(e.admitted_seqs, 0) AS engine_ratio,
       c.weights_dtype = sp.weights_dtype AND c.kv_dtype = sp.kv_dtype AND c.engine_id = sp.engine_id AS printed,
       c.weights_dtype = sp.weights_dtype AND c.engine_id = sp.engine_id AS weights_printed,
       pm.item_idx AS model_idx, pc.item_idx AS context_idx, ph.item_idx AS hardware_idx,
       pw.weights_idx AS weights_idx, pw.published AS weights_published, pk.item_idx AS kv_idx, pt.item_idx AS tp_idx, pe.item_idx AS engine_idx
FROM report_capacity c
JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = c.model_id
JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = c.hardware_id
JOIN pick pe ON pe.item_kind = 'engine' AND pe.item_id = c.engine_id
JOIN report_weights pw ON pw.report_id = $report AND pw.model_id = c.model_id
                      AND pw.weights_dtype = c.weights_dtype
JOIN pick pk ON pk.item_kind = 'kv_dtype' AND pk.item_id = c.kv_dtype
JOIN pick pt ON pt.item_kind = 'tp' AND pt.item_value = c.tp
JOIN pick pc ON pc.item_kind = 'context' AND pc.item_value = c.context_tokens
JOIN models m ON m.model_id = c.model_id
JOIN hardware h ON h.hardware_id = c.hardware_id
JOIN report_shown_precisions sp ON sp.model_id = c.model_id
LEFT JOIN report_engine_admission e
       ON e.model_id = c.model_id AND e.hardware_id = c.hardware_id AND e.engine_id = c.engine_id
      AND e.weights_dtype = c.weights_dtype AND e.kv_dtype = c.kv_dtype AND e.tp = c.tp
      AND e.context_tokens = c.context_tokens
ORDER BY pm.item_idx, pc.item_idx, ph.item_idx, pw.weights_idx, pk.item_idx, pt.item_idx, pe.item_idx
