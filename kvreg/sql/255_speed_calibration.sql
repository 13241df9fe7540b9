-- speed_calibration: every throughput measurement beside kvreg's prediction of it, in three modes:
--   'in-sample'             efficiencies fitted on every source (what roofline and plans use)
--   'leave-one-source-out'  efficiencies fitted WITHOUT the measurement's own source (speed_efficiency_by_holdout
--                           at holdout = source_id): how well kvreg predicts a source it has not seen
--   'leave-one-architecture-out'  fitted without every row of the measurement's architecture family (holdout
--                           'architecture:' || architecture): how well kvreg predicts a generation it has not seen,
--                           i.e. an unmeasured device (MI355X, a new GPU) — its rows take the stated figure or the
--                           engine / all levels, exactly as such a device does in-sample
-- Grain: one row per mode × throughput measurement.
-- Inputs: throughput_ceilings, speed_efficiency_by_holdout (efficiencies and the host roof).
-- Units: tokens per second, seconds, fractions.
--   predicted_tok_per_s   1 ÷ greatest(expected_mixed_step_s(the kernel classes' roofs, decode-only and prompt steps
--                                    apart, allreduce_s, efficiencies),
--                                    host_request_s ÷ output_tokens):
--                         the ceiling's time per output token, each kernel class at its roofs and the all-reduce
--                         serial with the dense GEMMs, scaled by each roof's efficiency (104; 251; 252), plus the
--                         host's time per sequence per step (host_seq_step_s, 252 speed_seq_step_fit: one sequence's
--                         share of a step's host work, i.e. per output token, on the step's critical path), or the engine's host time
--                         per request spread over the request's output tokens when that is longer (the host roof,
--                         252_speed_fit roof host: device work and host work overlap, the slower one sets the pace)
--   host_request_s, host_level, host_n: the host roof used and its evidence; host_bound: it set the prediction
--   error                 predicted ÷ measured − 1 (signed: + over-predicts); abs_error its magnitude
--   predicted_step_s      batch ÷ predicted_tok_per_s: one engine step of the whole batch (each sequence's TPOT
--                         when prompts ride along with decode steps); tpot_error against tpot_p50_s where published
--   bandwidth_basis, bandwidth_level, bandwidth_n, compute_*: the evidence behind the efficiencies used
--   carried_bandwidth_efficiency, carried_bandwidth_level, carried_predicted_tok_per_s, carried_error: the same
--                         prediction with the bandwidth figure other architectures carry (253: engine level, else
--                         all) in place of the one used — beside a stated figure, which of the two predicts better
--   predictable_held_out  held-out rows only (NULL in-sample): FALSE when the row is host-bound in-sample
--                         and no host roof reaches it held out (by source or architecture) — its host time is shown by its own
--                         source alone (252 HOST ROOF: no other source of this engine on this hardware or
--                         architecture shows a host bound, and kvreg derives no host time from first principles),
--                         so its held-out prediction is the GPUs' alone and its error says nothing about the GPU
--                         model; held_out_note says why.  Counted in every error statistic all the same.
CREATE OR REPLACE VIEW speed_calibration AS
WITH tc AS MATERIALIZED (
    -- throughput_ceilings once for the three modes (a view named three times is evaluated three times)
    SELECT * FROM throughput_ceilings
),
modes AS (
    SELECT 'in-sample' AS mode, c.*, '' AS holdout FROM tc c
    UNION ALL
    SELECT 'leave-one-source-out', c.*, c.source_id FROM tc c
    UNION ALL
    SELECT 'leave-one-architecture-out', c.*, 'architecture:' || c.architecture FROM tc c
),
d AS (
    SELECT m.*, e.bandwidth_efficiency, e.bandwidth_basis, e.bandwidth_level, e.bandwidth_n,
           e.compute_efficiency, e.compute_basis, e.compute_level, e.compute_n,
           e.host_request_s, e.host_level, e.host_n, e.host_seq_step_s,
           expected_mixed_step_s(m.prompt_step_share, m.gemm_memory_s, m.gemm_compute_s, m.gemm_compute_prompt_s,
                                 m.expert_memory_s, m.expert_memory_prompt_s, m.expert_compute_s,
                                 m.expert_compute_prompt_s, m.attention_memory_s, m.attention_compute_s,
                                 m.attention_compute_prompt_s, m.allreduce_s, m.allreduce_prompt_s,
                                 e.bandwidth_efficiency, e.compute_efficiency)
           + e.host_seq_step_s AS device_s,
           e.carried_bandwidth_efficiency, e.carried_bandwidth_level,
           expected_mixed_step_s(m.prompt_step_share, m.gemm_memory_s, m.gemm_compute_s, m.gemm_compute_prompt_s,
                                 m.expert_memory_s, m.expert_memory_prompt_s, m.expert_compute_s,
                                 m.expert_compute_prompt_s, m.attention_memory_s, m.attention_compute_s,
                                 m.attention_compute_prompt_s, m.allreduce_s, m.allreduce_prompt_s,
                                 e.carried_bandwidth_efficiency, e.compute_efficiency)
           + e.host_seq_step_s AS carried_device_s
    FROM modes m
    JOIN speed_efficiency_by_holdout e ON e.holdout = m.holdout AND e.hardware_id = m.hardware_id
                                      AND e.engine_family = m.engine_family
),
p AS (
    SELECT d.*,
           -- the host roof binds when its time per output token exceeds the devices'
           coalesce(d.host_request_s / d.output_tokens > d.device_s, FALSE) AS host_bound,
           1 / greatest(d.device_s, coalesce(d.host_request_s / d.output_tokens, 0)) AS predicted_tok_per_s,
           1 / greatest(d.carried_device_s, coalesce(d.host_request_s / d.output_tokens, 0))
               AS carried_predicted_tok_per_s
    FROM d
),
q AS (
    SELECT p.*,
           max(CASE WHEN p.mode = 'in-sample' AND p.host_bound THEN 1 ELSE 0 END)
               OVER (PARTITION BY p.source_id, p.measurement_idx) = 1 AS host_bound_in_sample
    FROM p
)
SELECT mode, source_id, measurement_idx, engine_id, engine_family, engine_version, scenario, source_url,
       hardware_id, architecture, model_id, moe, weights_dtype, kv_dtype, tp, input_tokens, output_tokens, batch, bound,
       output_tok_per_s, ceiling_tok_per_s, predicted_tok_per_s,
       predicted_tok_per_s / output_tok_per_s - 1 AS error,
       abs(predicted_tok_per_s / output_tok_per_s - 1) AS abs_error,
       batch / predicted_tok_per_s AS predicted_step_s, tpot_p50_s,
       batch / predicted_tok_per_s / tpot_p50_s - 1 AS tpot_error,
       bandwidth_efficiency, bandwidth_basis, bandwidth_level, bandwidth_n,
       compute_efficiency, compute_basis, compute_level, compute_n,
       host_request_s, host_level, host_n, host_bound, host_seq_step_s,
       CASE WHEN mode = 'in-sample' THEN NULL
            ELSE NOT (host_bound_in_sample AND host_request_s IS NULL) END AS predictable_held_out,
       CASE WHEN mode <> 'in-sample' AND host_bound_in_sample AND host_request_s IS NULL
            THEN format('host-bound in-sample on its own source''s evidence; no other source shows {}''s host bound'
                        || ' on {} or its architecture, and kvreg derives no host time from first principles:'
                        || ' not predictable held out', engine_family, hardware_id) END AS held_out_note,
       carried_bandwidth_efficiency, carried_bandwidth_level, carried_predicted_tok_per_s,
       carried_predicted_tok_per_s / output_tok_per_s - 1 AS carried_error, file, line
FROM q
