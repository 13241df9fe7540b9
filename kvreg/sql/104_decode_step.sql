-- expected_step_s(memory_s, compute_s, allreduce_s, bandwidth_eff, compute_eff): scalar macro, the time of one
-- kernel class (or of a whole step taken as one class) once its two roofs are scaled by what real engines reach;
-- expected_class_step_s (below) adds the classes of a step with it:
--   greatest((memory_s + allreduce_s) ÷ bandwidth_eff, (compute_s + allreduce_s) ÷ compute_eff)
-- The all-reduce is serial with the step and reaches the same share of its link as the binding roof of its
-- own (ASSUMPTION, checked against the throughput measurements: 252_speed_fit).  A NULL compute_s (no FLOP
-- figure) leaves the compute roof out; a NULL compute_eff counts 1.0; NULL allreduce_s counts 0.
-- With both efficiencies 1 it is the ceiling: greatest(memory, compute) + all-reduce.  Units: seconds.
CREATE OR REPLACE MACRO expected_step_s(memory_s, compute_s, allreduce_s, bandwidth_eff, compute_eff) AS
    greatest((memory_s + coalesce(allreduce_s, 0)) / bandwidth_eff,
             (compute_s + coalesce(allreduce_s, 0)) / coalesce(compute_eff, 1));

-- expected_class_step_s(gemm_memory_s, gemm_compute_s, expert_memory_s, expert_compute_s, attention_memory_s,
--                       attention_compute_s, allreduce_s, bandwidth_eff, compute_eff): scalar macro, the time of a step
-- (or of one output token) whose work runs as KERNEL CLASSES one after the other, each class at its own roof —
-- the ONE definition the predictions (speed_calibration), the fit (speed_fit), roofline's expected_* columns and
-- plans (decode_step_s) share:
--   expected_step_s(gemm_memory, gemm_compute, allreduce)      dense GEMMs (projections, dense and shared FFNs,
--                                                              lm_head); the all-reduces follow their outputs
-- + greatest(expert_memory ÷ bandwidth_eff, expert_compute ÷ compute_eff)   grouped routed-expert GEMMs (MoE):
--                                                              the experts hit and the routed activations
-- + greatest(attention_memory ÷ bandwidth_eff, attention_compute ÷ compute_eff)  attention over the KV (and
--                                                              recurrent state updates)
-- Why classes ADD: an engine step launches these as separate kernels on one stream (vLLM, SGLang and TensorRT-LLM
-- alike: the linear layers' GEMMs, the fused-MoE kernels, the attention backend), so a compute-bound GEMM cannot
-- hide a memory-bound KV read or an activation-bound expert step — one greatest() over the step's totals lets it.
-- Each class still takes the greater of its two roofs.  Dense models have no expert class (0 + 0).
-- With both efficiencies 1 it is a ceiling (251_throughput_ceilings' ceiling_tok_per_s).  NULL compute_eff counts
-- 1.0; NULL allreduce_s counts 0.  Units: seconds.
CREATE OR REPLACE MACRO expected_class_step_s(gemm_memory_s, gemm_compute_s, expert_memory_s, expert_compute_s,
                                              attention_memory_s, attention_compute_s, allreduce_s, bandwidth_eff,
                                              compute_eff) AS
    expected_step_s(gemm_memory_s, gemm_compute_s, allreduce_s, bandwidth_eff, compute_eff)
    + greatest(expert_memory_s / bandwidth_eff, expert_compute_s / coalesce(compute_eff, 1))
    + greatest(attention_memory_s / bandwidth_eff, attention_compute_s / coalesce(compute_eff, 1));

-- expected_mixed_step_s(prompt_step_share, gemm_memory_s, gemm_compute_s, gemm_compute_prompt_s, expert_memory_s,
--                       expert_memory_prompt_s, expert_compute_s, expert_compute_prompt_s, attention_memory_s,
--                       attention_compute_s, attention_compute_prompt_s, allreduce_s, allreduce_prompt_s,
--                       bandwidth_eff, compute_eff): scalar macro, the time per output token of a served workload whose
-- prompts ride on SOME decode steps, not on all (issue 13, speed10).  The class columns (251) are per output token
-- over every token a request brings (its decode token and its share of the prompt: 1 + input/output); the
-- *_prompt_s arguments are the prompt's part of each, the rest is the decode part.  A share f of the decode steps
-- carries a prompt chunk (251 prompt_step_share), the others decode only:
--   expected_class_step_s((1 − f) × decode parts)                      the decode-only steps
-- + expected_class_step_s(f × decode parts + prompt parts)             the steps that carry the prompts' chunks
-- Each step takes the greater of its roofs, so a decode-only step waits on its weight and KV reads and a prompt
-- step on its FLOPs: near the ridge this is slower than one greatest() over the average step, which let the
-- prompts' FLOPs hide under decode reads that in fact run in other steps.  f = 1 (a chunk in every step) is
-- expected_class_step_s over the totals, as before.  The memory terms of the weights and the KV reads are
-- per decode step and do not grow in a prompt step (the weights are read once a step; the chunk's own KV is
-- written, not re-read, ASSUMPTION); the routed activations (expert_memory_prompt_s) and the all-reduce
-- (allreduce_prompt_s) are per token and go with the prompt.  Homogeneous of degree one, like
-- expected_class_step_s: with both efficiencies e it is the ceiling's time ÷ e.  NULL allreduce counts 0.
-- Units: seconds per output token.
CREATE OR REPLACE MACRO expected_mixed_step_s(prompt_step_share, gemm_memory_s, gemm_compute_s, gemm_compute_prompt_s,
                                              expert_memory_s, expert_memory_prompt_s, expert_compute_s,
                                              expert_compute_prompt_s, attention_memory_s, attention_compute_s,
                                              attention_compute_prompt_s, allreduce_s, allreduce_prompt_s,
                                              bandwidth_eff, compute_eff) AS
    expected_class_step_s((1 - prompt_step_share) * gemm_memory_s,
                          (1 - prompt_step_share) * (gemm_compute_s - gemm_compute_prompt_s),
                          (1 - prompt_step_share) * (expert_memory_s - expert_memory_prompt_s),
                          (1 - prompt_step_share) * (expert_compute_s - expert_compute_prompt_s),
                          (1 - prompt_step_share) * attention_memory_s,
                          (1 - prompt_step_share) * (attention_compute_s - attention_compute_prompt_s),
                          (1 - prompt_step_share) * (coalesce(allreduce_s, 0) - coalesce(allreduce_prompt_s, 0)),
                          bandwidth_eff, compute_eff)
    + expected_class_step_s(prompt_step_share * gemm_memory_s,
                            prompt_step_share * (gemm_compute_s - gemm_compute_prompt_s) + gemm_compute_prompt_s,
                            prompt_step_share * (expert_memory_s - expert_memory_prompt_s) + expert_memory_prompt_s,
                            prompt_step_share * (expert_compute_s - expert_compute_prompt_s) + expert_compute_prompt_s,
                            prompt_step_share * attention_memory_s,
                            prompt_step_share * (attention_compute_s - attention_compute_prompt_s)
                                + attention_compute_prompt_s,
                            prompt_step_share * (coalesce(allreduce_s, 0) - coalesce(allreduce_prompt_s, 0))
                                + coalesce(allreduce_prompt_s, 0),
                            bandwidth_eff, compute_eff);

-- expert_params(params_total, params_active, experts, experts_per_token): scalar macro, the parameters of ONE
-- routed expert summed over the MoE layers, e = (P_total − P_active) ÷ (E − k) (as params_read, 103); 0 for a
-- dense model.  Routed experts hold E·e of P_total, the k a token uses k·e of P_active.  Units: parameters.
CREATE OR REPLACE MACRO expert_params(params_total, params_active, experts, experts_per_token) AS
    CASE WHEN experts IS NULL OR experts <= experts_per_token THEN 0.0
         ELSE (params_total - params_active) / (experts - experts_per_token) END;

-- decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch,
--               kv_read_bytes_per_seq, flop_per_token, bw, peak, allreduce_s_per_token, bandwidth_eff, compute_eff,
--               moe_act_bytes, host_s_per_seq := 0):
-- scalar macro, the expected time of ONE decode step of `batch` sequences on one replica — what `plans` costs
-- every candidate batch with, and roofline's expected_* columns — by kernel class (expected_class_step_s):
--   dense GEMMs  W·(P_total − E·e)/P_total ÷ bw, B·2·(P_active − k·e) ÷ peak   the non-routed weights, read once
--                                                per step; one multiply-add per active non-routed parameter
--   expert GEMMs (W·(params_read(B) − (P_total − E·e))/P_total + B·moe_act) ÷ bw, B·2·k·e ÷ peak   the experts
--                                                B tokens hit (params_read, uniform routing) and each token's
--                                                routed activations (decode_coefficients.moe_activation_bytes_per_
--                                                token × tp: moe_act, whole replica; 0 dense)
--   attention    B·kv ÷ bw, B·(f − 2·P_active) ÷ peak   every sequence's KV; the rest of f (decode FLOP per token
--                                                at the context: QKᵀ, value mix, recurrent updates)
--   all-reduce   B·allreduce_s_per_token         the tensor-parallel all-reduces of B tokens (0 at tp 1)
--   host         + B·host_s_per_seq              the serving process's per-sequence work each step (input
--                                                preparation, sampling, stop checks: 252 speed_seq_step_fit, the
--                                                engine family's fitted seconds per sequence per step), serial with
--                                                the kernels; 0 when not given (a ceiling)
--   (bw, peak: the replica's ceilings, tp × device; e = expert_params).  For a dense model whose GEMMs and
--   attention are both memory-bound it is (W + B·kv) ÷ (bw·eff) + B·allreduce ÷ eff, the chapter's step.
-- NULL peak leaves the compute roofs out; NULL moe_act counts 0.  Units: bytes, bytes/s, FLOP, FLOP/s, seconds.
-- Source: kv-cache-chapter.txt §2.4 (step = (P·p + B·s·k) ÷ BW); params_read (103) for the MoE read.
CREATE OR REPLACE MACRO decode_step_s(weights_bytes, params_total, params_active, experts, experts_per_token, batch,
                                      kv_read_bytes_per_seq, flop_per_token, bw, peak, allreduce_s_per_token,
                                      bandwidth_eff, compute_eff, moe_act_bytes, host_s_per_seq := 0) AS
    expected_class_step_s(
        weights_bytes * (params_total - coalesce(experts, 0)
                         * expert_params(params_total, params_active, experts, experts_per_token))
            / params_total / bw,
        batch * 2 * (params_active - coalesce(experts_per_token, 0)
                     * expert_params(params_total, params_active, experts, experts_per_token)) / peak,
        (weights_bytes * (params_read(params_total, params_active, experts, experts_per_token, batch)
                          - (params_total - coalesce(experts, 0)
                             * expert_params(params_total, params_active, experts, experts_per_token)))
             / params_total
         + batch * coalesce(moe_act_bytes, 0)) / bw,
        batch * 2 * coalesce(experts_per_token, 0)
            * expert_params(params_total, params_active, experts, experts_per_token) / peak,
        batch * kv_read_bytes_per_seq / bw,
        batch * (flop_per_token - 2 * params_active) / peak,
        batch * allreduce_s_per_token,
        bandwidth_eff, compute_eff)
    + batch * coalesce(host_s_per_seq, 0)
