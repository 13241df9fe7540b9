-- engine_kv_buckets_at(block_size := NULL): table macro, layers with identical KV specs, with the block size and
-- page each gets after recurrent alignment, page unification and grouping, at the --block-size a user sets (NULL =
-- the release default; engine_layer_specs_at) — the ONE definition; the view engine_kv_buckets is it at the default.
-- Grain: one row per engine × served model × kv_dtype × tp × mla_block_tokens (the device class's MLA block, 0 for a
--   model without MLA layers: engine_layer_specs_at) × bucket (storage kind, window, page).
-- Inputs: engine_layer_specs_at (in_pool rows), engine_accounting.
-- Units: bytes per block per layer (page_bytes), tokens (block_tokens, window_tokens), layers.
-- Rules (engine_accounting.md §2, §3):
--   layout_mode: 'grouped' when the release has the hybrid allocator and the model has more than
--     one spec type (get_kv_cache_groups case 5); 'swa_pools' for SGLang's two pools (§8);
--     otherwise 'single': one group of every pool layer (V0 cache_engine block, V1 cases 3/4,
--     UniformTypeKVCacheSpecs: num_blocks = avail // Σ pages).
--   attn_block_tokens: with recurrent state in a grouped pool the attention block is enlarged to
--     max(block, align·cdiv(state_page, align·attn_1tok)) and the state page padded (§2 "Hybrid attention +
--     Mamba"), even over a user's --block-size ("override attention block size if it is too small, even if the
--     user has explicitly set it", model_executor/models/config.py 0.19.0:277-280); align is
--     recurrent_alignment_tokens ('fixed', ≤0.19: 16, config.py 0.19.0:218) or max(that, the block size)
--     ('at_least_block_size', ≥0.20: platforms/interface.py 0.20.0:568-575).
--   block_size, block_size_is_default, mla_block_size_forced: the setting (engine_layer_specs_at).
--   page unification (≥0.20, unify_kv_cache_spec_page_size): P = largest raw page; a smaller
--     attention page whose size divides P gets block_tokens × P/page, otherwise it is padded to P.
--   group_size = min layers per bucket (≥0.20: max if max < 1.5·min); a bucket of n layers splits
--     into cdiv(n, group_size) groups (round-robin); padding = groups·group_size − n.
--   request_groups: groups of this bucket a request holds blocks in (grouped: all of them).
--   pool_ratio: SGLang's swa_full_tokens_ratio for sliding layers in swa_pools mode.
--   layout_mode 'layer_tuples': a model with compressed attention (a full group with compress, DeepSeek-V4), laid
--     out by engine_compressed_buckets_at (201_engine_compressed_buckets.sql) in the releases that model it; the
--     generic rules above never see such a model, so other releases give it no bucket; 'block_outermost': the same
--     models in vLLM 0.33's packing (engine_packed_buckets_at, 201_engine_compressed_packed.sql).
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_kv_buckets_at(block_size := NULL) AS TABLE
WITH b AS (
    SELECT l.engine_id, l.model_id, l.kv_dtype, l.tp, l.mla_block_tokens, l.mla_sparse, l.storage_kind, l.token_bytes, l.window_tokens, l.state_bytes,
           l.base_block_tokens, l.num_speculative_tokens, l.block_size AS block_size_set, l.block_size_is_default,
           bool_or(l.mla_block_size_forced) AS mla_block_size_forced, sum(l.layer_count) AS layers
    FROM engine_layer_specs_at(block_size := block_size) l WHERE l.in_pool
      -- compressed attention (DeepSeek-V4) is laid out by engine_compressed_buckets_at, appended below
      AND l.model_id NOT IN (SELECT s.served_id FROM served_models s JOIN layer_groups g ON g.model_id = s.model_id
                             WHERE g.compress_tokens IS NOT NULL)
    GROUP BY ALL
),
m AS (
    SELECT b.engine_id, b.model_id, b.kv_dtype, b.tp, b.mla_block_tokens,
           max(b.token_bytes) FILTER (WHERE b.storage_kind <> 'recurrent') AS attn_token_bytes,
           max(b.state_bytes) FILTER (WHERE b.storage_kind = 'recurrent') AS state_page_bytes,
           count(DISTINCT b.storage_kind || ':' || coalesce(b.window_tokens, 0)) AS n_types,
           bool_or(b.storage_kind = 'sliding') AS has_sliding,
           min(b.layers) AS min_layers, max(b.layers) AS max_layers,
           any_value(a.hybrid_allocator) AS hybrid_allocator, any_value(a.group_size_rule) AS group_size_rule,
           any_value(a.swa_pool_ratio) AS swa_pool_ratio,
           -- ≥0.20 aligns to max(min kernel block, cache_config.block_size): the attention block size set
           CASE WHEN any_value(a.recurrent_alignment_rule) = 'at_least_block_size'
                     AND any_value(a.recurrent_alignment_tokens) IS NOT NULL
                THEN greatest(any_value(a.recurrent_alignment_tokens),
                              max(b.base_block_tokens) FILTER (WHERE b.storage_kind <> 'recurrent'))
                ELSE any_value(a.recurrent_alignment_tokens) END AS align_tokens
    FROM b JOIN engine_accounting a ON a.engine_id = b.engine_id
    GROUP BY ALL
),
mode AS (
    SELECT m.*,
           CASE WHEN m.hybrid_allocator = 'grouped' AND m.n_types > 1 THEN 'grouped'
                WHEN m.hybrid_allocator = 'swa_pools' AND m.has_sliding THEN 'swa_pools'
                ELSE 'single' END AS layout_mode,
           CASE WHEN m.group_size_rule = 'max_if_below_1_5_min' AND m.max_layers < 1.5 * m.min_layers THEN m.max_layers
                ELSE m.min_layers END AS grouped_size
    FROM m
),
raw AS (
    SELECT b.*, d.layout_mode, d.grouped_size, d.swa_pool_ratio,
           CASE WHEN b.storage_kind = 'recurrent' THEN NULL
                WHEN d.layout_mode = 'grouped' AND d.state_page_bytes IS NOT NULL AND d.align_tokens IS NOT NULL
                THEN greatest(b.base_block_tokens,
                              d.align_tokens * ceil(d.state_page_bytes / (d.align_tokens * d.attn_token_bytes)))::BIGINT
                ELSE b.base_block_tokens END AS attn_block_tokens
    FROM b JOIN mode d USING (engine_id, model_id, kv_dtype, tp, mla_block_tokens)
),
paged AS (
    SELECT r.*,
           CASE WHEN r.storage_kind = 'recurrent' THEN r.state_bytes ELSE r.attn_block_tokens * r.token_bytes END
               AS raw_page_bytes
    FROM raw r
),
unified AS (
    SELECT p.*, max(p.raw_page_bytes) OVER w AS max_page_bytes,
           max(p.attn_block_tokens) OVER w AS model_attn_block_tokens
    FROM paged p
    WINDOW w AS (PARTITION BY p.engine_id, p.model_id, p.kv_dtype, p.tp, p.mla_block_tokens)
)
SELECT u.engine_id, u.model_id, u.kv_dtype, u.tp, u.mla_block_tokens, u.mla_sparse, u.storage_kind, u.window_tokens, u.layers, u.token_bytes,
       u.state_bytes, u.layout_mode, u.base_block_tokens, u.attn_block_tokens,
       CASE WHEN u.storage_kind = 'recurrent' THEN u.model_attn_block_tokens
            WHEN u.layout_mode = 'grouped' AND u.max_page_bytes % u.raw_page_bytes = 0
            THEN (u.attn_block_tokens * (u.max_page_bytes // u.raw_page_bytes))::BIGINT
            ELSE u.attn_block_tokens END AS block_tokens,
       u.raw_page_bytes,
       CASE WHEN u.layout_mode = 'grouped' THEN u.max_page_bytes ELSE u.raw_page_bytes END AS page_bytes,
       CASE WHEN u.layout_mode = 'grouped' THEN u.grouped_size END AS group_size,
       CASE WHEN u.layout_mode = 'grouped' THEN ((u.layers + u.grouped_size - 1) // u.grouped_size)::BIGINT ELSE 1 END
           AS request_groups,
       CASE WHEN u.layout_mode = 'swa_pools' AND u.storage_kind = 'sliding' THEN u.swa_pool_ratio END AS pool_ratio,
       u.num_speculative_tokens, u.block_size_set AS block_size, u.block_size_is_default, u.mla_block_size_forced
FROM unified u
UNION ALL BY NAME
SELECT * FROM engine_compressed_buckets_at(block_size := block_size)
UNION ALL BY NAME
SELECT * FROM engine_packed_buckets_at(block_size := block_size);

-- engine_kv_buckets: engine_kv_buckets_at at the release default block size (columns, grain and units as above).
CREATE OR REPLACE VIEW engine_kv_buckets AS
SELECT * FROM engine_kv_buckets_at()
