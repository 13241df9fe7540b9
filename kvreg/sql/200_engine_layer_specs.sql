-- engine_layer_specs_at(block_size := NULL): table macro, each layer group as an engine release stores it (its
-- KV-cache spec) with the --block-size a user sets (NULL = the release default) — the ONE definition; the view
-- engine_layer_specs is this macro at the default.
-- Grain: one row per engine (with accounting) × served model × kv_dtype × tp × layer group.
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
--     the release's MLA block size where block_size_mla_forced (vLLM ≤0.16: CudaPlatform.check_and_update_config
--     replaces any block size, the user's too, with the MLA backend's: platforms/cuda.py 0.11.0:160-182), else the
--     knob (≥0.17 keeps --block-size, update_block_size_for_backend platforms/interface.py 0.19.0:434-436, and the
--     selector skips the MLA backends that cannot take it, platforms/cuda.py 0.19.0:313-333), else the MLA default;
--   block_size: the knob, else the release's engine block size (engines.block_size_tokens); block_size_is_default:
--     this layer's block is the one it has with no knob (false for --block-size 16 on an MLA layer whose release
--     default is 64: a user-set size replaces the backend's preference); mla_block_size_forced: the knob was
--     given and an mla layer kept the release's MLA block instead;
--   a knob the release does not accept (engine_accounting.block_sizes; NULL = not modelled) gives no rows for it:
--     the CLI and report definitions refuse it first, naming the allowed values;
--   in_pool: false for layers that hold neither KV nor state (shared layers reuse another's KV;
--     MLP/MoE-only blocks have no token mixer: vLLM's get_kv_cache_spec only visits attention and
--     mamba layers, gpu_model_runner.py 0.19.0 get_kv_cache_spec → AttentionLayerBase/MambaBase), and
--     for recurrent state kept outside the pool.  Decided by the bytes (no per-token and no state
--     bytes), never by the kind's name, so every such layer kind is covered.
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_layer_specs_at(block_size := NULL) AS TABLE
WITH mix AS (
    SELECT s.served_id, bool_or(g.kind IN ('full', 'mla')) AS has_unbounded
    FROM served_models s JOIN layer_groups g ON g.model_id = s.model_id
    GROUP BY ALL
),
spec AS (
    SELECT a.engine_id, s.served_id AS model_id, s.model_id AS layer_model_id, s.role, c.group_idx, c.kind,
           c.kv_dtype, c.tp, c.layer_count, g.k_eq_v, a.k_eq_v_stored_once, a.recurrent_in_pool,
           a.block_size_mla_tokens, a.block_size_mla_forced, e.block_size_tokens,
           coalesce(block_size, e.block_size_tokens)::BIGINT AS block_size_set,
           -- the block this layer has at the release default (no --block-size given)
           CASE WHEN c.kind = 'mla' THEN coalesce(a.block_size_mla_tokens, e.block_size_tokens)
                ELSE e.block_size_tokens END AS default_block_tokens,
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
    WHERE block_size IS NULL
       OR list_contains(list_transform(string_split(a.block_sizes, ','), lambda x: x::BIGINT), block_size::BIGINT)
)
SELECT p.engine_id, p.model_id, p.layer_model_id, p.role, p.group_idx, p.kind, p.storage_kind, p.kv_dtype, p.tp,
       p.layer_count,
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
