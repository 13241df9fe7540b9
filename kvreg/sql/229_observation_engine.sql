-- observation_engine: each observation with the engine release's rules and, where kvreg models the served model at
-- that release, its KV layout and per-request blocks — the ONE place an observation meets the engine tables; the
-- calibration (230) predicts from it and check 208 (observation_figures_disagree) compares the log's own figures
-- with it.
-- Grain: one row per observation (registry/observations); layout columns NULL where the model, engine, kv dtype or
--   TP is not modelled.
-- Inputs: observations, models, hardware, engine_accounting, engine_kv_layout, engine_request_blocks_at,
--   engine_mla_backend (the layout of the logged device's MLA block: its hardware architecture); scalar macro
--   engine_large_gpu (203).
-- Units: bytes per device (block_bytes: one block id across the shared tensors, per pipeline stage), tokens, blocks.
--   kv: kv_dtype, bf16 when not logged ('auto' = the model dtype); wdtype: the weights dtype (NULL for a quantized
--   checkpoint nobody stated); L: max_model_len, else the 'Maximum concurrency for L tokens' figure; default_T /
--   default_seqs: the release's max_num_batched_tokens / max_num_seqs on this device (large-GPU defaults).
--   available_half_unit_bytes: half a unit of the printed available memory's last decimal; available_blocks_low/high:
--   the blocks that memory holds at its two ends; tokens_implied_blocks: the blocks the "GPU KV cache size" implies
--   where the release's token rule inverts.
-- Rules: pipeline parallel stages hold ceil(layers / pp) layers (single-group layouts only; engine_accounting.md §7).
CREATE OR REPLACE VIEW observation_engine AS
WITH o AS (
    SELECT o.*, coalesce(o.kv_dtype, 'bf16') AS kv,
           -- a quantized checkpoint whose weights dtype nobody stated has no end-to-end figure (never the model's dtype)
           CASE WHEN o.weights_dtype IS NULL AND o.quantization IS NOT NULL THEN NULL
                ELSE coalesce(o.weights_dtype, m.dtype) END AS wdtype,
           coalesce(o.max_model_len, o.max_concurrency_tokens) AS L,
           m.model_id IS NOT NULL AS model_known, a.engine_id IS NOT NULL AS engine_known,
           h.hardware_id IS NOT NULL AS hardware_known, h.architecture AS hardware_architecture,
           a.logged_tokens_rule, a.concurrency_rule, a.available_log_decimals,
           CASE WHEN engine_large_gpu(a.large_gpu_min_bytes, a.large_gpu_excludes, h.usable_bytes, h.hardware_id)
                THEN coalesce(a.max_num_batched_tokens_large_gpu, a.max_num_batched_tokens)
                ELSE a.max_num_batched_tokens END AS default_T,
           CASE WHEN engine_large_gpu(a.large_gpu_min_bytes, a.large_gpu_excludes, h.usable_bytes, h.hardware_id)
                THEN coalesce(a.max_num_seqs_large_gpu, a.max_num_seqs)
                ELSE a.max_num_seqs END AS default_seqs
    FROM observations o
    LEFT JOIN models m ON m.model_id = o.model_id
    LEFT JOIN engine_accounting a ON a.engine_id = o.engine_id
    LEFT JOIN hardware h ON h.hardware_id = o.hardware_id
),
k AS (
    SELECT o.observation_id, o.pp, l.layout_mode, l.num_groups, l.block_size_tokens,
           CASE WHEN l.layout_mode = 'single' AND o.pp > 1
                THEN l.block_bytes / l.pool_layers * ceil(l.pool_layers / o.pp) ELSE l.block_bytes END AS block_bytes,
           r.blocks_per_request, r.concurrency_blocks_per_request
    FROM o
    JOIN engine_kv_layout l ON l.engine_id = o.engine_id AND l.model_id = o.served_id AND l.kv_dtype = o.kv
                           AND l.tp = o.tp
    -- the request blocks at the observations' own lengths, batch budgets, models and releases only (the full
    -- engine_request_blocks axes give the same rows here, at many times the cost: validate runs check 208 on this)
    JOIN engine_request_blocks_at((SELECT list(DISTINCT L) FROM o WHERE L > 0),
                                  (SELECT list(DISTINCT coalesce(max_num_batched_tokens, default_T)) FROM o
                                   WHERE coalesce(max_num_batched_tokens, default_T) IS NOT NULL),
                                  only_models := (SELECT list(DISTINCT served_id) FROM o WHERE served_id IS NOT NULL),
                                  only_engines := (SELECT list(DISTINCT engine_id) FROM o WHERE engine_id IS NOT NULL)) r ON r.engine_id = o.engine_id AND r.model_id = o.served_id AND r.kv_dtype = o.kv
                                AND r.tp = o.tp AND r.mla_block_tokens = l.mla_block_tokens AND r.max_model_len = o.L
                                AND r.max_num_batched_tokens = coalesce(o.max_num_batched_tokens, o.default_T)
    -- the logged device's MLA block (200 engine_mla_backend); an unknown device: the release's fallback
    LEFT JOIN engine_mla_backend mb ON mb.engine_id = o.engine_id AND mb.kv_dtype = o.kv AND mb.sparse = l.mla_sparse
                                   AND mb.architecture IS NOT DISTINCT FROM o.hardware_architecture
    WHERE l.mla_block_tokens = 0 OR l.mla_block_tokens = mb.mla_block_tokens
)
SELECT o.*, k.layout_mode, k.num_groups, k.block_size_tokens, k.block_bytes, k.blocks_per_request,
       k.concurrency_blocks_per_request, x.available_half_unit_bytes,
       -- the blocks the printed "Available KV cache memory" holds, at the printed value ∓ half a unit of its last
       -- decimal ("51.63 GiB" is anything in [51.625, 51.635) GiB; the release's available_log_decimals wins:
       -- "6.9" from format_gib means 6.90): num_blocks = available // block bytes (§3 get_num_blocks)
       -- (NULL for a memory beyond 2^53 blocks: no device's, and beyond BIGINT's reach)
       CASE WHEN o.available_kv_bytes / k.block_bytes < 2^53
            THEN floor((o.available_kv_bytes - x.available_half_unit_bytes) / k.block_bytes)::BIGINT END AS available_blocks_low,
       CASE WHEN o.available_kv_bytes / k.block_bytes < 2^53
            THEN floor((o.available_kv_bytes + x.available_half_unit_bytes) / k.block_bytes)::BIGINT END AS available_blocks_high,
       -- the blocks the logged token figure implies where the release's rule can be inverted
       CASE WHEN o.logged_tokens_rule = 'blocks_x_block_size'
            THEN o.kv_cache_tokens // k.block_size_tokens
            WHEN o.logged_tokens_rule = 'blocks_per_group_x_min_block_size' AND k.num_groups = 1
            THEN o.kv_cache_tokens // k.block_size_tokens
            -- int(conc × L) with one group and L a multiple of the block is exactly blocks × bs (§4)
            WHEN o.logged_tokens_rule = 'concurrency_x_len' AND k.layout_mode = 'single'
                 AND o.L % k.block_size_tokens = 0
            THEN o.kv_cache_tokens // k.block_size_tokens END AS tokens_implied_blocks
FROM o LEFT JOIN k USING (observation_id),
LATERAL (SELECT 0.5 * pow(10, -coalesce(o.available_log_decimals, o.available_kv_decimals, 2)) * 2^30
                AS available_half_unit_bytes) x
