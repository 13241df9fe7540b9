-- engine_kv_buckets: layers with identical KV specs, with the block size and page each gets
-- after recurrent alignment, page unification and grouping.
-- Grain: one row per engine × served model × kv_dtype × tp × bucket (storage kind, window, page).
-- Inputs: engine_layer_specs (in_pool rows), engine_accounting.
-- Units: bytes per block per layer (page_bytes), tokens (block_tokens, window_tokens), layers.
-- Rules (engine_accounting.md §2, §3):
--   layout_mode: 'grouped' when the release has the hybrid allocator and the model has more than
--     one spec type (get_kv_cache_groups case 5); 'swa_pools' for SGLang's two pools (§8);
--     otherwise 'single': one group of every pool layer (V0 cache_engine block, V1 cases 3/4,
--     UniformTypeKVCacheSpecs: num_blocks = avail // Σ pages).
--   attn_block_tokens: with recurrent state in a grouped pool the attention block is enlarged to
--     align·cdiv(state_page, align·attn_1tok) and the state page padded (§2 "Hybrid attention + Mamba").
--   page unification (≥0.20, unify_kv_cache_spec_page_size): P = largest raw page; a smaller
--     attention page whose size divides P gets block_tokens × P/page, otherwise it is padded to P.
--   group_size = min layers per bucket (≥0.20: max if max < 1.5·min); a bucket of n layers splits
--     into cdiv(n, group_size) groups (round-robin); padding = groups·group_size − n.
--   request_groups: groups of this bucket a request holds blocks in (grouped: all of them).
--   pool_ratio: SGLang's swa_full_tokens_ratio for sliding layers in swa_pools mode.
CREATE OR REPLACE VIEW engine_kv_buckets AS
WITH b AS (
    SELECT engine_id, model_id, kv_dtype, tp, storage_kind, token_bytes, window_tokens, state_bytes,
           base_block_tokens, num_speculative_tokens, sum(layer_count) AS layers
    FROM engine_layer_specs WHERE in_pool
    GROUP BY ALL
),
m AS (
    SELECT b.engine_id, b.model_id, b.kv_dtype, b.tp,
           max(token_bytes) FILTER (WHERE storage_kind <> 'recurrent') AS attn_token_bytes,
           max(state_bytes) FILTER (WHERE storage_kind = 'recurrent') AS state_page_bytes,
           count(DISTINCT storage_kind || ':' || coalesce(window_tokens, 0)) AS n_types,
           bool_or(storage_kind = 'sliding') AS has_sliding,
           min(layers) AS min_layers, max(layers) AS max_layers,
           any_value(a.hybrid_allocator) AS hybrid_allocator, any_value(a.group_size_rule) AS group_size_rule,
           any_value(a.swa_pool_ratio) AS swa_pool_ratio, any_value(a.recurrent_alignment_tokens) AS align_tokens
    FROM b JOIN engine_accounting a USING (engine_id)
    GROUP BY ALL
),
mode AS (
    SELECT *,
           CASE WHEN hybrid_allocator = 'grouped' AND n_types > 1 THEN 'grouped'
                WHEN hybrid_allocator = 'swa_pools' AND has_sliding THEN 'swa_pools'
                ELSE 'single' END AS layout_mode,
           CASE WHEN group_size_rule = 'max_if_below_1_5_min' AND max_layers < 1.5 * min_layers THEN max_layers
                ELSE min_layers END AS grouped_size
    FROM m
),
raw AS (
    SELECT b.*, d.layout_mode, d.grouped_size, d.swa_pool_ratio,
           CASE WHEN b.storage_kind = 'recurrent' THEN NULL
                WHEN d.layout_mode = 'grouped' AND d.state_page_bytes IS NOT NULL AND d.align_tokens IS NOT NULL
                THEN greatest(b.base_block_tokens,
                              d.align_tokens * ceil(d.state_page_bytes / (d.align_tokens * d.attn_token_bytes)))::BIGINT
                ELSE b.base_block_tokens END AS attn_block_tokens
    FROM b JOIN mode d USING (engine_id, model_id, kv_dtype, tp)
),
paged AS (
    SELECT *,
           CASE WHEN storage_kind = 'recurrent' THEN state_bytes ELSE attn_block_tokens * token_bytes END AS raw_page_bytes
    FROM raw
),
unified AS (
    SELECT *, max(raw_page_bytes) OVER w AS max_page_bytes,
           max(attn_block_tokens) OVER w AS model_attn_block_tokens
    FROM paged
    WINDOW w AS (PARTITION BY engine_id, model_id, kv_dtype, tp)
)
SELECT engine_id, model_id, kv_dtype, tp, storage_kind, window_tokens, layers, token_bytes, state_bytes,
       layout_mode, base_block_tokens, attn_block_tokens,
       CASE WHEN storage_kind = 'recurrent' THEN model_attn_block_tokens
            WHEN layout_mode = 'grouped' AND max_page_bytes % raw_page_bytes = 0
            THEN (attn_block_tokens * (max_page_bytes // raw_page_bytes))::BIGINT
            ELSE attn_block_tokens END AS block_tokens,
       raw_page_bytes,
       CASE WHEN layout_mode = 'grouped' THEN max_page_bytes ELSE raw_page_bytes END AS page_bytes,
       CASE WHEN layout_mode = 'grouped' THEN grouped_size END AS group_size,
       CASE WHEN layout_mode = 'grouped' THEN ((layers + grouped_size - 1) // grouped_size)::BIGINT ELSE 1 END
           AS request_groups,
       CASE WHEN layout_mode = 'swa_pools' AND storage_kind = 'sliding' THEN swa_pool_ratio END AS pool_ratio,
       num_speculative_tokens
FROM unified
