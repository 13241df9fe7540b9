-- engine_capacity_at(context_list, max_num_batched_tokens := NULL, gpu_memory_utilization := NULL,
--   max_num_seqs := NULL, enforce_eager := NULL, num_speculative_tokens := NULL, available_kv_bytes := NULL,
--   batched_axis := NULL, block_size := NULL): table macro, what an engine release will log and admit at any max_model_len,
-- beside first principles — the ONE definition of the engine's block and admission arithmetic.
--   The engine knobs (NULL = the release's default for the device) go to engine_memory_pools_at (205);
--   available_kv_bytes, when given, replaces the predicted pool ("Available KV cache memory" read from a
--   log): then there is no device (hardware_id, weights_dtype NULL), one row per engine × served model ×
--   kv_dtype × tp, and max_num_seqs defaults to the release's small-GPU value (engine_capacity_for_memory).
--   batched_axis (a LIST) takes every max_num_batched_tokens of it instead of one value (the view).
--   block_size (the --block-size knob) goes to engine_kv_layout_at (202) and engine_request_blocks_at (215): the
--   pages, blocks and blocks per request at that block size (MLA and hybrid rules in 200/201); a value the
--   release does not accept (engine_accounting.block_sizes) gives no rows for that release.
--   only_models / only_hardware / only_engines (VARCHAR[] of served model, hardware and engine ids; NULL = all): those
--   rows only, passed to the first tables the chain reads (engine_memory_pools_at, engine_request_blocks_at, the fp
--   sums, the given-memory rows).  A caller's own WHERE on the result does not reach them (list_contains does not
--   cross the joins' equalities): the report's four queries paid the whole registry's admission, ~0.6 s each.
--   Same rows as the unfiltered macro restricted to the lists (tests/test_engine_capacity_filters.py).
-- Views built on it: engine_capacity (this file: over the axis tables), engine_capacity_for_memory (221),
--   capacity_at (045: the engine figures every per-scenario view plans on).
-- Grain: one row per served model × hardware × engine × weights_dtype × kv_dtype × tp × max_model_len
--   (each distinct positive value of context_list) × max_num_batched_tokens (default_batched marks the
--   release's default).
-- Inputs: engine_memory_pools_at, engine_kv_layout_at, engine_request_blocks_at, engine_accounting,
--   kv_sequence_costs_at, served_models, served_tp_sharding (037); scalar macros engine_concurrency, engine_logged_tokens,
--   engine_starts, engine_admitted_seqs.
-- Units: bytes per device, blocks, tokens, sequences.
--   page_bytes, block_size_tokens, num_groups, group_size, padding_layers   (engine_kv_layout)
--   available_kv_bytes      predicted by the release's reserve model (engine_memory_pools_at), or given
--   num_blocks              floor(available / block_bytes) (§3 get_num_blocks), 0 when negative
--   logged_kv_tokens        "GPU KV cache size" as this release computes it (§4)
--   logged_max_concurrency  "Maximum concurrency for L tokens per request" (unrounded): num_blocks ÷
--                           concurrency_blocks_per_request (engine_request_blocks_at; = blocks_per_request except
--                           for DeepSeek-V4's layer tuples)
--   running_blocks_per_request  blocks the scheduler holds for a request decoding at L: where the release frees the
--                           blocks behind a window (accounting.frees_out_of_window_blocks), 215's window-bounded figure
--                           (W − 1 tokens + 1 block per sliding group, no prefill chunk); else (and for DeepSeek-V4's
--                           page-weighted layouts) blocks_per_request
--   running_concurrency     the requests of L the scheduler keeps running (unrounded, engine_running_concurrency, 213):
--                           where running_blocks_per_request < blocks_per_request (vLLM V1 with a window-bounded
--                           group), (num_blocks − null − blocks_per_request +
--                           running_blocks_per_request) ÷ running_blocks_per_request — every request decoding at L but
--                           one whose prefill chunk is in flight; otherwise logged_max_concurrency
--   admitted_seqs           floor(running_concurrency) capped by max_num_seqs; 0 when it does not start or caps the
--                           request length below max_model_len (no request of that length is served)
--   starts                  the release loads the model at this TP (served_tp_sharding, 037: the query heads and
--                           every KV head count split, else QKVParallelLinear's `divide` asserts at load) and its
--                           long_request rule passes (engine_starts, 213): 'refuse_start' (vLLM) when one request of L
--                           fits, num_blocks (− the null block where the release subtracts it) ≥ blocks_per_request
--                           (check_enough_kv_cache_memory); 'cap_request_len' when the pool holds a block
--   request_len_capped      it starts but one request of max_model_len does not fit: a 'cap_request_len' release
--                           (accounting.long_request: SGLang, TensorRT-LLM) serves shorter requests only (213)
--   refusal                 why it does not start: 'tp_heads' (the heads do not split at this TP: no pool, blocks or
--                           admission is logged, so logged_kv_tokens and logged_max_concurrency are NULL; the words:
--                           tp_sharding_reason, 037) or 'kv_cache' (one request does not fit, or no block for a capping release); NULL when it starts
--   first_principles_tokens pool tokens by per-kind arithmetic from the same available memory:
--                           available ÷ seq_bytes(L) × L (windows at min(L, W), state per sequence)
--   first_principles_seqs   floor(available ÷ seq_bytes(L))
--   first_principles_ratio  first_principles_tokens ÷ logged_kv_tokens (NULL when the engine logs 0)
--   max_num_seqs            the cap on running sequences: the knob; else the release's running_requests_rule on its
--                           pool in tokens (num_blocks × block size) where it has one (SGLang: min(T // 2, clamp(⌊T ÷ L × 512⌋, 2048, 4096))),
--                           else its max_num_seqs default
--   gpu_memory_utilization, max_num_batched_tokens, enforce_eager, num_speculative_tokens:
--                           the settings used; max_num_seqs_is_default, util_is_default, default_batched
--                           say whether each is the release default
--   block_size, block_size_is_default  the block size set (the knob, else the release's) and whether it is the
--                           release default; block_size_tokens is the smallest attention block actually used
--                           (after MLA and hybrid alignment), which can differ from it
--   mla_block_size_forced   the knob was given but the release keeps its MLA backend's block (vLLM ≤0.16)
--   mla_block_tokens        the MLA block of this device (engine_mla_backend for the hardware's architecture and
--                           the kv_dtype; the release's block_size_mla with no device); 0 without MLA layers
--   mla_backend             the MLA attention backend the release picks on this device (NULL: no MLA layers, or a
--                           device no rule names)
-- Every column reference is qualified: a macro parameter shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_capacity_at(context_list, max_num_batched_tokens := NULL,
                                           gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                           enforce_eager := NULL, num_speculative_tokens := NULL,
                                           available_kv_bytes := NULL, batched_axis := NULL,
                                           block_size := NULL, only_models := NULL, only_hardware := NULL,
                                           only_engines := NULL) AS TABLE
WITH pools AS (
    SELECT p.engine_id, p.model_id, p.hardware_id, p.weights_dtype, p.tp, p.max_num_batched_tokens,
           p.default_batched, p.max_num_seqs, p.max_num_seqs_is_default, p.usable_bytes, p.gpu_memory_utilization,
           p.util_is_default, p.enforce_eager, p.num_speculative_tokens, p.weights_bytes_per_rank, p.reserve_bytes,
           p.available_kv_bytes, h.architecture AS hardware_architecture
    FROM engine_memory_pools_at(max_num_batched_tokens := max_num_batched_tokens,
                                gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs,
                                enforce_eager := enforce_eager, num_speculative_tokens := num_speculative_tokens,
                                batched_axis := batched_axis, only_models := only_models,
                                only_hardware := only_hardware, only_engines := only_engines) p
    LEFT JOIN hardware h ON h.hardware_id = p.hardware_id
    WHERE available_kv_bytes IS NULL
    UNION ALL
    -- a given "Available KV cache memory": the block arithmetic alone, on no device
    SELECT a.engine_id, s.served_id, NULL::VARCHAR, NULL::VARCHAR, t.tp, b.batched,
           b.batched = a.max_num_batched_tokens, coalesce(max_num_seqs, a.max_num_seqs)::BIGINT,
           coalesce(max_num_seqs, a.max_num_seqs) = a.max_num_seqs, NULL::DOUBLE,
           coalesce(gpu_memory_utilization, e.gpu_memory_utilization)::DOUBLE,
           coalesce(gpu_memory_utilization, e.gpu_memory_utilization) = e.gpu_memory_utilization,
           coalesce(enforce_eager, false), num_speculative_tokens::BIGINT, NULL::DOUBLE, NULL::DOUBLE,
           available_kv_bytes::DOUBLE, NULL::VARCHAR
    FROM engine_accounting a JOIN engines e ON e.engine_id = a.engine_id
    CROSS JOIN (SELECT DISTINCT served_id FROM served_models) s
    CROSS JOIN tp_sizes t
    CROSS JOIN LATERAL (SELECT unnest(coalesce(batched_axis, [coalesce(max_num_batched_tokens, a.max_num_batched_tokens)]))::BIGINT
                        AS batched) b
    WHERE available_kv_bytes IS NOT NULL
      AND (only_models IS NULL OR list_contains(only_models, s.served_id))
      AND (only_engines IS NULL OR list_contains(only_engines, a.engine_id))
),
fp AS (   -- first principles at each max_model_len: the one per-sequence formula (015), summed over
          -- the served models (a target and its draft share the pool)
    SELECT s.served_id AS model_id, k.kv_dtype, k.tp, k.context_tokens AS max_model_len, sum(k.seq_bytes) AS fp_seq_bytes
    FROM served_models s
    JOIN kv_sequence_costs_at(context_list) k ON k.model_id = s.model_id
    WHERE only_models IS NULL OR list_contains(only_models, s.served_id)
    GROUP BY ALL
),
base AS (
    SELECT p.model_id, p.hardware_id, p.engine_id, p.weights_dtype, k.kv_dtype, p.tp, r.max_model_len,
           p.max_num_batched_tokens, p.default_batched, p.max_num_seqs, p.max_num_seqs_is_default,
           p.util_is_default, p.enforce_eager, p.num_speculative_tokens,
           k.layout_mode, k.page_bytes, k.block_size_tokens, k.num_groups, k.group_size, k.padding_layers,
           k.block_bytes, r.blocks_per_request, r.concurrency_blocks_per_request,
           -- what the scheduler holds for a decoding request (215: NULL where it holds the start-up figure)
           coalesce(r.running_blocks_per_request, r.blocks_per_request) AS running_blocks_per_request,
           p.usable_bytes, p.gpu_memory_utilization, p.weights_bytes_per_rank, p.reserve_bytes, p.available_kv_bytes,
           greatest(0, floor(p.available_kv_bytes / k.block_bytes))::BIGINT AS num_blocks,
           a.concurrency_rule, a.logged_tokens_rule, a.null_block_in_fit_check, a.long_request,
           a.running_requests_pool_divisor, a.running_requests_per_context, a.running_requests_min_requests,
           a.running_requests_max_requests,
           k.sliding_stored_as_full, k.chunked_stored_as_full, k.recurrent_outside_pool, k.k_eq_v_stored_twice,
           k.mla_block_size, k.sliding_prefill_reserve, k.recurrent_page_alignment, k.has_padding_layers, k.swa_pool_ratio,
           k.block_size, k.block_size_is_default, k.mla_block_size_forced,
           k.mla_block_tokens, CASE WHEN k.mla_block_tokens > 0 THEN mb.mla_backend END AS mla_backend,
           f.fp_seq_bytes, coalesce(sh.shards, TRUE) AS tp_shards
    FROM pools p
    JOIN engine_kv_layout_at(block_size := block_size) k ON k.engine_id = p.engine_id AND k.model_id = p.model_id AND k.tp = p.tp
    -- the device's MLA backend and block (200 engine_mla_backend, complete over every architecture, NULL = no device:
    -- the release's fallback): a model with MLA layers reads the layout rows of its device's block, others the 0 rows.
    -- An inner join right after the layout, so it filters before the per-context rows are made
    JOIN engine_mla_backend mb ON mb.engine_id = p.engine_id AND mb.kv_dtype = k.kv_dtype AND mb.sparse = k.mla_sparse
                              AND mb.architecture IS NOT DISTINCT FROM p.hardware_architecture
                              AND (k.mla_block_tokens = 0 OR k.mla_block_tokens = mb.mla_block_tokens)
    -- the batched-token settings the pools can have, without reading the pools again (a CTE read twice is
    -- materialised whole, which would stop the filters of a one-scenario query reaching its scans)
    JOIN engine_request_blocks_at(context_list,
                                  coalesce(batched_axis,
                                           CASE WHEN max_num_batched_tokens IS NOT NULL
                                                THEN [max_num_batched_tokens]::BIGINT[] END,
                                           (SELECT list(DISTINCT v.t) FILTER (WHERE v.t IS NOT NULL)
                                            FROM (SELECT unnest([x.max_num_batched_tokens,
                                                                 x.max_num_batched_tokens_large_gpu]) AS t
                                                  FROM engine_accounting x
                                                  UNION ALL   -- the per-device defaults of a mem_fraction_rule (205)
                                                  SELECT y.chunked_prefill_tokens FROM engine_mem_fraction_tiers y) v)),
                                  block_size := block_size, only_models := only_models,
                                  only_engines := only_engines,
                                  -- at the release defaults a pool's setting is one of its release's (205)
                                  release_batched := batched_axis IS NULL AND max_num_batched_tokens IS NULL) r
      ON r.engine_id = k.engine_id AND r.model_id = k.model_id AND r.kv_dtype = k.kv_dtype
     AND r.tp = k.tp AND r.mla_block_tokens = k.mla_block_tokens AND r.max_num_batched_tokens = p.max_num_batched_tokens
    JOIN engine_accounting a ON a.engine_id = p.engine_id
    JOIN fp f ON f.model_id = k.model_id AND f.kv_dtype = k.kv_dtype AND f.tp = k.tp AND f.max_model_len = r.max_model_len
    -- whether the release can load the served set at this TP at all (037; a TP the registry's sets all have)
    LEFT JOIN served_tp_sharding sh ON sh.served_id = p.model_id AND sh.tp = p.tp
),
adm AS (
    -- a release that cannot split the heads stops while building the model (037), before it profiles memory or
    -- logs a KV cache: no concurrency, no logged tokens, and it does not start whatever the memory
    SELECT b.*,
           CASE WHEN b.tp_shards
                THEN engine_concurrency(b.num_blocks, b.concurrency_blocks_per_request, b.block_size_tokens,
                                        b.max_model_len, b.concurrency_rule) END AS logged_max_concurrency,
           b.tp_shards AND engine_starts(b.num_blocks, b.blocks_per_request, b.null_block_in_fit_check,
                                         b.long_request) AS starts,
           CASE WHEN NOT b.tp_shards THEN 'tp_heads'
                WHEN NOT engine_starts(b.num_blocks, b.blocks_per_request, b.null_block_in_fit_check, b.long_request)
                THEN 'kv_cache' END AS refusal,
           -- started, but one request of max_model_len does not fit: the release caps the request length (213)
           b.tp_shards AND engine_starts(b.num_blocks, b.blocks_per_request, b.null_block_in_fit_check, b.long_request)
               AND NOT engine_request_fits(b.num_blocks, b.blocks_per_request, b.null_block_in_fit_check)
               AS request_len_capped
    FROM base b
),
logged AS (
    SELECT d.*,
           CASE WHEN d.tp_shards
                THEN engine_logged_tokens(d.num_blocks, d.num_groups, d.block_size_tokens, d.logged_max_concurrency,
                                          d.max_model_len, d.logged_tokens_rule) END AS logged_kv_tokens,
           greatest(0, floor(d.available_kv_bytes / d.fp_seq_bytes * d.max_model_len))::BIGINT
               AS first_principles_tokens
    FROM adm d
)
-- max_num_seqs: a release whose default cap on running requests comes from its pool (SGLang: running_requests_rule,
-- 213 engine_max_num_seqs) uses it where the knob is not set; elsewhere the knob or the release's default (205).  The
-- pool in tokens is num_blocks × block size, SGLang's max_total_num_tokens (its logged_tokens_rule
-- blocks_x_block_size); read from logged_kv_tokens, the plans over the whole registry ran past 3 GB
SELECT g.* EXCLUDE (fp_seq_bytes, tp_shards, long_request, running_requests_pool_divisor, running_requests_per_context,
                    running_requests_min_requests, running_requests_max_requests)
           REPLACE (engine_max_num_seqs(max_num_seqs, g.max_num_seqs, g.num_blocks * g.block_size_tokens, g.max_model_len,
                                        g.running_requests_pool_divisor, g.running_requests_per_context,
                                        g.running_requests_min_requests, g.running_requests_max_requests)
                    AS max_num_seqs),
       -- the requests the scheduler keeps running (the logged figure, or bounded by the window where the release frees
       -- the blocks behind it: 213)
       engine_running_concurrency(g.num_blocks, g.blocks_per_request, g.running_blocks_per_request,
                                  g.null_block_in_fit_check, g.logged_max_concurrency)
           AS running_concurrency,
       engine_admitted_seqs(g.starts AND NOT g.request_len_capped,
                            engine_running_concurrency(g.num_blocks, g.blocks_per_request, g.running_blocks_per_request,
                                                       g.null_block_in_fit_check, g.logged_max_concurrency),
                            engine_max_num_seqs(max_num_seqs, g.max_num_seqs, g.num_blocks * g.block_size_tokens, g.max_model_len,
                                                g.running_requests_pool_divisor, g.running_requests_per_context,
                                                g.running_requests_min_requests, g.running_requests_max_requests))
           AS admitted_seqs,
       g.logged_tokens_rule = 'blocks_per_group_x_min_block_size' AND g.num_groups > 1 AS grouped_min_block_report,
       -- the quirk "one request of max_model_len does not fit the pool" (check_enough_kv_cache_memory): a release that
       -- cannot split the heads (refusal 'tp_heads') stops before it profiles memory, for another reason
       coalesce(g.refusal = 'kv_cache', FALSE) AS does_not_start,
       g.has_padding_layers AS padding_layers_wasted,
       greatest(0, floor(g.available_kv_bytes / g.fp_seq_bytes))::BIGINT AS first_principles_seqs,
       g.first_principles_tokens / nullif(g.logged_kv_tokens, 0) AS first_principles_ratio
FROM logged g;

-- engine_capacity: engine_capacity_at over the max_model_lens and batched_tokens axes, every knob at the
-- release default (columns, grain and units as the macro above).
CREATE OR REPLACE VIEW engine_capacity AS
SELECT * FROM engine_capacity_at((SELECT list(max_model_len ORDER BY max_model_len) FROM max_model_lens),
                                 batched_axis := (SELECT list(max_num_batched_tokens ORDER BY max_num_batched_tokens)
                                                  FROM batched_tokens))
