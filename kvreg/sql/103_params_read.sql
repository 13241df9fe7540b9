-- params_read(params_total, params_active, experts, experts_per_token, tokens): scalar macro,
-- the parameters one forward step over `tokens` tokens (a decode batch, or a prompt) reads.
-- Dense models (experts NULL): every parameter.  MoE: the non-routed part plus the experts hit.
-- Per MoE layer, with k of E experts chosen per token, the expected number of distinct experts hit
-- by B tokens is E·(1 − (1 − k/E)^B) — ASSUMPTION: uniform, independent routing (real routers are
-- skewed, so this overstates the experts hit at mid-size B).  B = 1 gives the active set (k);
-- large B gives every expert.
-- Per-expert parameters (summed over MoE layers) follow from the two parameter counts:
--   e = (P_total − P_active) / (E − k); routed = E·e; non-routed (attention, shared experts, dense) = P_total − E·e.
-- Units: parameters.  Source: DESIGN.md "MoE: bytes read per decode step use total weights at batch ≥
-- experts' coverage, FLOPs use active parameters".
CREATE OR REPLACE MACRO params_read(params_total, params_active, experts, experts_per_token, tokens) AS
    CASE WHEN experts IS NULL OR experts <= experts_per_token THEN params_total
         ELSE params_total
              - (params_total - params_active) / (experts - experts_per_token)
                * experts * power(1 - experts_per_token / experts, tokens)
    END
