-- plan_levers_core(ranked, admission := NULL): table macro, "what would change the answer" for each
-- model's recommendation, from the scenario's own numbers: one line per lever that actually moves the device count
-- or the pick (issue 12).  Called through plan_levers (below: the report's decision line,
-- kvreg/report/queries/levers.sql, and `kvreg plan` for an engine recommendation) or directly by `kvreg plan`
-- (kvreg/plan_levers.py) when no engine row is recommended, so both say the same.
-- ranked: the NAME of a table holding ranked_plans (280) rows for one workload (kvreg plan's temp table plan_ranked,
--   the report's report_plans).
-- admission: LIST of STRUCTs, the rows of plan_levers_admission (below) for `ranked` — the recommended engine
--   configurations re-admitted over the batched_tokens axis at the knobs that workload was sized with; NULL (or
--   empty) when no engine row is recommended: then there is no batched-tokens lever (batched_alternatives NULL),
--   exactly as plan_levers_admission's empty result gives.
-- Grain: one row per model whose rank_in_model 1 is a recommendation (rank_list 'priced' or 'no price').
-- Inputs: ranked rows (plans' decode-step inputs: params_total … moe_act_bytes), bandwidth_efficiency_for_batch
--   (282), plan_flip_usd_per_device_hour (283), the admission rows (engine_capacity_at, 220, over the batched_tokens
--   axis, through plan_levers_admission).
-- Only the recommended rows are evaluated at other settings (the cheap part: one engine_capacity_at call over the
-- axis for the recommended model × hardware × engine); other devices stay at their own figures and settings.
-- Units: fractions (bandwidth efficiencies), devices, sequences, tokens, USD per hour and per device-hour.
--   model_id, hardware_id, engine_id, tp, devices, replicas, usd_per_hour, binding_constraint   the recommendation
--   runner-up (priced recommendation only; the cheapest priced option on other hardware, same engine, as the report's
--     sensitivity): ru_hardware_id, ru_tp, ru_weights_dtype, ru_kv_dtype, ru_devices, ru_usd_per_hour,
--     ru_flip_usd_per_device_hour (its price per device-hour at which it costs what the recommendation does)
--   bandwidth_efficiency   the efficiency the recommendation was sized at (plans)
--   hold_efficiency        the lowest bandwidth efficiency at which its replicas still run its batch within the TPOT
--                          (below it, more replicas): bandwidth_efficiency_for_batch at batch_per_replica
--   fewer_replicas, fewer_devices, fewer_efficiency  the efficiency from which one replica fewer would do (its batch
--                          ⌈users ÷ (replicas − 1)⌉ within the TPOT; only where memory/admission holds that batch)
--   flip_efficiency        the efficiency below which every configuration of the recommended hardware costs more than
--                          the runner-up: per configuration, the most replicas within the runner-up's $/hour and the
--                          efficiency at which that many still serve the users; the lowest of them
--   batched_setting, batched_is_default  the recommendation's max_num_batched_tokens (engine rows only)
--   batched_alternatives   LIST of {batched, admitted, replicas, devices, usd_per_hour, tpot_binds}: the settings of
--                          the batched_tokens axis at which the same configuration needs another device count (engine
--                          rows, no shared prefix, one sample per request): going down from the setting, then up,
--                          the first setting at which each new count appears, at most 3:
--                          replicas = ⌈users ÷ min(admitted, rate limit)⌉, the rate limit unchanged (the decode step
--                          does not depend on the setting; prefill then runs in chunks of that many tokens)
--   lines                  LIST of {lever, line}: one sentence per lever that moves the count or the pick, in this
--                          order: 'runner_up_price', 'bandwidth_efficiency', 'max_num_batched_tokens'
-- Source: the vLLM sliding-window and activation terms the admission depends on are engine_request_blocks_at (215) and
--   engine_memory_pools_at (205); the rate limit is plans' (275).
CREATE OR REPLACE MACRO plan_levers_core(ranked, admission := NULL) AS TABLE
WITH p AS (SELECT * FROM query_table(ranked)),
rec AS (SELECT * FROM p WHERE rank_in_model = 1 AND rank_list IN ('priced', 'no price')),
ru AS (
    SELECT r.model_id, arg_min(o.hardware_id, o.rank_in_model) AS ru_hardware_id, arg_min(o.tp, o.rank_in_model) AS ru_tp,
           arg_min(o.weights_dtype, o.rank_in_model) AS ru_weights_dtype,
           arg_min(o.kv_dtype, o.rank_in_model) AS ru_kv_dtype, arg_min(o.gpus, o.rank_in_model) AS ru_devices,
           arg_min(o.usd_per_hour, o.rank_in_model) AS ru_usd_per_hour
    FROM rec r JOIN p o ON o.model_id = r.model_id AND o.engine_id = r.engine_id AND o.hardware_id <> r.hardware_id
                       AND o.rank_list = 'priced'
    WHERE r.rank_list = 'priced'
    GROUP BY r.model_id
),
eff AS (
    SELECT r.model_id,
           bandwidth_efficiency_for_batch(r.weights_bytes, r.params_total, r.params_active, r.moe_experts,
                                          r.moe_experts_per_token, r.batch_per_replica, r.kv_read_bytes_per_seq, r.flop_per_token,
                                          r.ceiling_bw, r.ceiling_peak, r.allreduce_s_per_token, r.compute_efficiency,
                                          r.moe_act_bytes, r.workload_tpot_s,
                                          host_s_per_seq := r.host_s_per_seq) AS hold_efficiency,
           f.fewer_batch, ceil(r.workload_users / (f.fewer_batch // r.workload_parallel_samples))::BIGINT AS fewer_replicas,
           CASE WHEN f.fewer_batch // r.workload_parallel_samples <= r.capacity_requests
                THEN bandwidth_efficiency_for_batch(r.weights_bytes, r.params_total, r.params_active, r.moe_experts,
                                                    r.moe_experts_per_token, f.fewer_batch, r.kv_read_bytes_per_seq,
                                                    r.flop_per_token, r.ceiling_bw, r.ceiling_peak,
                                                    r.allreduce_s_per_token, r.compute_efficiency, r.moe_act_bytes,
                                                    r.workload_tpot_s, host_s_per_seq := r.host_s_per_seq)
                END AS fewer_efficiency
    FROM rec r
    CROSS JOIN LATERAL (SELECT CASE WHEN r.replicas > 1
                                    THEN ceil(r.workload_users / (r.replicas - 1))::BIGINT * r.workload_parallel_samples
                                    END AS fewer_batch) f
    WHERE r.rate_basis = 'expected'
),
flip AS (
    -- each priced configuration of the recommended hardware and engine: the most replicas within the runner-up's
    -- $/hour, and the efficiency at which that many still serve the users (memory permitting)
    SELECT r.model_id,
           min(bandwidth_efficiency_for_batch(c.weights_bytes, c.params_total, c.params_active, c.moe_experts,
                                              c.moe_experts_per_token, a.batch, c.kv_read_bytes_per_seq, c.flop_per_token,
                                              c.ceiling_bw, c.ceiling_peak, c.allreduce_s_per_token,
                                              c.compute_efficiency, c.moe_act_bytes, c.workload_tpot_s,
                                              host_s_per_seq := c.host_s_per_seq))
               FILTER (WHERE a.batch // c.workload_parallel_samples <= c.capacity_requests) AS flip_efficiency
    FROM rec r
    JOIN ru u ON u.model_id = r.model_id
    JOIN p c ON c.model_id = r.model_id AND c.hardware_id = r.hardware_id AND c.engine_id = r.engine_id
            AND c.rank_list = 'priced' AND c.rate_basis = 'expected'
    CROSS JOIN LATERAL (SELECT floor(u.ru_usd_per_hour / (c.usd_per_hour / c.replicas) + 1e-9)::BIGINT AS most) m
    CROSS JOIN LATERAL (SELECT CASE WHEN m.most >= 1
                                    THEN ceil(c.workload_users / m.most)::BIGINT * c.workload_parallel_samples END
                                   AS batch) a
    GROUP BY r.model_id
),
bt AS (
    -- the recommended engine configurations' admission over the batched_tokens axis (plan_levers_admission below);
    -- none given: no engine row is recommended, so no setting moves the count
    SELECT a.model_id, a.hardware_id, a.engine_id, a.weights_dtype, a.kv_dtype, a.tp, a.max_model_len,
           a.max_num_batched_tokens, a.admitted_seqs
    FROM (SELECT unnest(admission::STRUCT(model_id VARCHAR, hardware_id VARCHAR, engine_id VARCHAR,
                                          weights_dtype VARCHAR, kv_dtype VARCHAR, tp BIGINT, max_model_len BIGINT,
                                          max_num_batched_tokens BIGINT, admitted_seqs BIGINT)[]) AS a)
),
bopt AS (
    SELECT r.model_id, b.max_num_batched_tokens AS batched, b.admitted_seqs AS admitted,
           ceil(r.workload_users / least(b.admitted_seqs, r.rate_max_batch))::BIGINT AS replicas_at,
           b.admitted_seqs > r.rate_max_batch AS tpot_binds
    FROM rec r
    JOIN bt b ON b.model_id = r.model_id AND b.hardware_id = r.hardware_id AND b.engine_id = r.engine_id
             AND b.weights_dtype = r.weights_dtype AND b.kv_dtype = r.kv_dtype AND b.tp = r.tp
             AND b.max_model_len = r.workload_context_tokens
    WHERE r.pool_basis = 'engine' AND r.workload_parallel_samples = 1 AND r.workload_shared_prefix_tokens = 0
      AND b.admitted_seqs >= 1 AND b.max_num_batched_tokens <> r.max_num_batched_tokens
),
bstep AS (
    -- going away from the setting in each direction, the first setting at which each new replica count appears
    SELECT o.*, o.batched < r.max_num_batched_tokens AS lower,
           o.replicas_at IS DISTINCT FROM lag(o.replicas_at, 1, r.replicas) OVER (
               PARTITION BY o.model_id, o.batched < r.max_num_batched_tokens
               ORDER BY abs(o.batched - r.max_num_batched_tokens)) AS new_count
    FROM bopt o JOIN rec r USING (model_id)
),
bat AS (
    SELECT o.model_id,
           list({'batched': o.batched, 'admitted': o.admitted, 'replicas': o.replicas_at,
                 'devices': o.replicas_at * r.tp, 'usd_per_hour': r.usd_per_hour / r.replicas * o.replicas_at,
                 'tpot_binds': o.tpot_binds}
                ORDER BY NOT o.lower, abs(o.batched - r.max_num_batched_tokens))[1:3] AS batched_alternatives
    FROM bstep o JOIN rec r USING (model_id)
    WHERE o.new_count
    GROUP BY o.model_id
),
joined AS (
    SELECT r.model_id, r.hardware_id, r.engine_id, r.weights_dtype, r.kv_dtype, r.tp, r.gpus AS devices, r.replicas,
           r.usd_per_hour, r.binding_constraint, r.bandwidth_efficiency, r.max_seqs_per_replica, r.rate_max_batch,
           u.ru_hardware_id, u.ru_tp, u.ru_weights_dtype, u.ru_kv_dtype, u.ru_devices, u.ru_usd_per_hour,
           plan_flip_usd_per_device_hour(r.usd_per_hour, u.ru_devices) AS ru_flip_usd_per_device_hour,
           e.hold_efficiency, e.fewer_replicas, e.fewer_replicas * r.tp AS fewer_devices, e.fewer_efficiency,
           fl.flip_efficiency,
           CASE WHEN r.pool_basis = 'engine' THEN r.max_num_batched_tokens END AS batched_setting,
           CASE WHEN r.pool_basis = 'engine' THEN r.default_batched END AS batched_is_default,
           b.batched_alternatives
    FROM rec r
    LEFT JOIN ru u ON u.model_id = r.model_id
    LEFT JOIN eff e ON e.model_id = r.model_id
    LEFT JOIN flip fl ON fl.model_id = r.model_id
    LEFT JOIN bat b ON b.model_id = r.model_id
)
SELECT j.*,
       list_filter([
           CASE WHEN j.ru_usd_per_hour IS NOT NULL AND j.usd_per_hour IS NOT NULL THEN {'lever': 'runner_up_price', 'line':
               format('runner-up price: {} × {} (TP {}, {} / {}) costs ${:,.2f}/hour, {:.0f} % more; it wins at'
                      || ' ${:,.2f} per device-hour or less (now ${:,.2f})',
                      j.ru_devices, j.ru_hardware_id, j.ru_tp, j.ru_weights_dtype, j.ru_kv_dtype, j.ru_usd_per_hour,
                      (j.ru_usd_per_hour / j.usd_per_hour - 1) * 100,
                      floor((j.ru_flip_usd_per_device_hour - 1e-6) * 100) / 100, j.ru_usd_per_hour / j.ru_devices)}
           END,
           CASE WHEN j.hold_efficiency IS NOT NULL THEN {'lever': 'bandwidth_efficiency', 'line':
               format('bandwidth efficiency (sized at {:.3f} on {}): this configuration keeps its {} device{} down to'
                      || ' {:.3f} (more below)',
                      j.bandwidth_efficiency, j.hardware_id, j.devices, CASE WHEN j.devices = 1 THEN '' ELSE 's' END,
                      ceil(j.hold_efficiency * 1000) / 1000)
               || CASE WHEN j.flip_efficiency IS NOT NULL AND j.flip_efficiency < j.hold_efficiency
                       THEN format('; below {:.3f} every {} configuration costs more than the runner-up',
                                   ceil(j.flip_efficiency * 1000) / 1000, j.hardware_id)
                       ELSE '' END
               || CASE WHEN j.fewer_efficiency IS NOT NULL
                       THEN format('; from {:.3f} up, {} device{} would do', ceil(j.fewer_efficiency * 1000) / 1000,
                                   j.fewer_devices, CASE WHEN j.fewer_devices = 1 THEN '' ELSE 's' END)
                       ELSE '' END}
           END,
           CASE WHEN j.batched_alternatives IS NOT NULL THEN {'lever': 'max_num_batched_tokens', 'line':
               format('max_num_batched_tokens {:,} ({}) {}: ', j.batched_setting,
                      CASE WHEN j.batched_is_default THEN 'the release''s default on this device' ELSE 'set' END,
                      CASE WHEN j.binding_constraint = 'admission'
                           THEN format('holds the admission at {} per replica', j.max_seqs_per_replica)
                           ELSE format('admits {} per replica', j.max_seqs_per_replica) END)
               || array_to_string(list_transform(j.batched_alternatives, lambda a:
                      format('at {:,} it admits {} → {} device{}{}{}', a.batched, a.admitted, a.devices,
                             CASE WHEN a.devices = 1 THEN '' ELSE 's' END,
                             CASE WHEN a.usd_per_hour IS NOT NULL THEN format(' (${:,.2f}/hour)', a.usd_per_hour)
                                  ELSE '' END,
                             CASE WHEN a.tpot_binds THEN format(', decode speed then binds at {}', j.rate_max_batch)
                                  ELSE '' END)), '; ')
               || CASE WHEN list_bool_or(list_transform(j.batched_alternatives, lambda a: a.batched < j.batched_setting))
                       THEN ' (a smaller setting prefills in smaller chunks: more steps per prompt)' ELSE '' END}
           END], lambda x: x IS NOT NULL) AS lines
FROM joined j;


-- plan_batched_axis(settings): table macro, one row, `axis`: the max_num_batched_tokens settings an engine
-- configuration is re-admitted at — the batched_tokens axis (every release default, every logged setting) and the
-- settings in the LIST `settings` (tokens; NULLs ignored), distinct, ascending.  The one definition of the levers'
-- axis: plan_levers_admission (below) passes it to engine_capacity_at, `kvreg plan` makes its one admission table
-- over it (kvreg/plan.py, the plan_admission scope 278: the ranking's setting is one point of it).
CREATE OR REPLACE MACRO plan_batched_axis(settings) AS TABLE
SELECT list(DISTINCT v.t ORDER BY v.t) AS axis
FROM (SELECT b.max_num_batched_tokens::BIGINT AS t FROM batched_tokens b
      UNION ALL SELECT unnest(settings)::BIGINT) v
WHERE v.t IS NOT NULL;

-- plan_levers_admission(ranked, gpu_memory_utilization := NULL, max_num_seqs := NULL, enforce_eager := NULL,
--   num_speculative_tokens := NULL, block_size := NULL): table macro, the admission of each model's recommended engine
-- configuration (rank_in_model 1, pool_basis 'engine', in the table named `ranked`) at every setting of the
-- batched_tokens axis and its own (plan_batched_axis), at the workload's context and the knobs given (NULL = the
-- release's): one engine_capacity_at (220) call over the axis, cut to those models, devices and releases; with no
-- engine row recommended the lists are [''] (no id), never NULL (= every model, hardware and engine), so no row.
-- Columns: model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp, max_model_len (tokens),
--   max_num_batched_tokens (tokens), admitted_seqs (sequences), as engine_capacity_at.
CREATE OR REPLACE MACRO plan_levers_admission(ranked, gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                              enforce_eager := NULL, num_speculative_tokens := NULL,
                                              block_size := NULL) AS TABLE
SELECT e.model_id, e.hardware_id, e.engine_id, e.weights_dtype, e.kv_dtype, e.tp, e.max_model_len,
       e.max_num_batched_tokens, e.admitted_seqs
FROM engine_capacity_at(
    (SELECT list(DISTINCT workload_context_tokens) FROM query_table(ranked)),
    batched_axis := (SELECT x.axis FROM plan_batched_axis(
                         (SELECT list(max_num_batched_tokens) FROM query_table(ranked)
                          WHERE rank_in_model = 1 AND pool_basis = 'engine')) x),
    gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs, enforce_eager := enforce_eager,
    num_speculative_tokens := num_speculative_tokens, block_size := block_size,
    only_models := (SELECT coalesce(list(DISTINCT model_id), ['']) FROM query_table(ranked)
                    WHERE rank_in_model = 1 AND pool_basis = 'engine'),
    only_hardware := (SELECT coalesce(list(DISTINCT hardware_id), ['']) FROM query_table(ranked)
                      WHERE rank_in_model = 1 AND pool_basis = 'engine'),
    only_engines := (SELECT coalesce(list(DISTINCT engine_id), ['']) FROM query_table(ranked)
                     WHERE rank_in_model = 1 AND pool_basis = 'engine')) e;

-- plan_levers_admission_of(ranked, admission): table macro, plan_levers_admission's rows read from the table named
-- `admission` (engine_capacity_at rows made at the knobs `ranked` was sized with, over at least plan_batched_axis of
-- its recommended settings: `kvreg plan`'s plan_admission_rows, kvreg/plan.py), cut to the recommended engine
-- configurations (model × hardware × engine), their context and that axis: every row plan_levers_core joins of
-- plan_levers_admission's (which crosses the lists of models, devices and engines), without a second
-- engine_capacity_at — the same levers (tests/test_plan_levers.py compares them).  Columns: plan_levers_admission's.
CREATE OR REPLACE MACRO plan_levers_admission_of(ranked, admission) AS TABLE
SELECT e.model_id, e.hardware_id, e.engine_id, e.weights_dtype, e.kv_dtype, e.tp, e.max_model_len,
       e.max_num_batched_tokens, e.admitted_seqs
FROM query_table(admission) e
WHERE (e.model_id, e.hardware_id, e.engine_id, e.max_model_len) IN (
          SELECT (r.model_id, r.hardware_id, r.engine_id, r.workload_context_tokens) FROM query_table(ranked) r
          WHERE r.rank_in_model = 1 AND r.pool_basis = 'engine')
  AND list_contains((SELECT x.axis FROM plan_batched_axis(
                         (SELECT list(max_num_batched_tokens) FROM query_table(ranked)
                          WHERE rank_in_model = 1 AND pool_basis = 'engine')) x), e.max_num_batched_tokens);

-- plan_levers(ranked, <knobs as plan_levers_admission>): table macro, plan_levers_core with the admission rows of
-- plan_levers_admission at those knobs — the levers of every model of `ranked`, the batched-tokens lever included
-- (the report's decision line, kvreg/report/queries/levers.sql).  `kvreg plan` calls plan_levers_core without rows
-- when its recommendation is a first-principles one (no engine row to re-admit: the same result, without binding
-- the engine admission chain; benchmarks/README.md, "Speed commands").
CREATE OR REPLACE MACRO plan_levers(ranked, gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                    enforce_eager := NULL, num_speculative_tokens := NULL, block_size := NULL) AS TABLE
SELECT * FROM plan_levers_core(ranked, admission := (
    SELECT list(a) FROM plan_levers_admission(ranked, gpu_memory_utilization := gpu_memory_utilization,
                                              max_num_seqs := max_num_seqs, enforce_eager := enforce_eager,
                                              num_speculative_tokens := num_speculative_tokens,
                                              block_size := block_size) a));
