-- ranked_plans(users, context_tokens, tpot_s, ttft_s := NULL, models := NULL, hardware := NULL, engines := NULL,
--   weights_dtypes := NULL, kv_dtypes := NULL, tps := NULL, <engine knobs as plans>, cost_basis := 'rental',
--   tco_years, tco_usd_per_kwh, tco_pue, <workload parameters as plans: input_tokens, output_tokens,
--   shared_prefix_tokens, parallel_samples, request_rate_per_s>, efficiency_basis := NULL (as plans), weights_pairs := NULL): table macro, the plans
-- (275) of the listed configurations, ranked per model — the ONE ranking rule, used by `kvreg plan` and by
-- the report's sizing (kvreg/report/queries/scope_plans.sql), so both give the same rows in the same order.
-- The lists (VARCHAR[] ids, BIGINT[] tps; NULL = every one) filter before ranking; weights_pairs
--   (STRUCT(model_id VARCHAR, weights_dtype VARCHAR)[], NULL = no such filter) keeps only those pairs, the
--   report's per-model precisions (kvreg/sql/031_report_weights.sql: its list plus each model's own checkpoints).
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp (as plans).
-- Columns: every column of plans, then
--   rank_list     which list the row is ranked in:
--                 'priced'      feasible, with a price, on the model's rate basis
--                 'no price'    feasible, no price in the registry: ranked apart on device count, never after
--                               priced rows as if it were dearer (issue 12 item 2)
--                 'other basis' feasible, but at the bandwidth ceiling while other rows of the model are at a
--                               stated efficiency (rate_basis 'ceiling' vs 'expected'): optimistic by
--                               1/efficiency, so not ranked against them
--                 'infeasible'  the workload cannot be served (reason)
--   rank_in_list  1 = first of its list.  Rule, in order: options sized on an engine release's admission
--                 (pool_basis 'engine') before first-principles ones (seed rule 3, kv-arithmetic-hybrid-
--                 attention.txt: plan on the engine's number); then $/hour ('priced'), or devices
--                 ('no price', 'other basis'); then fewer devices; then the most headroom (issue 12: equal-cost
--                 options were left to the ids' alphabetical order, which picked Qwen3.6-27B's TP 1 × 2 at rate
--                 limit 102 for a batch of 100 over TP 2 × 1 at 240 for 200, both $5.18/h); then hardware, tp,
--                 weights, KV, engine ids (stable).
--                 headroom = least(max_seqs_per_replica, rate_max_batch) ÷ batch_per_replica: how far each
--                 replica's batch may grow before memory, the engine's admission or the TPOT stops it (1 = none
--                 left); NULL on infeasible rows, which keep their own order.
--                 Infeasible rows: the longest servable context first, then (where a context was computed: the
--                 refusal is about memory or speed) the fastest single sequence, then fewer devices (one replica:
--                 tp) as the options, then the ids as above.
--   rank_in_model 1 = the recommendation when rank_list is 'priced' or 'no price': the lists in the order
--                 above, each by rank_in_list
--   headroom      least(max_seqs_per_replica, rate_max_batch) ÷ batch_per_replica (feasible rows; ≥ 1), the
--                 tie-break after cost and devices
--   rate_basis_ranked  the model's rate basis ('expected' when any feasible row has a stated efficiency)
CREATE OR REPLACE MACRO ranked_plans(users, context_tokens, tpot_s, ttft_s := NULL, models := NULL, hardware := NULL,
                                     engines := NULL, weights_dtypes := NULL, kv_dtypes := NULL, tps := NULL,
                                     gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                     max_num_batched_tokens := NULL, enforce_eager := NULL,
                                     num_speculative_tokens := NULL, block_size := NULL, cost_basis := 'rental',
                                     tco_years := NULL,
                                     tco_usd_per_kwh := NULL, tco_pue := NULL, input_tokens := NULL,
                                     output_tokens := NULL, shared_prefix_tokens := NULL, parallel_samples := NULL,
                                     request_rate_per_s := NULL, efficiency_basis := NULL,
                                     weights_pairs := NULL) AS TABLE
WITH listed AS (
    -- priced on the stated cost basis (kvreg/sql/115_hardware_rates.sql; 'rental' = the plans' own price)
    SELECT p.* REPLACE (rt.usd_per_hour * p.gpus AS usd_per_hour)
    FROM plans(users, context_tokens, tpot_s, ttft_s := ttft_s, gpu_memory_utilization := gpu_memory_utilization,
               max_num_seqs := max_num_seqs, max_num_batched_tokens := max_num_batched_tokens,
               enforce_eager := enforce_eager, num_speculative_tokens := num_speculative_tokens,
               block_size := block_size, input_tokens := input_tokens, output_tokens := output_tokens,
               shared_prefix_tokens := shared_prefix_tokens, parallel_samples := parallel_samples,
               request_rate_per_s := request_rate_per_s, only_models := models, only_hardware := hardware,
               efficiency_basis := efficiency_basis, only_engines := engines) p
    LEFT JOIN hardware_rates_at(cost_basis, tco_years := tco_years, tco_usd_per_kwh := tco_usd_per_kwh,
                                tco_pue := tco_pue) rt ON rt.hardware_id = p.hardware_id
    WHERE (models IS NULL OR list_contains(models, p.model_id))
      AND (hardware IS NULL OR list_contains(hardware, p.hardware_id))
      AND (engines IS NULL OR list_contains(engines, p.engine_id))
      AND (weights_dtypes IS NULL OR list_contains(weights_dtypes, p.weights_dtype))
      AND (kv_dtypes IS NULL OR list_contains(kv_dtypes, p.kv_dtype))
      AND (tps IS NULL OR list_contains(tps, p.tp))
      AND (weights_pairs IS NULL
           OR list_contains(weights_pairs, {'model_id': p.model_id, 'weights_dtype': p.weights_dtype}))
),
basis AS (
    SELECT l.*,
           CASE WHEN bool_or(l.feasible AND l.rate_basis = 'expected') OVER (PARTITION BY l.model_id)
                     OR NOT bool_or(l.feasible) OVER (PARTITION BY l.model_id)
                THEN 'expected' ELSE 'ceiling' END AS rate_basis_ranked
    FROM listed l
),
listed_in AS (
    SELECT b.*,
           CASE WHEN b.feasible THEN least(b.max_seqs_per_replica, b.rate_max_batch)::DOUBLE
                                     / b.batch_per_replica END AS headroom,
           CASE WHEN NOT b.feasible THEN 'infeasible'
                WHEN b.rate_basis <> b.rate_basis_ranked THEN 'other basis'
                WHEN b.usd_per_hour IS NULL THEN 'no price'
                ELSE 'priced' END AS rank_list
    FROM basis b
),
ranked AS (
    SELECT r.*,
           row_number() OVER (
               PARTITION BY r.model_id, r.rank_list
               ORDER BY r.pool_basis <> 'engine',
                        CASE WHEN r.rank_list = 'priced' THEN r.usd_per_hour END,
                        CASE WHEN r.rank_list = 'infeasible' THEN -coalesce(r.max_context_tokens, -1) END,
                        -- the speed of one sequence only where the refusal is about memory or speed (a context was
                        -- computed): a TP 16 refused for the link's reach (no context) came first on its 16 devices'
                        -- bandwidth, before a TP 2 that misses the TTFT
                        CASE WHEN r.rank_list = 'infeasible' AND r.max_context_tokens IS NOT NULL
                             THEN r.single_seq_tpot_s END NULLS LAST,
                        -- devices: a refused row has no replica count, so its one replica (tp), as the options
                        coalesce(r.gpus, r.tp),
                        r.headroom DESC NULLS LAST,
                        r.hardware_id, r.tp, r.weights_dtype, r.kv_dtype, r.engine_id) AS rank_in_list
    FROM listed_in r
)
SELECT q.*,
       row_number() OVER (PARTITION BY q.model_id
                          ORDER BY list_position(['priced', 'no price', 'other basis', 'infeasible'], q.rank_list),
                                   q.rank_in_list) AS rank_in_model
FROM ranked q
