-- engine_layer_specs: each layer group as an engine release stores it (its KV-cache spec).
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
--   base_block_tokens: the engine block size, or its MLA block size for mla layers (§2 block_size);
--   in_pool: false for layers that hold neither KV nor state (shared layers reuse another's KV;
--     MLP/MoE-only blocks have no token mixer: vLLM's get_kv_cache_spec only visits attention and
--     mamba layers, gpu_model_runner.py 0.19.0 get_kv_cache_spec → AttentionLayerBase/MambaBase), and
--     for recurrent state kept outside the pool.  Decided by the bytes (no per-token and no state
--     bytes), never by the kind's name, so every such layer kind is covered.
CREATE OR REPLACE VIEW engine_layer_specs AS
WITH mix AS (
    SELECT s.served_id, bool_or(g.kind IN ('full', 'mla')) AS has_unbounded
    FROM served_models s JOIN layer_groups g ON g.model_id = s.model_id
    GROUP BY ALL
),
spec AS (
    SELECT a.engine_id, s.served_id AS model_id, s.model_id AS layer_model_id, s.role, c.group_idx, c.kind,
           c.kv_dtype, c.tp, c.layer_count, g.k_eq_v, a.k_eq_v_stored_once, a.recurrent_in_pool,
           a.block_size_mla_tokens, e.block_size_tokens,
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
)
SELECT engine_id, model_id, layer_model_id, role, group_idx, kind, storage_kind, kv_dtype, tp, layer_count,
       token_bytes * CASE WHEN k_eq_v AND NOT k_eq_v_stored_once THEN 2 ELSE 1 END AS token_bytes,
       CASE WHEN storage_kind IN ('sliding', 'chunked') THEN window_tokens END AS window_tokens,
       state_bytes, num_speculative_tokens,
       CASE WHEN kind = 'mla' THEN coalesce(block_size_mla_tokens, block_size_tokens)
            ELSE block_size_tokens END AS base_block_tokens,
       (coalesce(token_bytes, 0) > 0 OR coalesce(state_bytes, 0) > 0)
           AND (kind <> 'recurrent' OR recurrent_in_pool) AS in_pool,
       kind IN ('sliding', 'chunked') AND storage_kind = 'full' AS stored_as_full,
       k_eq_v AND NOT k_eq_v_stored_once AS k_eq_v_stored_twice
FROM spec
