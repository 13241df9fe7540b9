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
