-- bandwidth_efficiency_for_batch(weights_bytes, params_total, params_active, experts, experts_per_token, batch,
--   kv_read_bytes_per_seq, flop_per_token, bw, peak, allreduce_s_per_token, compute_eff, moe_act_bytes, tpot_s,
--   host_s_per_seq := 0 (the host's seconds per sequence per step, plans.host_s_per_seq: decode_step_s's)):
--   scalar macro,
-- the LOWEST bandwidth efficiency at which a decode step of `batch` sequences on one replica still fits tpot_s:
-- the inverse of plans' rate limit (275: the largest batch whose decode_step_s ≤ tpot_s), so a plan can say how far
-- its bandwidth efficiency may fall before that batch no longer fits (more replicas), or must rise for a larger one.
-- Grain: scalar, one configuration (the plans row's decode-step inputs) and one batch.
-- Inputs: decode_step_s (104), called with the replica's ceilings bw and peak (plans.ceiling_bw, ceiling_peak), the
--   row's compute efficiency kept and the bandwidth efficiency searched.
-- Units: bytes, FLOP, bytes/s, FLOP/s, seconds in; a fraction of the bandwidth ceiling out, in (0, 1].
--   NULL when batch < 1, or when even the full bandwidth (efficiency 1: the ceiling) misses tpot_s — the compute roofs
--   or the all-reduce alone are too slow, and no bandwidth efficiency mends that.
-- Method: decode_step_s falls as the bandwidth efficiency rises (each kernel class is greatest(memory ÷ eff,
--   compute ÷ compute_eff)), so the threshold is found by bisection on (0, 1]: 30 halvings, within 1e-9 (hi stays
--   feasible).  For a dense model whose classes are all memory-bound it is step(batch at efficiency 1) ÷ tpot_s
--   exactly (the chapter's step scales as 1 ÷ eff), which tests/test_plan_levers.py checks by hand.
CREATE OR REPLACE MACRO bandwidth_efficiency_for_batch(weights_bytes, params_total, params_active, experts,
                                                       experts_per_token, batch, kv_read_bytes_per_seq,
                                                       flop_per_token, bw, peak, allreduce_s_per_token, compute_eff,
                                                       moe_act_bytes, tpot_s, host_s_per_seq := 0) AS
    CASE WHEN batch IS NULL OR batch < 1 THEN NULL
         WHEN decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch,
                            kv_read_bytes_per_seq, flop_per_token, bw, peak, allreduce_s_per_token, 1.0, compute_eff,
                            moe_act_bytes, host_s_per_seq := host_s_per_seq) > tpot_s
         THEN NULL
         ELSE list_reduce(range(30), lambda acc, i:
                  CASE WHEN decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token,
                                          batch, kv_read_bytes_per_seq, flop_per_token, bw, peak, allreduce_s_per_token,
                                          (acc.lo + acc.hi) / 2, compute_eff, moe_act_bytes,
                                          host_s_per_seq := host_s_per_seq) <= tpot_s
                       THEN struct_pack(lo := acc.lo, hi := (acc.lo + acc.hi) / 2)
                       ELSE struct_pack(lo := (acc.lo + acc.hi) / 2, hi := acc.hi) END,
                  struct_pack(lo := 0.0::DOUBLE, hi := 1.0::DOUBLE)).hi
    END
