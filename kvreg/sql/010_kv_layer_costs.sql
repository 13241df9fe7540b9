-- kv_layer_costs: what one layer of each layer group stores, per token and per sequence.
-- Grain: one row per model × layer group × kv_dtype × tp.
-- Inputs: layer_groups, state_tensors, precisions (for_kv), tp_sizes.
-- Units: token_bytes = bytes per token, per layer, per TP rank; state_bytes and
--   conv_state_bytes = bytes per sequence, per layer, per rank (constant in context);
--   window_tokens = tokens a bounded layer keeps (sliding window or attention chunk).
-- Rules (DESIGN.md "Models: layers by kind"; engine_accounting.md §2, §7):
--   full/sliding/chunked: kv_heads_per_rank × (head_dim + v_head_dim) × p, one tensor when k_eq_v;
--   kv_heads_per_rank = max(1, ceil(kv_heads / tp)) — replicated, never fractional, when tp > kv_heads;
--   mla: (kv_lora_rank + qk_rope_head_dim) × p, one latent shared by all heads, not split by TP;
--     with a sparse-attention indexer (index_head_dim, DeepSeek-V3.2 / GLM-5) also its key cache:
--     index_head_dim fp8 values + one fp32 scale per 128 values, whatever the KV dtype
--     (vLLM deepseek_v2.py Indexer: head_dim + head_dim // 128 * 4 bytes, uint8);
--   full with compress (DeepSeek-V4 compressed attention): one entry per compress tokens, so the
--     entry's bytes (plus an indexer key, index_head_dim as above) ÷ compress per token
--     (vLLM models/deepseek_v4/attention.py get_kv_cache_spec: MLAAttentionSpec tokens_per_state);
--   recurrent: no per-token bytes; state tensors in their own dtype, split along split_axis by TP;
--   shared: reuses another layer's KV, stores nothing.
--   naive_token_bytes: the textbook 2·n_kv·d_h·p per layer a naive reader applies
--   (k_eq_v ignored, MLA decompressed to kv_heads × (head_dim + v_head_dim)), divided evenly by TP.
CREATE OR REPLACE VIEW kv_layer_costs AS
WITH state AS (
    SELECT s.model_id, s.group_idx, t.tp,
           sum(CASE WHEN s.role = 'ssm'
                    THEN s.elements / s.split_dim * ceil(s.split_dim / t.tp) * p.bytes_per_element END) AS ssm_bytes,
           sum(CASE WHEN s.role = 'conv'
                    THEN s.elements / s.split_dim * ceil(s.split_dim / t.tp) * p.bytes_per_element END) AS conv_bytes
    FROM state_tensors s JOIN precisions p USING (dtype) CROSS JOIN tp_sizes t
    GROUP BY ALL
)
SELECT g.model_id, g.group_idx, g.kind, g.layer_count, g.shares_layers,
       k.dtype AS kv_dtype, t.tp,
       CASE WHEN g.kind IN ('full', 'sliding', 'chunked')
            THEN greatest(1, ceil(g.kv_heads / t.tp))::BIGINT
            WHEN g.kind = 'mla' THEN 1 END AS kv_heads_per_rank,
       CASE WHEN g.kind IN ('full', 'sliding', 'chunked')
            THEN greatest(1, ceil(g.kv_heads / t.tp))
                 * (g.head_dim + CASE WHEN g.k_eq_v THEN 0 ELSE coalesce(g.v_head_dim, g.head_dim) END)
                 * k.bytes_per_element
                 / coalesce(g.compress_tokens, 1)
                 + coalesce((g.index_head_dim + g.index_head_dim // 128 * 4) / coalesce(g.compress_tokens, 1), 0)
            WHEN g.kind = 'mla' THEN (g.kv_lora_rank + g.qk_rope_head_dim) * k.bytes_per_element
                 + coalesce(g.index_head_dim + g.index_head_dim // 128 * 4, 0)
            ELSE 0 END::DOUBLE AS token_bytes,
       CASE g.kind WHEN 'sliding' THEN g.window_tokens WHEN 'chunked' THEN g.chunk_tokens END AS window_tokens,
       coalesce(s.ssm_bytes, 0) + coalesce(s.conv_bytes, 0) AS state_bytes,
       coalesce(s.conv_bytes, 0) AS conv_state_bytes,
       CASE WHEN g.kind <> 'recurrent' AND g.kv_heads IS NOT NULL
            THEN g.kv_heads * (g.head_dim + coalesce(g.v_head_dim, g.head_dim)) * k.bytes_per_element / t.tp
            END::DOUBLE AS naive_token_bytes
FROM layer_groups g
CROSS JOIN (SELECT * FROM precisions WHERE for_kv) k
CROSS JOIN tp_sizes t
LEFT JOIN state s ON s.model_id = g.model_id AND s.group_idx = g.group_idx AND s.tp = t.tp
