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

-- expected_split_step_s(linear_memory_s, linear_compute_s, attention_memory_s, attention_compute_s, allreduce_s,
--                       bandwidth_eff, compute_eff): scalar macro, the expected time when the step's two kernel
-- classes run one after the other (251_throughput_ceilings: GEMMs, then attention), each at its own roof:
--   expected_step_s(linear_memory, linear_compute, allreduce) + expected_step_s(attention_memory, attention_compute, 0)
-- (the all-reduces follow the linear layers' output projections, so they ride with that class).  With one
-- efficiency e for both roofs it is (greatest(linear) + greatest(attention) + allreduce) ÷ e.  Units: seconds.
CREATE OR REPLACE MACRO expected_split_step_s(linear_memory_s, linear_compute_s, attention_memory_s,
                                              attention_compute_s, allreduce_s, bandwidth_eff, compute_eff) AS
    expected_step_s(linear_memory_s, linear_compute_s, allreduce_s, bandwidth_eff, compute_eff)
    + expected_step_s(attention_memory_s, attention_compute_s, 0, bandwidth_eff, compute_eff);

-- decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch, seq_bytes,
--               flop_per_token, bw, peak, allreduce_s_per_token, bandwidth_eff, compute_eff): scalar macro, the
-- expected time of ONE decode step of `batch` sequences on one replica — what `plans` costs every candidate
-- batch with:
--   linear    W·params_read(B)/P_total ÷ bw, B·2·P_active ÷ peak   the weights this batch actually reads (MoE:
--                                              the experts B tokens hit, params_read); one multiply-add per active
--                                              parameter per token
--   attention B·kv ÷ bw, B·(f − 2·P_active) ÷ peak   every sequence's KV; the rest of f (decode FLOP per token at
--                                              the context: QKᵀ, value mix, recurrent updates)
--   all-reduce B·allreduce_s_per_token         the tensor-parallel all-reduces of B tokens (0 at tp 1)
--   combined by expected_split_step_s at the given efficiencies (bw, peak: the replica's ceilings, tp × device):
--   the two kernel classes run one after the other, each at its own roof (251_throughput_ceilings).
-- NULL peak leaves the compute roof out.  Units: bytes, bytes/s, FLOP, FLOP/s, seconds.
-- Source: kv-cache-chapter.txt §2.4 (step = (P·p + B·s·k) ÷ BW); params_read (103) for the MoE read.
CREATE OR REPLACE MACRO decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch,
                                      seq_bytes, flop_per_token, bw, peak, allreduce_s_per_token, bandwidth_eff,
                                      compute_eff) AS
    expected_split_step_s(weights_bytes * params_read(params_total, params_active, experts, experts_per_token, batch)
                              / params_total / bw,
                          batch * 2 * params_active / peak,
                          batch * seq_bytes / bw,
                          batch * (flop_per_token - 2 * params_active) / peak,
                          batch * allreduce_s_per_token,
                          bandwidth_eff, compute_eff)
