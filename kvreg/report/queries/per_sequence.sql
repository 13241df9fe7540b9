-- per_sequence: the memory one sequence costs, split by how it grows, beside the naive formula.
-- Grain: one row per listed model × kv_dtype × context, at TP 1 (bytes per sequence on one device).
-- Inputs: kv_sequence_costs, report_items, report_shown_precisions (shown_precisions.sql).
-- printed: at the model's shown KV dtype: the PDF appendix prints those rows only.
-- Units: bytes per sequence; naive_seq_ratio = naive ÷ first principles.
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report)
SELECT s.model_id, s.kv_dtype, s.context_tokens, s.context_label, s.within_native,
       s.growing_bytes, s.bounded_bytes, s.state_bytes, s.seq_bytes, s.naive_seq_bytes, s.naive_seq_ratio,
       s.kv_dtype = sp.kv_dtype AS printed
FROM kv_sequence_costs s
JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = s.model_id
JOIN pick pk ON pk.item_kind = 'kv_dtype' AND pk.item_id = s.kv_dtype
JOIN pick pc ON pc.item_kind = 'context' AND pc.item_value = s.context_tokens
JOIN report_shown_precisions sp ON sp.model_id = s.model_id
WHERE s.tp = 1
ORDER BY pm.item_idx, pk.item_idx, pc.item_idx
