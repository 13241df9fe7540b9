-- decode_flop(params_active, hidden_size, unbounded_attn_layers, bounded_groups, state_flop, context_tokens):
-- scalar macro, FLOP to decode one token of one sequence at a context (whole model, all ranks).
--   2·P_active                         one multiply-add per active parameter (projections, FFN, experts used)
-- + 4·d_model·Σ_attn_layers s_eff      QKᵀ (2·d·s) and the value mix (2·d·s) per attention layer,
--                                       s_eff = s for full/mla/shared, min(s, window) for sliding/chunked
-- + state_flop                          recurrent layers: their state update, independent of s
-- Source: kv-cache-chapter.txt §2.4 (FLOPs per token = 2P + 4·L·d_model·s).  d_model stands for
-- n_heads·d_head, exact for Llama-style models, an approximation where the query width differs.
CREATE OR REPLACE MACRO decode_flop(params_active, hidden_size, unbounded_attn_layers, bounded_groups, state_flop,
                                    context_tokens) AS
    2 * params_active
    + 4 * hidden_size * (unbounded_attn_layers * context_tokens
                         + coalesce(list_sum(list_transform(bounded_groups,
                                             lambda g: g.layers * least(context_tokens, g.window_tokens))), 0))
    + state_flop
