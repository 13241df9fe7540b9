-- plans(users, context_tokens, tpot_s, ttft_s := NULL): table macro, how many replicas of each
-- configuration a workload needs and what they cost.
-- Workload: `users` concurrent sequences, each at `context_tokens` of context, each needing a decode
--   rate ≥ 1 / tpot_s tokens per second, and (optional) a prefill floor ≤ ttft_s.
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp (a replica = tp devices).
-- Engine knobs (NULL = the engine's default): gpu_memory_utilization, max_num_seqs, max_num_batched_tokens,
--   enforce_eager, num_speculative_tokens, passed to capacity_at, so the plan is sized on the same memory
--   model as every other figure: for an engine release with accounting rules the release's pool and its
--   admission (engine_capacity_at), for first-principles the simple budget.
-- only_models / only_hardware / only_engines (VARCHAR[], NULL = all): passed to capacity_at, which filters its pool
--   side by them (ranked_plans passes its models, hardware and engines lists: a first-principles plan then
--   evaluates no engine release's admission grid).
-- Inputs: capacity_at (245), decode_coefficients (incl. moe_activation_bytes_per_token), hardware_peaks, model_weights,
--   engines, plan_efficiency (274: speed_efficiency's figures),
--   engine_support (058);
--   macros kv_read_bytes,
--   decode_flop, params_read, prefill_floor_s and prompt_prefill_floor_s (105), tp_fits_interconnect (116), tp_planned (117).
-- Rates use the bandwidth/compute efficiency of speed_efficiency (254: fitted to throughput measurements
--   for this hardware × engine family, else the hardware entry's stated figure) when there is one
--   (rate_basis = 'expected'), else the ceiling (rate_basis = 'ceiling'); the TTFT check uses the prefill floor.
-- efficiency_basis (NULL = 'fitted'): 'fitted' uses speed_efficiency as above; 'vendor_measured' replaces a
--   bandwidth efficiency that is only the hardware entry's stated figure by the same vendor's lowest measured one
--   under the engine family (plan_efficiency, 274: e.g. mi355x 0.45 stated → mi300x 0.23 measured), every other
--   row unchanged, so a call resting on a guess can be sized again at the nearest evidence (the report's †
--   calls).  Any other value is an error naming the two (any caller, any column read).
-- Units: sequences, devices, seconds, tokens, USD per hour, bytes.
--   max_seqs_per_replica  capacity_at's max_seqs at the context: the sequences the engine release admits
--                         (pool_basis 'engine'), or floor(KV pool per rank ÷ per-rank bytes of one sequence)
--   first_principles_seqs floor(the same pool ÷ one sequence), for comparison
--   rate_max_batch        the largest batch whose decode step (decode_step_s, 104: its kernel classes, each at
--                         its roof) still fits in tpot_s.  Memory-bound GEMMs and attention (the usual TPOT-bound
--                         plan of a dense model): (W + B·kv)/BW + B·allreduce/eff ≤ tpot, in closed form (BW and
--                         eff at the efficiencies: the all-reduce at its roof's share).  Otherwise — a class
--                         compute-bound, or MoE, where each candidate batch B is costed with the weights B actually
--                         reads (expected distinct experts hit by B tokens, uniform routing assumed: params_read)
--                         and its routed activations — the largest B within tpot_s is found by bisection.
--                         NULL when the workload sets no TPOT target (no rate limit; never 0, which would read as
--                         "not even one sequence")
--   replicas              ceil(users ÷ min(max_seqs_per_replica, rate_max_batch))
--   batch_per_replica     ceil(users ÷ replicas): the batch each replica actually runs
--   tpot_at_batch_s       the decode step at that batch (expected or ceiling, see rate_basis)
--   single_seq_tpot_s     the decode step of one sequence alone (the fastest any sequence can go here)
--   empty_context_step_s  the decode step of one sequence with no context: the weights it reads plus any fixed-size
--                         state (sliding windows full, recurrent state); above tpot_s no context fits the TPOT
--   gpus                  replicas × tp; usd_per_hour = gpus × price (NULL when no price)
--   kv_read_bytes_per_seq the KV one decode step reads for one sequence at workload_read_tokens, all ranks (as
--                         roofline's; capacity's seq_bytes is one sequence's cache per rank: one name, one meaning)
--   replica_pool_bytes    the KV pool of one replica, all ranks (tp × capacity's per-device pool_bytes)
--   binding_constraint    'capacity' (the KV pool holds fewer than the rate allows; first principles),
--                         'admission' (the engine release admits fewer than the rate allows), 'tpot' (the
--                         rate allows fewer), or 'none' (one replica holds every user within both)
--   pool_basis, engine_starts, engine_request_len_capped and the knob columns (gpu_memory_utilization, util_is_default, max_num_seqs,
--                         max_num_seqs_is_default, max_num_batched_tokens, default_batched, enforce_eager,
--                         num_speculative_tokens, block_size, block_size_is_default): as capacity_at
--   feasible, reason      why a configuration cannot serve the workload at all ('platform: …', the engine release
--                         does not run on this device at these precisions, or not on the memory model planned
--                         here: engine_support, 058; TP does not divide the
--                         model's attention or KV heads: served_tp_sharding, 037; no bandwidth figure; TP > 1
--                         without an interconnect figure, or without its domain size, or wider than its
--                         domain: the stated link bandwidth does not reach such a group, so it is not
--                         planned at it; weights do not fit; the weights fit but the reserve leaves no KV pool;
--                         the engine refuses to start, or starts but caps the request length below the context
--                         (accounting.long_request), or admits no
--                         sequence; one sequence does not fit; one sequence alone
--                         misses the TPOT; the prefill floor misses the TTFT).  The reason text does not
--                         name the TP, so `kvreg plan` can group one hardware's TPs that fail alike.
--   tp_fits_interconnect  as in roofline: TRUE at tp = 1 or tp ≤ the interconnect's domain size; FALSE when
--                         tp > 1 without an interconnect or beyond its domain; NULL when the domain is unknown
--   rate_basis            'expected' (rates at the bandwidth efficiency) or 'ceiling' (none fitted or stated:
--                         the full bandwidth, optimistic); `kvreg plan` never ranks the two together
--   bandwidth_efficiency, compute_efficiency, efficiency_evidence  the efficiencies the rates used and their
--                         evidence ("bandwidth 0.58 measured (n=7, hardware); …" or "… estimated (stated …)")
--   max_context_tokens    the longest context at which ONE sequence fits and meets tpot on one replica
--                         (linear beyond every window), and, for a row that misses the TTFT (whatever reason it is
--                         refused for), whose prompt's prefill floor also meets ttft_s (the same output tokens
--                         beyond the prompt; bisection on prompt_prefill_floor_s, 105); 0 when no context is short
--                         enough (the weights alone miss the TPOT, a one-token prompt misses the TTFT, or the pool
--                         holds no sequence); NULL when the configuration fails for a reason no shorter context
--                         mends (platform, TP, no pool), or when the cache does not grow with context and the row
--                         does not miss the TTFT
--   ttft_context_tokens   that TTFT bound alone (NULL unless the row's prefill floor exceeds ttft_s)
--   one_token_prefill_floor_s  the prefill floor of a one-token prompt (prompt_prefill_floor_s, 105; NULL without a
--                         TTFT target): above ttft_s no context is short enough for the TTFT
--   params_total, params_active, moe_experts, moe_experts_per_token, flop_per_token, ceiling_bw, ceiling_peak,
--   allreduce_s_per_token, moe_act_bytes  the decode step's inputs (decode_step_s, 104) at the replica's ceilings,
--                         so plan_levers (284) costs a batch at another efficiency with the same formula
-- Source: kv-cache-chapter.txt §2.4–2.5 (step = (P·p + B·s·k) ÷ BW), Megatron-LM all-reduces (see roofline).
CREATE OR REPLACE MACRO plans(users, context_tokens, tpot_s, ttft_s := NULL, gpu_memory_utilization := NULL,
                              max_num_seqs := NULL, max_num_batched_tokens := NULL, enforce_eager := NULL,
                              num_speculative_tokens := NULL, block_size := NULL, input_tokens := NULL,
                              output_tokens := NULL,
                              shared_prefix_tokens := NULL, parallel_samples := NULL,
                              request_rate_per_s := NULL, only_models := NULL, only_hardware := NULL,
                              efficiency_basis := NULL, only_engines := NULL) AS TABLE
WITH wl AS (
    -- the workload as people describe it (kvreg/sql/272_workload_blocks.sql): requests (users, or Little's law
    -- from a request rate), samples per request, the tokens a sequence holds at its end (context_tokens =
    -- input + output), reads on average per decode step (input + output/2) and prefills (input)
    SELECT CASE WHEN input_tokens IS NOT NULL AND output_tokens IS NOT NULL
                     AND input_tokens + output_tokens <> context_tokens
                THEN error('plans: context_tokens must equal input_tokens + output_tokens')
                ELSE coalesce(users, workload_requests(request_rate_per_s, ttft_s, output_tokens, tpot_s)) END::BIGINT
               AS requests,
           coalesce(parallel_samples, 1)::BIGINT AS samples,
           coalesce(shared_prefix_tokens, 0)::BIGINT AS prefix_tokens,
           coalesce(input_tokens, context_tokens - output_tokens)::BIGINT AS prompt_tokens,
           CASE WHEN output_tokens IS NULL THEN context_tokens
                ELSE coalesce(input_tokens, context_tokens - output_tokens) + output_tokens / 2 END AS read_tokens,
           coalesce(input_tokens, context_tokens - coalesce(output_tokens, 0)) AS prefill_tokens
),
base AS (
    SELECT w.*, p.model_id, p.hardware_id, p.engine_id, p.weights_dtype, p.kv_dtype, p.tp,
           p.pool_bytes, p.claimed_bytes, p.resident_bytes, p.weights_bytes_per_rank AS rank_weights_bytes,
           p.max_seqs AS capacity_seqs, p.seq_bytes AS held_rank_bytes, p.max_seqs AS engine_seqs_unshared,
           p.engine_num_blocks, p.engine_blocks_per_request, p.engine_running_blocks_per_request,
           p.max_num_seqs AS admission_max_num_seqs,
           coalesce(wb.prefix_blocks, 0) AS prefix_blocks, coalesce(wb.prompt_blocks, 0) AS prompt_blocks,
           k.growing_token_bytes AS growing_rank_token_bytes,
           -- the prefill's inputs, to cost a shorter prompt (the longest that meets the TTFT, max_context_tokens)
           k.hidden_size AS pf_hidden_size, k.prefill_attn_flop_per_context_token AS pf_attn_flop,
           k.bounded_groups AS pf_bounded_groups, k.state_flop_per_token AS pf_state_flop,
           k.state_bytes AS pf_state_bytes, p.first_principles_seqs, p.engine_starts,
           p.engine_request_len_capped, p.pool_basis,
           p.gpu_memory_utilization AS knob_util, p.util_is_default, p.max_num_seqs AS knob_max_num_seqs,
           p.max_num_seqs_is_default, p.max_num_batched_tokens AS knob_batched, p.default_batched,
           p.enforce_eager AS knob_eager, p.num_speculative_tokens AS knob_spec, p.block_size AS knob_block_size,
           p.block_size_is_default,
           mw.weights_bytes, k.params_total, k.params_active, k.moe_experts, k.moe_experts_per_token,
           k.moe_activation_bytes_per_token * p.tp AS moe_act_bytes,   -- routed activations per token (100)
           kv_read_bytes(k.growing_token_bytes, k.bounded_groups, k.state_bytes, w.read_tokens) AS seq_rank_bytes,
           decode_flop(k.params_active, k.hidden_size, k.decode_attn_flop_per_context_token, k.bounded_groups,
                       k.state_flop_per_token, w.read_tokens) AS flop_per_token,
           kv_read_bytes(k.growing_token_bytes, k.bounded_groups, k.state_bytes, w.prefill_tokens) * p.tp
               AS prefill_seq_bytes,
           decode_flop(k.params_active, k.hidden_size, k.prefill_attn_flop_per_context_token, k.bounded_groups,
                       k.state_flop_per_token, w.prefill_tokens) AS prefill_flop_per_token,
           k.growing_token_bytes * p.tp AS growing_token_bytes,
           (coalesce(list_sum(list_transform(k.bounded_groups, lambda g: g.token_bytes * g.window_tokens)), 0)
               + k.state_bytes) AS constant_rank_bytes,
           2 * k.params_active + k.state_flop_per_token
               + 4 * k.hidden_size * coalesce(list_sum(list_transform(k.bounded_groups,
                                                     lambda g: g.layers * g.window_tokens)), 0) AS constant_flop,
           k.decode_attn_flop_per_context_token AS flop_per_context_token,
           p.tp * h.bandwidth_bytes_per_s * coalesce(se.bandwidth_efficiency, 1) AS bw,
           p.tp * h.peak_flop_per_s * coalesce(se.compute_efficiency, 1) AS peak,
           se.bandwidth_efficiency, se.compute_efficiency, se.evidence AS efficiency_evidence,
           p.tp * h.bandwidth_bytes_per_s AS ceiling_bw, p.tp * h.peak_flop_per_s AS ceiling_peak,
           CASE WHEN se.bandwidth_efficiency IS NULL THEN 'ceiling' ELSE 'expected' END AS rate_basis,
           tp_fits_interconnect(p.tp, h.interconnect_bytes_per_s, h.interconnect_domain_size) AS tp_fits_interconnect,
           h.interconnect_bytes_per_s, h.interconnect_domain_size,
           -- seconds of all-reduce per token in flight (116 allreduce_s_per_token, bf16 activations)
           allreduce_s_per_token(p.tp, k.layers, k.hidden_size,
                                 (SELECT bytes_per_element FROM precisions WHERE dtype = 'bf16'),
                                 h.interconnect_bytes_per_s, h.interconnect_domain_size) AS ar_s,
           coalesce(se.bandwidth_efficiency, 1) AS eb, coalesce(se.compute_efficiency, 1) AS ec,
           -- the host's seconds per sequence per decode step (252 speed_seq_step_fit; 0 with no fit)
           coalesce(se.host_seq_step_s, 0) AS host_s,
           h.price_usd_per_hour, ts.shards AS tp_shards, ts.attention_heads, ts.bad_kv_heads,
           es.runs AS support_runs, es.reason AS support_reason
    FROM capacity_at([context_tokens], gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs,
                     max_num_batched_tokens := max_num_batched_tokens, enforce_eager := enforce_eager,
                     num_speculative_tokens := num_speculative_tokens, block_size := block_size,
                     only_models := only_models, only_hardware := only_hardware, only_engines := only_engines) p
    JOIN model_weights mw ON mw.model_id = p.model_id AND mw.weights_dtype = p.weights_dtype
    JOIN decode_coefficients k ON k.model_id = p.model_id AND k.kv_dtype = p.kv_dtype AND k.tp = p.tp
    JOIN hardware_peaks h ON h.hardware_id = p.hardware_id AND h.weights_dtype = p.weights_dtype
    JOIN engines en ON en.engine_id = p.engine_id
    -- the efficiencies (274): speed_efficiency's, or with efficiency_basis 'vendor_measured' the same vendor's lowest
    -- measured bandwidth figure where this device's is only the entry's stated one
    LEFT JOIN (SELECT pe.hardware_id, pe.engine_family, pe.compute_efficiency, pe.host_seq_step_s,
                      CASE WHEN efficiency_basis::VARCHAR = 'vendor_measured' AND pe.vendor_bandwidth_efficiency IS NOT NULL
                           THEN pe.vendor_bandwidth_efficiency ELSE pe.bandwidth_efficiency END AS bandwidth_efficiency,
                      CASE WHEN efficiency_basis::VARCHAR = 'vendor_measured' AND pe.vendor_bandwidth_efficiency IS NOT NULL
                           THEN pe.vendor_evidence ELSE pe.evidence END AS evidence
               FROM plan_efficiency pe) se ON se.hardware_id = p.hardware_id AND se.engine_family = en.engine
    -- the served set's members must all split at this TP (037: target and draft load in one engine)
    LEFT JOIN served_tp_sharding ts ON ts.served_id = p.model_id AND ts.tp = p.tp
    -- what the engine release runs on this device at these precisions (058): unsupported or unsized is refused
    LEFT JOIN engine_support es ON es.engine_id = p.engine_id AND es.hardware_id = p.hardware_id
         AND es.weights_dtype = p.weights_dtype AND es.kv_dtype = p.kv_dtype
    CROSS JOIN wl w
    LEFT JOIN workload_blocks_at(coalesce(shared_prefix_tokens, 0),
                                 coalesce(input_tokens, context_tokens - output_tokens), block_size := block_size) wb
      -- only read the layout when something is shared (nothing shared: the release's own admission, below)
      ON (coalesce(shared_prefix_tokens, 0) > 0 OR coalesce(parallel_samples, 1) > 1)
     AND p.pool_basis = 'engine' AND wb.engine_id = p.engine_id AND wb.model_id = p.model_id
     AND wb.kv_dtype = p.kv_dtype AND wb.tp = p.tp AND wb.mla_block_tokens = p.mla_block_tokens
),
shared AS (
    -- the shared prefix and the prompt of n samples, paid once (272): engine rows in the release's blocks,
    -- first principles in bytes of the growing (full-attention) part — per rank, like the pool
    SELECT b.*,
           b.prefix_tokens * b.growing_rank_token_bytes AS prefix_rank_bytes,
           greatest(coalesce(b.prompt_tokens, b.prefix_tokens), b.prefix_tokens) * b.growing_rank_token_bytes
               AS prompt_rank_bytes,
           -- per request while it decodes (the window-bounded figure where the release frees the blocks behind it, 220)
           engine_seq_blocks(b.engine_running_blocks_per_request, b.prefix_blocks, b.prompt_blocks, b.samples)
               AS request_blocks
    FROM base b
),
admitted AS (
    SELECT s.*,
           greatest(0, floor((s.pool_bytes - s.prefix_rank_bytes)
                             / (s.samples * (s.held_rank_bytes - s.prompt_rank_bytes)
                                + (s.prompt_rank_bytes - s.prefix_rank_bytes))))::BIGINT AS fp_requests,
           CASE WHEN s.pool_basis <> 'engine' THEN NULL
                WHEN s.prefix_blocks = 0 AND (s.samples = 1 OR s.prompt_blocks = 0)
                THEN s.engine_seqs_unshared // s.samples   -- nothing shared: the release's own admission
                WHEN NOT s.engine_starts OR s.engine_request_len_capped THEN 0
                ELSE greatest(0, least(s.admission_max_num_seqs // s.samples,
                                       -- one request's prefill chunk in flight holds the start-up figure's
                                       -- extra (0 without a window-bounded group: engine_running_concurrency, 213)
                                       floor((s.engine_num_blocks - s.prefix_blocks
                                              - (s.engine_blocks_per_request - s.engine_running_blocks_per_request))
                                             / s.request_blocks)))
                END::BIGINT AS engine_requests
    FROM shared s
),
cap AS (
    SELECT b.*, b.seq_rank_bytes * b.tp AS kv_read_bytes_per_seq,
           coalesce(b.engine_requests, b.fp_requests) AS capacity_requests,
           coalesce(b.engine_requests, b.fp_requests) * b.samples AS max_seqs_per_replica,
           b.fp_requests * b.samples AS fp_seqs,
           b.weights_bytes * params_read(b.params_total, b.params_active, b.moe_experts, b.moe_experts_per_token,
                                         1) / b.params_total AS weights_read_b1,
           b.weights_bytes * params_read(b.params_total, b.params_active, b.moe_experts, b.moe_experts_per_token,
                                         b.prefill_tokens) / b.params_total AS prefill_weights_read
    FROM admitted b
),
rate AS (
    SELECT c.*,
           prefill_floor_s(c.prefill_tokens, c.prefill_flop_per_token, c.prefill_weights_read, c.prefill_seq_bytes,
                           c.ceiling_peak, c.ceiling_bw, c.ar_s) AS prefill_floor_s
    FROM cap c
),
batch AS (
    -- ub: the closed form of decode_step_s (104) with the weight read of ONE sequence.  For a dense model the step
    -- is linear in B on each side of its GEMMs' greatest():
    --   greatest((W/bw_ceiling + B·ar)/eb, B·(2P/peak_ceiling + ar/ec)) + B·a,   a = greatest(kv/bw, (f − 2P)/peak)
    -- (a: one sequence's attention at its binding roof, at the efficiencies), so the largest B within tpot_s is
    --   least(floor((tpot − W/bw) ÷ (ar/eb + a)), floor(tpot ÷ (2P/peak + ar/ec + a)))   — exact.
    -- For MoE it is an upper bound (a larger batch reads more experts; the expert GEMMs' roofs are taken apart from
    -- the dense ones in decode_step_s): the largest B in [0, ub] whose step — costed with the experts THAT batch
    -- reads and its routed activations — is within tpot_s is found by bisection (lo stays feasible, hi infeasible;
    -- 40 halvings cover any range).
    SELECT r.*,
           CASE WHEN r.moe_experts IS NULL OR r.moe_experts <= r.moe_experts_per_token OR r.ub < 1 THEN r.ub
                ELSE list_reduce(range(40), lambda acc, i:
                         CASE WHEN acc.hi - acc.lo <= 1 THEN acc
                              WHEN decode_step_s(r.weights_bytes, r.params_total, r.params_active, r.moe_experts,
                                                 r.moe_experts_per_token, (acc.lo + acc.hi) // 2, r.kv_read_bytes_per_seq,
                                                 r.flop_per_token, r.ceiling_bw, r.ceiling_peak, r.ar_s, r.eb,
                                                 r.ec, r.moe_act_bytes, host_s_per_seq := r.host_s) <= tpot_s
                              THEN struct_pack(lo := (acc.lo + acc.hi) // 2, hi := acc.hi)
                              ELSE struct_pack(lo := acc.lo, hi := (acc.lo + acc.hi) // 2) END,
                         struct_pack(lo := 0, hi := r.ub + 1)).lo
           END::BIGINT AS rate_max_batch
    FROM (SELECT r.*,
                 least(floor((tpot_s - r.weights_read_b1 / r.bw)
                             / (coalesce(r.ar_s, 0) / r.eb + r.attn_seq_s)),
                       floor(tpot_s / (2 * r.params_active / r.peak + coalesce(r.ar_s, 0) / r.ec + r.attn_seq_s))
                       )::BIGINT AS ub
          FROM (SELECT r.*,
                       -- one sequence's attention at its binding roof, at the efficiencies, and its host time per
                       -- step (104 decode_step_s): the per-sequence part of the step on both sides
                       greatest(r.kv_read_bytes_per_seq / r.bw, (r.flop_per_token - 2 * r.params_active) / r.peak)
                       + r.host_s AS attn_seq_s
                FROM rate r) r) r
),
judged AS (
    SELECT b.*,
           CASE WHEN NOT coalesce(b.support_runs, TRUE) THEN 'platform: ' || b.support_reason
                WHEN NOT coalesce(b.tp_shards, TRUE) THEN tp_sharding_reason(b.attention_heads, b.bad_kv_heads)
                WHEN b.bw IS NULL THEN 'no bandwidth figure for this hardware'
                WHEN b.tp > 1 AND b.interconnect_bytes_per_s IS NULL
                    THEN 'tp > 1 needs an interconnect figure for this hardware'
                WHEN b.tp > 1 AND b.interconnect_domain_size IS NULL
                    THEN 'tp > 1 needs the interconnect''s domain size (devices it links) for this hardware'
                WHEN NOT b.tp_fits_interconnect
                    THEN format('the interconnect links {} devices at its stated bandwidth: a wider TP group is'
                                ' not planned', b.interconnect_domain_size)
                WHEN b.pool_bytes <= 0 AND b.rank_weights_bytes + b.resident_bytes > b.claimed_bytes
                    THEN 'the weights alone do not fit the device memory at this TP'
                -- the weights fit the claimed memory, but the runtime reserve (the engine release's activation
                -- and sampler peak, CUDA graphs, non-torch memory; or the simple budget's reserve) leaves no pool
                WHEN b.pool_bytes <= 0
                    THEN 'the weights fit, but with the runtime reserve (activations, CUDA graphs, sampler) no KV'
                         || ' pool is left at this TP'
                WHEN b.pool_basis = 'engine' AND NOT b.engine_starts
                    THEN 'engine: refuses to start (one request of this context does not fit its KV cache)'
                -- a release that caps the request length (accounting.long_request cap_request_len: SGLang,
                -- TensorRT-LLM) starts, and serves no request of this context
                WHEN b.pool_basis = 'engine' AND b.engine_request_len_capped
                    THEN 'engine: starts, but caps the request length below this context (one request of it does'
                         || ' not fit its KV cache)'
                WHEN b.pool_basis = 'engine' AND b.max_seqs_per_replica < 1
                    THEN 'engine: admits no sequence of this context'
                WHEN b.pool_basis = 'engine' AND b.capacity_requests < 1
                    THEN 'engine: admits no request of this workload (its n samples and the shared prefix)'
                WHEN b.capacity_requests < 1 AND b.samples > 1
                    THEN 'memory: one request''s samples do not fit the KV pool'
                WHEN b.capacity_requests < 1 THEN 'memory: one sequence of this context does not fit the KV pool'
                WHEN b.rate_max_batch < 1 THEN 'tpot: a single sequence decodes slower than the TPOT target'
                WHEN b.rate_max_batch < b.samples
                    THEN 'tpot: one request''s samples decoded together are slower than the TPOT target'
                WHEN ttft_s IS NOT NULL AND b.prefill_floor_s IS NULL
                    THEN 'ttft: no FLOP figure for this hardware to check the TTFT target against'
                WHEN ttft_s IS NOT NULL AND b.prefill_floor_s > ttft_s THEN 'ttft: the prefill floor exceeds the TTFT target'
           END AS reason
    FROM batch b
),
sized AS (
    SELECT j.*, j.reason IS NULL AS feasible,
           CASE WHEN j.reason IS NULL
                THEN ceil(j.requests / least(j.capacity_requests, j.rate_max_batch // j.samples))::BIGINT END AS replicas
    FROM judged j
),
run AS (
    -- a request's samples stay on one replica (they share its prompt blocks): batches are whole requests
    SELECT s.*, ceil(s.requests / s.replicas)::BIGINT * s.samples AS batch_per_replica
    FROM sized s
)
SELECT r.model_id, r.hardware_id, r.engine_id, r.weights_dtype, r.kv_dtype, r.tp,
       r.requests AS workload_users, context_tokens AS workload_context_tokens,
       tpot_s AS workload_tpot_s, ttft_s AS workload_ttft_s,
       input_tokens AS workload_input_tokens, output_tokens AS workload_output_tokens,
       r.prefix_tokens AS workload_shared_prefix_tokens, r.samples AS workload_parallel_samples,
       request_rate_per_s AS workload_request_rate_per_s, r.requests * r.samples AS workload_sequences,
       r.read_tokens AS workload_read_tokens,
       r.capacity_requests, r.prefix_blocks AS shared_prefix_blocks, r.request_blocks,
       r.prefix_rank_bytes * r.tp AS shared_prefix_bytes,
       r.feasible, r.reason, r.tp_fits_interconnect,
       r.max_seqs_per_replica,
       CASE WHEN r.rate_max_batch IS NOT NULL THEN greatest(r.rate_max_batch, 0) END AS rate_max_batch,
       r.replicas, r.batch_per_replica, r.replicas * r.tp AS gpus,
       r.price_usd_per_hour * r.replicas * r.tp AS usd_per_hour,
       CASE WHEN NOT r.feasible THEN NULL
            WHEN r.requests <= least(r.capacity_requests, r.rate_max_batch // r.samples) THEN 'none'
            WHEN r.capacity_requests <= r.rate_max_batch // r.samples
                THEN CASE WHEN r.pool_basis = 'engine' THEN 'admission' ELSE 'capacity' END
            ELSE 'tpot' END AS binding_constraint,
       r.rate_basis, r.bandwidth_efficiency, r.compute_efficiency, r.efficiency_evidence,
       decode_step_s(r.weights_bytes, r.params_total, r.params_active, r.moe_experts, r.moe_experts_per_token,
                     r.batch_per_replica, r.kv_read_bytes_per_seq, r.flop_per_token, r.ceiling_bw, r.ceiling_peak, r.ar_s,
                     r.eb, r.ec, r.moe_act_bytes, host_s_per_seq := r.host_s) AS tpot_at_batch_s,
       decode_step_s(r.weights_bytes, r.params_total, r.params_active, r.moe_experts, r.moe_experts_per_token,
                     1, r.kv_read_bytes_per_seq, r.flop_per_token, r.ceiling_bw, r.ceiling_peak, r.ar_s, r.eb, r.ec,
                     r.moe_act_bytes, host_s_per_seq := r.host_s) AS single_seq_tpot_s,
       -- one step with nothing in context: the weights (and any fixed-size window or recurrent state) read once;
       -- above tpot_s no context is short enough (max_context_tokens 0), and this is what to say instead
       decode_step_s(r.weights_bytes, r.params_total, r.params_active, r.moe_experts, r.moe_experts_per_token,
                     1, r.constant_rank_bytes * r.tp, r.constant_flop, r.ceiling_bw, r.ceiling_peak, r.ar_s, r.eb,
                     r.ec, r.moe_act_bytes, host_s_per_seq := r.host_s) AS empty_context_step_s,
       r.prefill_floor_s,
       r.kv_read_bytes_per_seq, r.pool_bytes * r.tp AS replica_pool_bytes, r.weights_bytes,
       r.fp_seqs AS first_principles_seqs, r.pool_basis, r.engine_starts, r.engine_request_len_capped,
       r.knob_util AS gpu_memory_utilization, r.util_is_default, r.knob_max_num_seqs AS max_num_seqs,
       r.max_num_seqs_is_default, r.knob_batched AS max_num_batched_tokens, r.default_batched,
       r.knob_eager AS enforce_eager, r.knob_spec AS num_speculative_tokens, r.knob_block_size AS block_size,
       r.block_size_is_default,
       -- memory's and the TPOT's bound, and for a TTFT miss also the prefill's (ttft_context_tokens)
       -- (a row refused for memory or the TPOT that misses the TTFT too is bounded by both: its longest context is
       -- the shorter, so a 128Ki prompt of seconds is never the best option against a 30 ms TTFT)
       CASE WHEN r.reason LIKE 'ttft: no FLOP%' THEN NULL   -- no FLOP figure: no TTFT to bound the context by
            WHEN r.ttft_context_tokens IS NULL THEN r.memory_context_tokens
            WHEN r.reason LIKE 'ttft:%'
                THEN least(coalesce(r.memory_context_tokens, r.ttft_context_tokens), r.ttft_context_tokens)
            WHEN r.memory_context_tokens IS NULL THEN NULL   -- a refusal no shorter context mends
            ELSE least(r.memory_context_tokens, r.ttft_context_tokens)
            END AS max_context_tokens,
       r.ttft_context_tokens, r.one_token_prefill_floor_s,
       -- the decode step's inputs at the replica's ceilings (decode_step_s), for plan_levers (kvreg/sql/284) to
       -- cost the recommended row's batch at another bandwidth efficiency with the same formula
       r.params_total, r.params_active, r.moe_experts, r.moe_experts_per_token, r.flop_per_token,
       r.ceiling_bw, r.ceiling_peak, r.ar_s AS allreduce_s_per_token, r.moe_act_bytes, r.host_s AS host_s_per_seq
FROM (
    SELECT r.*,
           -- the longest context whose prompt meets the TTFT (a TTFT miss only): the largest prompt P in
           -- [0, the workload's prompt] whose prefill_floor_s (105) at P tokens is within ttft_s, by bisection (the
           -- floor grows with P; lo stays within, hi beyond; 40 halvings), plus the output tokens the workload holds
           -- beyond its prompt.  NULL without a FLOP figure (no floor to check).
           CASE WHEN ttft_s IS NOT NULL AND r.prefill_floor_s > ttft_s THEN list_reduce(range(40), lambda acc, i:
                    CASE WHEN acc.hi - acc.lo <= 1 THEN acc
                         WHEN prompt_prefill_floor_s((acc.lo + acc.hi) // 2, r.params_total, r.params_active,
                                                     r.moe_experts, r.moe_experts_per_token, r.pf_hidden_size,
                                                     r.pf_attn_flop, r.pf_bounded_groups, r.pf_state_flop,
                                                     r.pf_state_bytes, r.growing_rank_token_bytes, r.weights_bytes,
                                                     r.tp, r.ceiling_peak, r.ceiling_bw, r.ar_s) <= ttft_s
                         THEN struct_pack(lo := (acc.lo + acc.hi) // 2, hi := acc.hi)
                         ELSE struct_pack(lo := acc.lo, hi := (acc.lo + acc.hi) // 2) END,
                    struct_pack(lo := 0::BIGINT, hi := r.prefill_tokens::BIGINT)).lo
                    + (context_tokens - r.prefill_tokens) END::BIGINT AS ttft_context_tokens,
           -- a one-token prompt's floor (the weights read once, 105): above ttft_s no prompt is short enough
           CASE WHEN ttft_s IS NOT NULL
                THEN prompt_prefill_floor_s(1, r.params_total, r.params_active, r.moe_experts,
                                            r.moe_experts_per_token, r.pf_hidden_size, r.pf_attn_flop,
                                            r.pf_bounded_groups, r.pf_state_flop, r.pf_state_bytes,
                                            r.growing_rank_token_bytes, r.weights_bytes, r.tp, r.ceiling_peak,
                                            r.ceiling_bw, r.ar_s) END AS one_token_prefill_floor_s
    FROM (
        SELECT r.*,
               -- the longest context one sequence fits and meets the TPOT at, linear beyond every window: not for a
               -- TP that cannot shard the heads or reach the group, nor a platform the release does not run, nor
               -- weights that leave no pool (no context mends them)
               CASE WHEN r.growing_token_bytes > 0 AND r.bw IS NOT NULL AND r.pool_bytes > 0
                         AND tp_planned(r.tp, r.tp_shards, r.interconnect_bytes_per_s, r.interconnect_domain_size)
                         AND coalesce(r.support_runs, TRUE) THEN greatest(0, floor(least(
                        (r.pool_bytes - r.constant_rank_bytes) / (r.growing_token_bytes / r.tp),
                        ((tpot_s - coalesce(r.ar_s, 0) / r.eb) * r.bw - r.weights_read_b1 - r.moe_act_bytes
                         - r.constant_rank_bytes * r.tp) / r.growing_token_bytes,
                        CASE WHEN r.flop_per_context_token > 0
                             THEN ((tpot_s - coalesce(r.ar_s, 0) / r.ec) * r.peak - r.constant_flop)
                                  / r.flop_per_context_token END
                    )))::BIGINT END AS memory_context_tokens
        FROM run r) r) r
-- a bad efficiency_basis is an error naming the allowed values, whatever the caller reads (a constant: DuckDB folds
-- it before any row; ::VARCHAR so a number is named, not a conversion error)
WHERE CASE WHEN coalesce(efficiency_basis::VARCHAR, 'fitted') IN ('fitted', 'vendor_measured') THEN TRUE
           ELSE error('plans: efficiency_basis is ''fitted'' (the default) or ''vendor_measured'', not '''
                      || efficiency_basis::VARCHAR || '''') END
;

-- plan_usd_per_million_output_tokens(usd_per_hour, replicas, batch_per_replica, tpot_at_batch_s): scalar macro,
-- what a plan's output costs: usd_per_hour ÷ (replicas × batch_per_replica ÷ tpot_at_batch_s × 3,600) × 10^6 USD per
-- million output tokens (each running sequence emits one token per decode step; prefill is paid in the same
-- hours and not counted apart).  NULL without a price.  Used by the report's sensitivity, cost chart and the
-- second plan at the vendor's measured efficiency, so the figure is written once.
CREATE OR REPLACE MACRO plan_usd_per_million_output_tokens(usd_per_hour, replicas, batch_per_replica,
                                                           tpot_at_batch_s) AS
    usd_per_hour / (replicas * batch_per_replica / tpot_at_batch_s * 3600) * 1e6
