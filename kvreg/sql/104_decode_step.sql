-- decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch, seq_bytes,
--               flop_per_token, bw, peak, allreduce_s_per_token): scalar macro, the time of ONE decode step of
-- a batch of `batch` sequences on one replica — the one definition `plans` costs every candidate batch with.
--   memory  (W·params_read(B)/P_total + B·kv) ÷ bw    the weights this batch actually reads (MoE: the experts
--                                                     B tokens hit, params_read) plus every sequence's KV
--   compute B·f ÷ peak                                f = decode FLOP per token at the context
--   + B·allreduce                                     the tensor-parallel all-reduces of B tokens (0 at tp 1)
-- bw and peak are the replica's (tp × device) rates, already scaled by the efficiency the caller uses;
-- NULL peak leaves the compute roof out.  Units: bytes, bytes/s, FLOP, FLOP/s, seconds.
-- Source: kv-cache-chapter.txt §2.4 (step = (P·p + B·s·k) ÷ BW); params_read (103) for the MoE read.
CREATE OR REPLACE MACRO decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch,
                                      seq_bytes, flop_per_token, bw, peak, allreduce_s_per_token) AS
    greatest((weights_bytes * params_read(params_total, params_active, experts, experts_per_token, batch)
                  / params_total + batch * seq_bytes) / bw,
             coalesce(batch * flop_per_token / peak, 0))
    + batch * coalesce(allreduce_s_per_token, 0)
