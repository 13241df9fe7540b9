-- engine_mla_backend: view, the MLA attention backend a release picks and the KV block it leaves at the default, per
-- device architecture and KV dtype — the ONE place a device decides a layout (the MLA block).
-- Grain: one row per engine (with accounting) × architecture (each distinct hardware.architecture, and NULL = no
--   device named) × kv_dtype (those kv_layer_costs has) × sparse (DeepSeek sparse attention: an index_head_dim).
-- Inputs: engine_accounting, engine_mla_backend_rules (registry accounting.mla_backends, in order), hardware,
--   kv_layer_costs.
-- Units: mla_block_tokens in tokens.
-- Rule: the first rule (lowest rule_idx) whose architectures hold the architecture and whose kv_dtypes (NULL = any)
--   and sparse (NULL = either) match — vLLM's priority list per compute capability with the backends that cannot
--   serve the model skipped (platforms/cuda.py 0.19.0:51-98 _get_backend_priorities; each MLA backend's
--   supports_compute_capability and supported_kv_cache_dtypes); the block is get_preferred_block_size(16): 16 where
--   the backend takes it, else its smallest kernel block (v1/attention/backend.py 0.19.0:189-197).  No rule
--   matching (no device, a non-CUDA device, a release without rules): mla_backend NULL and the release's
--   block_size_mla (else its block size).
CREATE OR REPLACE VIEW engine_mla_backend AS
WITH cand AS (
    SELECT a.engine_id, h.architecture, k.kv_dtype, sp.sparse, coalesce(a.block_size_mla_tokens, e.block_size_tokens)
           AS fallback_tokens
    FROM engine_accounting a
    JOIN engines e ON e.engine_id = a.engine_id
    CROSS JOIN (SELECT DISTINCT architecture FROM hardware WHERE architecture IS NOT NULL
                UNION ALL SELECT NULL::VARCHAR) h
    CROSS JOIN (SELECT DISTINCT kv_dtype FROM kv_layer_costs) k
    CROSS JOIN (SELECT unnest([false, true]) AS sparse) sp
),
hit AS (
    SELECT c.engine_id, c.architecture, c.kv_dtype, c.sparse,
           arg_min(r.backend, r.rule_idx) AS mla_backend, arg_min(r.block_tokens, r.rule_idx) AS block_tokens
    FROM cand c
    JOIN engine_mla_backend_rules r
      ON r.engine_id = c.engine_id
     AND list_contains(string_split(r.architectures, ','), c.architecture)
     AND (r.kv_dtypes IS NULL OR list_contains(string_split(r.kv_dtypes, ','), c.kv_dtype))
     AND (r.sparse IS NULL OR r.sparse = c.sparse)
    GROUP BY ALL
)
SELECT c.engine_id, c.architecture, c.kv_dtype, c.sparse, h.mla_backend,
       coalesce(h.block_tokens, c.fallback_tokens)::BIGINT AS mla_block_tokens
FROM cand c
LEFT JOIN hit h ON h.engine_id = c.engine_id AND h.architecture IS NOT DISTINCT FROM c.architecture
               AND h.kv_dtype = c.kv_dtype AND h.sparse = c.sparse;

-- engine_layer_specs_at(block_size := NULL): table macro, each layer group as an engine release stores it (its
-- KV-cache spec) with the --block-size a user sets (NULL = the release default) — the ONE definition; the view
-- engine_layer_specs is this macro at the default.
-- Grain: one row per engine (with accounting) × served model × kv_dtype × tp × mla_block_tokens × layer group.
--   mla_block_tokens: the MLA block of the device class the row is for (engine_mla_backend, above): one row set per
--   distinct block the release's rules give a model with MLA layers at that kv_dtype (1–3), 0 for a model without
--   MLA layers (one row set, every device).  A device's rows are those whose mla_block_tokens is
--   engine_mla_backend's for its architecture, or 0 (engine_capacity_at, calibration join so).
--   A served model is a registry model alone, or a target plus a speculative draft whose
--   layers share the pool (served_models; e.g. Llama-3.1-8B + one EAGLE layer).
-- Inputs: engine_accounting, engines, served_models, layer_groups, kv_layer_costs.
-- Units: token_bytes = bytes per token per layer per TP rank as the engine stores it;
--   state_bytes = bytes per sequence per layer per rank; block tokens in tokens.
-- Rules (engine_accounting.md):
--   storage_kind: sliding/chunked become 'full' when the release stores them as full
--     (sliding_as_full 'always' = V0 and engines without windows in the pool; 'when_mixed' = V1 0.8
--     unify_hybrid_kv_cache_specs, only when full layers coexist) — §5;
--   num_speculative_tokens: of the served set (served_models); recurrent state_bytes grow by that many
--     conv rows, and 215 gives each recurrent group that many more blocks (MambaSpec
--     num_speculative_blocks, model_executor/layers/mamba/abstract.py 0.20.0:54);
--   token_bytes: kv_layer_costs.token_bytes, ×2 for k_eq_v layers unless the engine stores K once (§2);
--   base_block_tokens: the block size before hybrid alignment: the knob, else the engine block size; mla layers:
--     the device's MLA block (mla_block_tokens) where block_size_mla_forced (vLLM ≤0.16: CudaPlatform.check_and_update_config
--     replaces any block size, the user's too, with the MLA backend's: platforms/cuda.py 0.11.0:160-182), else the
--     knob (≥0.17 keeps --block-size, update_block_size_for_backend platforms/interface.py 0.19.0:434-436, and the
--     selector skips the MLA backends that cannot take it, platforms/cuda.py 0.19.0:313-333), else the device's MLA
--     block;  mla_sparse: the model's MLA layers carry a sparse-attention indexer (index_head_dim);
--   block_size: the knob, else the release's engine block size (engines.block_size_tokens); block_size_is_default:
--     this layer's block is the one it has with no knob (false for --block-size 16 on an MLA layer whose release
--     default is 64: a user-set size replaces the backend's preference); mla_block_size_forced: the knob was
--     given and an mla layer kept the release's MLA block instead;
--   a knob the release does not accept (engine_accounting.block_sizes, or for a compressed-attention model the
--     layout's compressed_block_tokens; NULL = not modelled) gives no rows for it:
--     the CLI and report definitions refuse it first, naming the allowed values;
--   in_pool: false for layers that hold neither KV nor state (shared layers reuse another's KV;
--     MLP/MoE-only blocks have no token mixer: vLLM's get_kv_cache_spec only visits attention and
--     mamba layers, gpu_model_runner.py 0.19.0 get_kv_cache_spec → AttentionLayerBase/MambaBase), and
--     for recurrent state kept outside the pool.  Decided by the bytes (no per-token and no state
--     bytes), never by the kind's name, so every such layer kind is covered.
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_layer_specs_at(block_size := NULL) AS TABLE
WITH mix AS (
    SELECT s.served_id, bool_or(g.kind IN ('full', 'mla')) AS has_unbounded, bool_or(g.kind = 'mla') AS has_mla,
           coalesce(bool_or(g.index_head_dim IS NOT NULL) FILTER (WHERE g.kind = 'mla'), false) AS mla_sparse,
           bool_or(g.kind = 'full' AND g.compress_tokens IS NOT NULL) AS has_compressed
    FROM served_models s JOIN layer_groups g ON g.model_id = s.model_id
    GROUP BY ALL
),
mla_blocks AS (   -- the distinct MLA blocks a release's rules give (engine_mla_backend), per kv_dtype and sparse
    SELECT DISTINCT b.engine_id, b.kv_dtype, b.sparse, b.mla_block_tokens FROM engine_mla_backend b
),
spec AS (
    SELECT a.engine_id, s.served_id AS model_id, s.model_id AS layer_model_id, s.role, c.group_idx, c.kind,
           c.kv_dtype, c.tp, c.layer_count, g.k_eq_v, a.k_eq_v_stored_once, a.recurrent_in_pool,
           coalesce(v.mla_block_tokens, 0) AS mla_block_tokens, m.mla_sparse, a.block_size_mla_forced,
           e.block_size_tokens,
           coalesce(block_size, e.block_size_tokens)::BIGINT AS block_size_set,
           -- the block this layer has at the release default (no --block-size given)
           CASE WHEN c.kind = 'mla' THEN v.mla_block_tokens ELSE e.block_size_tokens END AS default_block_tokens,
           CASE WHEN c.kind = 'sliding' AND (a.sliding_as_full = 'always'
                                             OR (a.sliding_as_full = 'when_mixed' AND m.has_unbounded)) THEN 'full'
                WHEN c.kind = 'chunked' AND (a.chunked_as_full = 'always'
                                             OR (a.chunked_as_full = 'when_mixed' AND m.has_unbounded)) THEN 'full'
                ELSE c.kind END AS storage_kind,
           c.token_bytes, c.window_tokens, s.num_speculative_tokens,
           -- speculative decoding widens each conv state by num_spec rows (conv_kernel − 1 + num_spec:
           -- mamba_utils.py 0.20.0:183 mamba2, :229 gated_delta_net)
           c.state_bytes + CASE WHEN c.kind = 'recurrent' AND s.num_speculative_tokens > 0
                                THEN s.num_speculative_tokens * c.conv_state_bytes // r.conv_rows ELSE 0 END
               AS state_bytes
    FROM engine_accounting a
    JOIN engines e USING (engine_id)
    CROSS JOIN served_models s
    JOIN mix m ON m.served_id = s.served_id
    JOIN kv_layer_costs c ON c.model_id = s.model_id
    JOIN layer_groups g ON g.model_id = c.model_id AND g.group_idx = c.group_idx
    LEFT JOIN recurrent_conv_rows r ON r.model_id = c.model_id AND r.group_idx = c.group_idx
    LEFT JOIN mla_blocks v ON m.has_mla AND v.engine_id = a.engine_id AND v.kv_dtype = c.kv_dtype
                          AND v.sparse = m.mla_sparse
    WHERE block_size IS NULL
       OR list_contains(list_transform(string_split(a.block_sizes, ','), lambda x: x::BIGINT), block_size::BIGINT)
       -- compressed attention (DeepSeek-V4) takes its layout's block (engine_compressed_buckets_at), which the
       -- release's list for other models need not hold
       OR (m.has_compressed AND a.compressed_mla_modelled AND block_size::BIGINT = a.compressed_block_tokens)
)
SELECT p.engine_id, p.model_id, p.layer_model_id, p.role, p.group_idx, p.kind, p.storage_kind, p.kv_dtype, p.tp,
       p.mla_block_tokens, p.mla_sparse, p.layer_count,
       p.token_bytes * CASE WHEN p.k_eq_v AND NOT p.k_eq_v_stored_once THEN 2 ELSE 1 END AS token_bytes,
       CASE WHEN p.storage_kind IN ('sliding', 'chunked') THEN p.window_tokens END AS window_tokens,
       p.state_bytes, p.num_speculative_tokens,
       CASE WHEN block_size IS NULL OR (p.kind = 'mla' AND p.block_size_mla_forced) THEN p.default_block_tokens
            ELSE p.block_size_set END AS base_block_tokens,
       (coalesce(p.token_bytes, 0) > 0 OR coalesce(p.state_bytes, 0) > 0)
           AND (p.kind <> 'recurrent' OR p.recurrent_in_pool) AS in_pool,
       p.kind IN ('sliding', 'chunked') AND p.storage_kind = 'full' AS stored_as_full,
       p.k_eq_v AND NOT p.k_eq_v_stored_once AS k_eq_v_stored_twice,
       p.block_size_set AS block_size,
       block_size IS NULL OR base_block_tokens = p.default_block_tokens AS block_size_is_default,
       block_size IS NOT NULL AND p.kind = 'mla' AND p.block_size_mla_forced
           AND p.default_block_tokens <> block_size AS mla_block_size_forced
FROM spec p;

-- engine_layer_specs: engine_layer_specs_at at the release default block size (columns, grain and units as above).
CREATE OR REPLACE VIEW engine_layer_specs AS
SELECT * FROM engine_layer_specs_at()
