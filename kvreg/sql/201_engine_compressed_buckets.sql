-- engine_compressed_buckets_at(block_size := NULL): table macro, DeepSeek-V4's KV cache as a release with a
-- compressed_mla layout lays it out: vLLM 0.22–0.32's "layer tuples" (docs/engine.md "DeepSeek-V4: layer tuples").
-- engine_kv_buckets_at (201_engine_kv_buckets) appends these rows, with its own columns, for such models; every other
-- release gives such a model no bucket, so no engine figure (never the generic grouping, which would be wrong).
-- Grain: one row per engine (accounting.compressed_mla given) × served model (a registry model alone, no draft, with a
--   full group that carries compress) × kv_dtype (compressed_kv_dtypes) × tp × cache set; a cache set is one
--   UniformTypeKVCacheSpecs vLLM builds: 'mla' (every compressed KV and indexer cache), and one per
--   SlidingWindowMLASpec (block, window): the sliding window, each compressor ratio's state.
-- Inputs: engine_compressed_pages_at (200: the caches and their pages); engine_compressed_bucket_rows (201: the rows,
--   with the accounting's kv_dtypes and block, kv_layer_costs, tp_sizes).
-- Units: bytes (pages), tokens (block_tokens, window_tokens), layers.
-- Rules (vLLM 0.22.0, 0.26.0 the same functions), for the releases whose compressed_mla.layout is 'layer_tuples':
--   caches and pages: engine_compressed_pages_at (a model vLLM refuses has none, so no row here).
--   sets: the MLA caches form one set; the sliding ones split by (block, window)
--     (v1/core/kv_cache_utils.py 0.22.0:1420-1455 group_and_unify_kv_cache_specs).
--   layer tuples (kv_cache_utils.py 0.22.0:1493-1591 _get_kv_cache_groups_uniform_groups): a set's tuples = the most
--     common count of one page size in it; num_layer_tuples = _approximate_gcd of the sets' tuples with the MLA set's as
--     lower bound (the d ≥ it minimising Σ (d − x mod d) mod d, ties to the larger d); each sliding page padded up to
--     the nearest MLA page ≥ it (none: vLLM asserts, no row); a sliding set splits into cdiv(layers per padded page,
--     num_layer_tuples) groups (request_groups), round-robin; the MLA set is one group.
--   block (kv_cache_utils.py 0.22.0:1179-1226 _get_kv_cache_config_deepseek_v4): one block id spans group_size tuple
--     slots × page_bytes (Σ of the MLA set's distinct pages), group_size = the longest per-page layer list over all
--     groups: num_blocks = available // (page_bytes × group_size) (engine_kv_layout_at).
--   --block-size: the compressed block is the sparse SWA backend's 256; any other size leaves vLLM's page match
--     unmet (kv_cache_utils.py 0.22.0:1549 assert), so no row; likewise a compressor ratio not in state_ratios (or
--     a compressor group without compress) or a ratio that does not divide the block: no row for the model.
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_compressed_buckets_at(block_size := NULL) AS TABLE
WITH paged AS (   -- the caches and their pages (engine_compressed_pages_at, 200), this layout's releases only
    SELECT p.* FROM engine_compressed_pages_at(block_size := block_size) p WHERE p.layout = 'layer_tuples'
),
pages AS (   -- layers per (set, page): the layer lists a tuple holds one of
    SELECT p.engine_id, p.model_id, p.set_key, any_value(p.storage_kind) AS storage_kind,
           any_value(p.block_tokens) AS block_tokens, any_value(p.window_tokens) AS window_tokens, p.page,
           sum(p.layers)::BIGINT AS layers, sum(p.raw_page * p.layers)::BIGINT AS raw_bytes
    FROM paged p GROUP BY p.engine_id, p.model_id, p.set_key, p.page
),
mla_pages AS (
    SELECT p.engine_id, p.model_id, list(p.page ORDER BY p.page) AS mla_pages, sum(p.page)::BIGINT AS tuple_bytes,
           max(p.layers) AS mla_tuples, max(p.layers) AS mla_longest
    FROM pages p WHERE p.set_key = 'mla' GROUP BY ALL
),
padded AS (   -- each sliding page padded up to the nearest MLA page ≥ it (NULL: none, vLLM asserts)
    SELECT p.*, CASE WHEN p.set_key = 'mla' THEN p.page
                     ELSE list_min(list_filter(m.mla_pages, lambda x: x >= p.page)) END AS padded_page
    FROM pages p JOIN mla_pages m USING (engine_id, model_id)
),
sets AS (
    SELECT p.engine_id, p.model_id, p.set_key, any_value(p.storage_kind) AS storage_kind,
           any_value(p.block_tokens) AS block_tokens, any_value(p.window_tokens) AS window_tokens,
           sum(p.layers)::BIGINT AS layers, max(p.layers) AS tuples, sum(p.raw_bytes)::BIGINT AS raw_bytes,
           sum(p.padded_page * p.layers)::BIGINT AS set_page_bytes, bool_and(p.padded_page IS NOT NULL) AS fits
    FROM padded p GROUP BY p.engine_id, p.model_id, p.set_key
),
layers_per_size AS (   -- a sliding set's layers per padded page (vLLM asserts they are equal)
    SELECT p.engine_id, p.model_id, p.set_key, max(n) AS per_size
    FROM (SELECT p.engine_id, p.model_id, p.set_key, p.padded_page, sum(p.layers) AS n
          FROM padded p GROUP BY ALL) p
    GROUP BY ALL
),
gcd AS (   -- _approximate_gcd (engine_approximate_gcd, 200) of the sets' tuples, from the MLA set's up
    SELECT s.engine_id, s.model_id, engine_approximate_gcd(list(s.tuples), any_value(m.mla_tuples)) AS num_layer_tuples
    FROM sets s JOIN mla_pages m USING (engine_id, model_id)
    GROUP BY s.engine_id, s.model_id
),
grouped AS (
    SELECT s.*, g.num_layer_tuples, m.tuple_bytes,
           CASE WHEN s.set_key = 'mla' THEN 1
                ELSE (l.per_size + g.num_layer_tuples - 1) // g.num_layer_tuples END::BIGINT AS request_groups,
           -- the longest per-page layer list of this set's largest group
           CASE WHEN s.set_key = 'mla' THEN m.mla_longest
                ELSE (l.per_size + ((l.per_size + g.num_layer_tuples - 1) // g.num_layer_tuples) - 1)
                     // ((l.per_size + g.num_layer_tuples - 1) // g.num_layer_tuples) END AS longest
    FROM sets s
    JOIN gcd g USING (engine_id, model_id)
    JOIN mla_pages m USING (engine_id, model_id)
    JOIN layers_per_size l USING (engine_id, model_id, set_key)
),
whole AS (   -- models whose every sliding page fits an MLA page, with the block's tuple slots
    SELECT g.engine_id, g.model_id, max(g.longest)::BIGINT AS group_size
    FROM grouped g
    GROUP BY ALL HAVING bool_and(g.fits)
),
tuple_sets AS (   -- one block id = one layer tuple (Σ of the MLA set's distinct pages) × its tuple slots
    SELECT g.*, g.tuple_bytes AS page_bytes, w.group_size
    FROM grouped g JOIN whole w USING (engine_id, model_id)
)
SELECT * FROM engine_compressed_bucket_rows('tuple_sets', 'layer_tuples', block_size := block_size)
