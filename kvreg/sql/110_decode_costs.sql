-- decode_costs: what one sequence costs a decode step, and what its prompt costs to prefill.
-- Grain: one row per model × kv_dtype × tp × context_tokens (contexts axis table).
-- Inputs: decode_coefficients, contexts; macros kv_read_bytes, decode_flop.
-- Units:
--   kv_read_bytes_per_seq    KV bytes one decode step reads for one sequence, per TP rank
--                            (bounded layers read their window, recurrent layers their state)
--   decode_flop_per_token    FLOP to decode one token at this context, whole model (all ranks)
--   attention_flop_per_token the attention part of it (decode form: MLA absorbed, decode_coefficients)
--   prefill_flop             FLOP to prefill a prompt of context_tokens: n·(2·P_active + a_prefill·n),
--                            the chapter's form (it charges every prompt token the full prompt;
--                            causal masking would halve the attention part); a_prefill the prefill form
--                            (= 4·L·d for full layers; MLA decompressed, decode_coefficients)
-- decode_costs_at(context_list) is the same at any contexts (without context_label): roofline_at reads it.
-- Source: kv-cache-chapter.txt §2.4.
CREATE OR REPLACE MACRO decode_costs_at(context_list) AS TABLE
SELECT d.model_id, d.kv_dtype, d.tp, c.context_tokens,
       kv_read_bytes(d.growing_token_bytes, d.bounded_groups, d.state_bytes, c.context_tokens) AS kv_read_bytes_per_seq,
       decode_flop(d.params_active, d.hidden_size, d.decode_attn_flop_per_context_token, d.bounded_groups,
                   d.state_flop_per_token, c.context_tokens) AS decode_flop_per_token,
       decode_flop(0, d.hidden_size, d.decode_attn_flop_per_context_token, d.bounded_groups, 0, c.context_tokens)
           AS attention_flop_per_token,
       c.context_tokens * decode_flop(d.params_active, d.hidden_size, d.prefill_attn_flop_per_context_token,
                                      d.bounded_groups, d.state_flop_per_token, c.context_tokens) AS prefill_flop
FROM decode_coefficients d
CROSS JOIN (SELECT DISTINCT unnest(context_list)::BIGINT AS context_tokens) c;

CREATE OR REPLACE VIEW decode_costs AS
SELECT d.model_id, d.kv_dtype, d.tp, d.context_tokens, c.label AS context_label,
       d.kv_read_bytes_per_seq, d.decode_flop_per_token, d.attention_flop_per_token, d.prefill_flop
FROM decode_costs_at((SELECT list(context_tokens ORDER BY context_tokens) FROM contexts)) d
JOIN contexts c ON c.context_tokens = d.context_tokens
