-- expected_step_s(memory_s, compute_s, allreduce_s, bandwidth_eff, compute_eff): scalar macro, the time of a step
-- (or of one output token) once the roofs are scaled by what real engines reach — the ONE definition the
-- predictions (speed_calibration), roofline's expected_* columns and plans share:
--   greatest((memory_s + allreduce_s) ÷ bandwidth_eff, (compute_s + allreduce_s) ÷ compute_eff)
-- The all-reduce is serial with the step and reaches the same share of its link as the binding roof of its
-- own (ASSUMPTION, checked against the throughput measurements: 252_speed_fit).  A NULL compute_s (no FLOP
-- figure) leaves the compute roof out; a NULL compute_eff counts 1.0; NULL allreduce_s counts 0.
-- With both efficiencies 1 it is the ceiling: greatest(memory, compute) + all-reduce.  Units: seconds.
CREATE OR REPLACE MACRO expected_step_s(memory_s, compute_s, allreduce_s, bandwidth_eff, compute_eff) AS
    greatest((memory_s + coalesce(allreduce_s, 0)) / bandwidth_eff,
             (compute_s + coalesce(allreduce_s, 0)) / coalesce(compute_eff, 1));

-- decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch, seq_bytes,
--               flop_per_token, bw, peak, allreduce_s_per_token, bandwidth_eff, compute_eff): scalar macro, the
-- expected time of ONE decode step of `batch` sequences on one replica — what `plans` costs every candidate
-- batch with:
--   memory  (W·params_read(B)/P_total + B·kv) ÷ bw    the weights this batch actually reads (MoE: the experts
--                                                     B tokens hit, params_read) plus every sequence's KV
--   compute B·f ÷ peak                                f = decode FLOP per token at the context
--   all-reduce B·allreduce_s_per_token                the tensor-parallel all-reduces of B tokens (0 at tp 1)
--   combined by expected_step_s at the given efficiencies (bw, peak: the replica's ceilings, tp × device).
-- NULL peak leaves the compute roof out.  Units: bytes, bytes/s, FLOP, FLOP/s, seconds.
-- Source: kv-cache-chapter.txt §2.4 (step = (P·p + B·s·k) ÷ BW); params_read (103) for the MoE read.
CREATE OR REPLACE MACRO decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch,
                                      seq_bytes, flop_per_token, bw, peak, allreduce_s_per_token, bandwidth_eff,
                                      compute_eff) AS
    expected_step_s((weights_bytes * params_read(params_total, params_active, experts, experts_per_token, batch)
                         / params_total + batch * seq_bytes) / bw,
                    batch * flop_per_token / peak,
                    batch * allreduce_s_per_token,
                    bandwidth_eff, compute_eff)
