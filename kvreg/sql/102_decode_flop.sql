-- decode_flop(params_active, hidden_size, attn_flop_per_context_token, bounded_groups, state_flop, context_tokens):
-- scalar macro, FLOP one token spends at a context (whole model, all ranks).
--   2·P_active                         one multiply-add per active parameter (projections, FFN, experts used)
-- + a·s                                 attention over the whole context, a = attn_flop_per_context_token of
--                                       decode_coefficients: decode_attn_… for a decoded token, prefill_attn_… for a
--                                       prefilled one (they differ for MLA only: absorbed vs decompressed)
-- + 4·d_model·Σ_bounded layers min(s, window)   sliding/chunked layers: QKᵀ (2·d·s) and the value mix (2·d·s)
-- + state_flop                          recurrent layers: their state update, independent of s
-- Source: kv-cache-chapter.txt §2.4 (FLOPs per token = 2P + 4·L·d_model·s).  d_model stands for
-- n_heads·d_head, exact for Llama-style models, an approximation where the query width differs; MLA's
-- per-token terms are in 100_decode_coefficients.sql with their vLLM lines.
CREATE OR REPLACE MACRO decode_flop(params_active, hidden_size, attn_flop_per_context_token, bounded_groups,
                                    state_flop, context_tokens) AS
    2 * params_active
    + attn_flop_per_context_token * context_tokens
    + 4 * hidden_size * coalesce(list_sum(list_transform(bounded_groups,
                                          lambda g: g.layers * least(context_tokens, g.window_tokens))), 0)
    + state_flop
