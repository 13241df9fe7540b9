-- prefill_floor_s(prefill_tokens, flop_per_token, weights_read_bytes, seq_bytes, peak, bw, allreduce_s_per_token):
-- scalar macro, the TTFT floor of one prompt with no queueing: greatest(tokens · FLOP per token ÷ peak,
-- (weights read + the prompt's KV bytes) ÷ bandwidth) + tokens · all-reduce seconds per token.  NULL without a
-- FLOP figure (peak NULL).  Inputs at the replica's ceilings (tp devices): flop_per_token from decode_flop (102) at
-- the prompt's length, weights_read_bytes from params_read (103) over the prompt's tokens, seq_bytes from
-- kv_read_bytes (101).  Used by plans (275) for its TTFT check and for the longest prompt that meets the TTFT, and by
-- roofline (260) for its prefill_floor_s column.
-- Units: tokens, FLOP, bytes, FLOP/s, bytes/s, seconds.
-- Source: kv-cache-chapter.txt §2.5 (prefill is compute-bound: 2·P·n FLOP), Megatron-LM all-reduces (see roofline).
CREATE OR REPLACE MACRO prefill_floor_s(prefill_tokens, flop_per_token, weights_read_bytes, seq_bytes, peak, bw,
                                        allreduce_s_per_token) AS
    CASE WHEN peak IS NOT NULL
         THEN greatest(prefill_tokens * flop_per_token / peak, (weights_read_bytes + seq_bytes) / bw)
              + prefill_tokens * coalesce(allreduce_s_per_token, 0) END;

-- prompt_prefill_floor_s(prompt_tokens, params_total, params_active, moe_experts, moe_experts_per_token, hidden_size,
--                        attn_flop_per_context_token, bounded_groups, state_flop_per_token, state_rank_bytes,
--                        growing_rank_token_bytes, weights_bytes, tp, peak, bw, allreduce_s_per_token):
-- scalar macro, prefill_floor_s of a prompt of prompt_tokens tokens on one replica of tp devices, its inputs
-- derived from the model's coefficients at that length: decode_flop (102) with the prefill's attention FLOP per
-- context token, the weights the prompt reads (params_read, 103, as a share of weights_bytes), its KV
-- (kv_read_bytes, 101, per rank × tp).  plans (275) uses it to cost a shorter prompt than the workload's: the
-- longest prompt within ttft_s (bisection) and a one-token prompt (below which no prompt is short enough).
-- Units: tokens, FLOP, bytes, FLOP/s, bytes/s, seconds.  peak and bw: the replica's (tp devices) ceilings.
CREATE OR REPLACE MACRO prompt_prefill_floor_s(prompt_tokens, params_total, params_active, moe_experts,
                                               moe_experts_per_token, hidden_size, attn_flop_per_context_token,
                                               bounded_groups, state_flop_per_token, state_rank_bytes,
                                               growing_rank_token_bytes, weights_bytes, tp, peak, bw,
                                               allreduce_s_per_token) AS
    prefill_floor_s(prompt_tokens,
                    decode_flop(params_active, hidden_size, attn_flop_per_context_token, bounded_groups,
                                state_flop_per_token, prompt_tokens),
                    weights_bytes * params_read(params_total, params_active, moe_experts, moe_experts_per_token,
                                                prompt_tokens) / params_total,
                    kv_read_bytes(growing_rank_token_bytes, bounded_groups, state_rank_bytes, prompt_tokens) * tp,
                    peak, bw, allreduce_s_per_token);
