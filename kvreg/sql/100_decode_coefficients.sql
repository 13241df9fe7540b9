-- decode_coefficients: the context-free terms of one decode step of one sequence, so the
-- per-context arithmetic (macros kv_read_bytes, decode_flop) can be applied at any context,
-- on the contexts axis (decode_costs) or at a workload's own context (plans).
-- Grain: one row per model × kv_dtype × tp.
-- Inputs: kv_layer_costs, layer_groups, state_tensors, models, model_profile_geometry (moe_intermediate_size).
-- Units: *_bytes per sequence per TP rank; FLOP per token for the whole model (all ranks).
--   growing_token_bytes   bytes each token of context adds (full and mla layers), per rank
--   bounded_groups        list of {token_bytes (layer_count × per-layer token bytes, per rank),
--                         window_tokens, layers} for sliding and chunked groups
--   state_bytes           recurrent state read and written each step (ssm + conv), per rank
--   unbounded_attn_layers layers attending to the whole context (full, mla, shared)
--   decode_attn_flop_per_context_token   FLOP one DECODED token spends per token of context it attends to,
--                         summed over those layers (whole model): QKᵀ + PV, 2 FLOP per multiply-add, per layer
--                           full, shared: 4·d_model (2·d for QKᵀ, 2·d for PV; the chapter's form, d_model
--                                 standing for n_heads·d_head)
--                           mla:  2·n_q·(kv_lora_rank + qk_rope) + 2·n_q·kv_lora_rank — the ABSORBED form engines
--                                 decode with: q_nope is multiplied into the latent by W_UK (torch.bmm with W_UK_T)
--                                 and each of the n_q heads attends over the 512 + 64 latent (MQA), the output mixed
--                                 in the 512-wide latent and brought out by W_UV (vLLM 0.11.0 v1/attention/backends/
--                                 mla/common.py _forward_decode :1620, bmm :1747, _v_up_proj :1095; 0.19.0
--                                 model_executor/layers/attention/mla_attention.py forward_impl :600-664).  The two
--                                 absorbed matmuls are kv_b_proj's weights used once per token: inside 2·P_active
--   prefill_attn_flop_per_context_token  the same for a PREFILLED token: full, shared as decode; mla runs
--                           decompressed: kv_b_proj up-projects every token's latent to n_q × (qk_nope + v)
--                           (a GEMM of kv_b_proj's weights, inside 2·P_active), then multi-head attention with
--                           q·k over head_dim = qk_nope + qk_rope (192) and v over v_head_dim (128):
--                           2·n_q·head_dim + 2·n_q·v_head_dim (vLLM 0.11.0 mla/common.py _forward_prefill :1563,
--                           kv_b_proj :1577, flash-attention varlen causal=True :1206; 0.19.0 mla_attention.py
--                           forward_mha :2650, kv_b_proj :2673).  n_q = the model's attention_heads.
--   state_flop_per_token  recurrent state update: 4 FLOP per ssm state element (multiply-add to
--                         update h, multiply-add to read y = C·h: Mamba-2 recurrent form, Dao & Gu
--                         2024, arXiv:2405.21060 §3; Gated DeltaNet's delta rule costs the same
--                         order) and 2 FLOP per conv state element (one multiply-add per tap)
--   params_total, params_active, moe_experts, moe_experts_per_token, hidden_size: from models.
--   moe_activation_bytes_per_token  bytes the routed experts' activations move through HBM for ONE token (decoded
--                         or prefilled), per TP rank; 0 for dense models or without moe.intermediate_size.  A
--                         grouped-expert step runs as separate kernels with its intermediates in memory between
--                         them (vLLM 0.19.0 model_executor/layers/fused_moe/fused_moe.py fused_experts_impl:
--                         cache1/cache3 :1725, cache2 :1737 allocated in the activations' dtype; w1 GEMM :1825
--                         gathers each routed copy's input row (H) and writes 2I; the gated activation :1849
--                         reads 2I and writes I; the w2 GEMM :1865 reads I and writes H; moe_sum :1889 reads the
--                         k copies back), so per routed copy per MoE layer (6·I/tp + 3·H) elements: I is split
--                         over TP ranks, H is whole on every rank.  × k copies × L_moe MoE layers × activation
--                         bytes (2: bf16/fp16 hidden states; 4 for fp32 models).  L_moe = e ÷ (3·H·I): e the
--                         parameters of one routed expert summed over the MoE layers, (P_total − P_active) ÷
--                         (E − k), and a gated expert holds 3·H·I (gate, up, down) per layer — 48 for
--                         Qwen3-30B-A3B, 32 Mixtral-8x7B, 58 DeepSeek-R1 (61 layers, first 3 dense), 24 gpt-oss-20b.
--                         The weights are not in it (params_read); the quantisation of the GEMM inputs (fp8 I
--                         after the activation, :1853) is left out, so it is a lower bound on the traffic.
--                         These bytes are why small-expert MoE steps fall short of their FLOP roof: per routed
--                         copy a Qwen3-30B-A3B layer does 2·3·H·I = 9.4 MFLOP on 21.5 KB (439 FLOP/byte, under
--                         B200's NVFP4 ridge of 1,169), a Mixtral layer 352 MFLOP on 197 KB (1,792 FLOP/byte).
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
),
-- per attended context token, per layer kind (model geometry, not per TP rank or kv dtype)
attn_flop AS (
    SELECT g.model_id,
           sum(g.layer_count * CASE WHEN g.kind = 'mla' AND g.kv_lora_rank IS NOT NULL
                                    THEN 2 * m.attention_heads * (g.kv_lora_rank + g.qk_rope_head_dim)
                                         + 2 * m.attention_heads * g.kv_lora_rank
                                    ELSE 4 * m.hidden_size END)::DOUBLE AS decode_attn_flop_per_context_token,
           sum(g.layer_count * CASE WHEN g.kind = 'mla' AND g.head_dim IS NOT NULL AND g.v_head_dim IS NOT NULL
                                    THEN 2 * m.attention_heads * (g.head_dim + g.v_head_dim)
                                    ELSE 4 * m.hidden_size END)::DOUBLE AS prefill_attn_flop_per_context_token
    FROM layer_groups g JOIN models m USING (model_id)
    WHERE g.kind IN ('full', 'mla', 'shared')
    GROUP BY g.model_id
)
SELECT p.model_id, p.kv_dtype, p.tp, p.growing_token_bytes, p.bounded_groups, p.state_bytes,
       p.unbounded_attn_layers,
       coalesce(a.decode_attn_flop_per_context_token, 0) AS decode_attn_flop_per_context_token,
       coalesce(a.prefill_attn_flop_per_context_token, 0) AS prefill_attn_flop_per_context_token,
       coalesce(f.state_flop_per_token, 0) AS state_flop_per_token,
       m.hidden_size, m.layers, m.params_total, m.params_active, m.moe_experts, m.moe_experts_per_token,
       -- routed-expert activations (header): act bytes × k × L_moe × (6·I/tp + 3·H), L_moe = e ÷ (3·H·I)
       CASE WHEN m.moe_experts > m.moe_experts_per_token AND g.moe_intermediate_size IS NOT NULL
            THEN (CASE WHEN m.dtype = 'fp32' THEN 4 ELSE 2 END) * m.moe_experts_per_token
                 * (m.params_total - m.params_active) / (m.moe_experts - m.moe_experts_per_token)
                 / (3.0 * m.hidden_size * g.moe_intermediate_size)
                 * (6.0 * g.moe_intermediate_size / p.tp + 3.0 * m.hidden_size)
            ELSE 0.0 END AS moe_activation_bytes_per_token
FROM per_model p
JOIN models m USING (model_id)
LEFT JOIN model_profile_geometry g USING (model_id)
LEFT JOIN state_flop f USING (model_id)
LEFT JOIN attn_flop a USING (model_id)
