-- decode_coefficients: the context-free terms of one decode step of one sequence, so the
-- per-context arithmetic (macros kv_read_bytes, decode_flop) can be applied at any context,
-- on the contexts axis (decode_costs) or at a workload's own context (plans).
-- Grain: one row per model × kv_dtype × tp.
-- Inputs: kv_layer_costs, layer_groups, state_tensors, models.
-- Units: *_bytes per sequence per TP rank; FLOP per token for the whole model (all ranks).
--   growing_token_bytes   bytes each token of context adds (full and mla layers), per rank
--   bounded_groups        list of {token_bytes (layer_count × per-layer token bytes, per rank),
--                         window_tokens, layers} for sliding and chunked groups
--   state_bytes           recurrent state read and written each step (ssm + conv), per rank
--   unbounded_attn_layers layers attending to the whole context (full, mla, shared)
--   state_flop_per_token  recurrent state update: 4 FLOP per ssm state element (multiply-add to
--                         update h, multiply-add to read y = C·h: Mamba-2 recurrent form, Dao & Gu
--                         2024, arXiv:2405.21060 §3; Gated DeltaNet's delta rule costs the same
--                         order) and 2 FLOP per conv state element (one multiply-add per tap)
--   params_total, params_active, moe_experts, moe_experts_per_token, hidden_size: from models.
-- Shared layers (cross-layer KV sharing) attend over the whole context but store nothing;
-- their re-read of the reused KV is not counted in bytes (stored bytes only).
CREATE OR REPLACE VIEW decode_coefficients AS
WITH state_flop AS (
    SELECT s.model_id,
           sum(g.layer_count * CASE s.role WHEN 'ssm' THEN 4 ELSE 2 END * s.elements)::DOUBLE AS state_flop_per_token
    FROM state_tensors s JOIN layer_groups g USING (model_id, group_idx)
    GROUP BY s.model_id
),
per_model AS (
    SELECT model_id, kv_dtype, tp,
           sum(CASE WHEN window_tokens IS NULL THEN layer_count * token_bytes ELSE 0 END) AS growing_token_bytes,
           coalesce(list(struct_pack(token_bytes := layer_count * token_bytes, window_tokens := window_tokens,
                                     layers := layer_count))
                        FILTER (WHERE window_tokens IS NOT NULL),
                    []) AS bounded_groups,
           sum(layer_count * state_bytes) AS state_bytes,
           sum(CASE WHEN kind IN ('full', 'mla', 'shared') THEN layer_count ELSE 0 END) AS unbounded_attn_layers
    FROM kv_layer_costs
    GROUP BY ALL
)
SELECT p.model_id, p.kv_dtype, p.tp, p.growing_token_bytes, p.bounded_groups, p.state_bytes,
       p.unbounded_attn_layers, coalesce(f.state_flop_per_token, 0) AS state_flop_per_token,
       m.hidden_size, m.layers, m.params_total, m.params_active, m.moe_experts, m.moe_experts_per_token
FROM per_model p
JOIN models m USING (model_id)
LEFT JOIN state_flop f USING (model_id)
