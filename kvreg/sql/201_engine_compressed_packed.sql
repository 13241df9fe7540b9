-- engine_packed_buckets_at(block_size := NULL): table macro, DeepSeek-V4's KV cache as vLLM 0.33 lays it out:
-- block-outermost packing (docs/engine.md "DeepSeek-V4 in 0.33: block-outermost packing").  engine_kv_buckets_at
-- (201_engine_kv_buckets) appends these rows, as it does engine_compressed_buckets_at's for 0.22–0.32.
-- Grain: one row per engine (compressed_mla.layout 'block_outermost') × served model (engine_compressed_pages_at) ×
--   kv_dtype (compressed_kv_dtypes) × tp × cache set (a UniformTypeKVCacheSpecs bucket: 'mla', or one
--   SlidingWindowMLASpec (block, window)).
-- Inputs: engine_compressed_pages_at (200: the caches and their pages); scalar macro engine_approximate_gcd (200);
--   engine_compressed_bucket_rows (201: the rows, with the accounting's kv_dtypes and block, kv_layer_costs, tp_sizes).
-- Units: bytes (raw_page_bytes = the set's pages summed over its layers; page_bytes = one block id's bytes), tokens,
--   layers.
-- Rules (v1/core/kv_cache_planning.py 0.33.0):
--   buckets (:935-944): layers join the first bucket they are uniform with — the same block size and window
--     (v1/kv_cache_interface.py 0.33.0:1348-1360 is_uniform_type, :1082-1091) — so the MLA caches form one set and
--     the sliding ones one per (block, window), as in 0.22.
--   balanced (:946-957): a set whose page sizes each hold the same number of layers (a 1:1 repeating pattern);
--     repeats per page = the most common count (get_max_layers_per_page_size, kv_cache_interface.py 0.33.0:1374-1379).
--   repeats_per_group (:959-981): engine_approximate_gcd of the balanced sets' repeats, from the largest repeats of a
--     balanced set with more than one page size up; a balanced set splits into cdiv(repeats, repeats_per_group)
--     groups (request_groups), round-robin by pattern repeat (:1024-1037); an unbalanced set is one group.  No
--     balanced set with more than one page size: vLLM caps the state buckets by an anchor block instead
--     (:995-1021) — not modelled, so no row (V4-Flash and -Pro have one: the ratio-4 compressor states).
--   block (:574-605 _get_kv_cache_bytes_per_block, block-outermost): one block id = the widest group's pages,
--     max over groups of Σ_page cdiv(layers at that page, groups) × page, rounded up to the lcm of the
--     block-stride alignments (1: no V4 spec sets one); no page is padded to another's (pages sit side by side:
--     :684-737).  num_blocks = available // it (:678-681; engine_kv_layout_at: page_bytes × group_size 1).
--   per request: every group draws its blocks from the one pool, Σ_g blocks_g (engine_request_blocks_at), and the
--     "Maximum concurrency" divides num_blocks by that sum (v1/core/kv_cache_utils.py 0.33.0:1061-1098: each
--     group's cdiv(max_memory_usage_bytes, page) = its blocks), so concurrency_blocks_per_request = blocks_per_request.
--   --block-size: as engine_compressed_pages_at (only the layout's 256).
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_packed_buckets_at(block_size := NULL) AS TABLE
WITH pages AS (   -- layers per (set, page): vLLM's page_size_layers of a bucket
    SELECT p.engine_id, p.model_id, p.set_key, any_value(p.storage_kind) AS storage_kind,
           any_value(p.block_tokens) AS block_tokens, any_value(p.window_tokens) AS window_tokens, p.page,
           sum(p.layers)::BIGINT AS layers, sum(p.raw_page * p.layers)::BIGINT AS raw_bytes
    FROM engine_compressed_pages_at(block_size := block_size) p
    WHERE p.layout = 'block_outermost'
    GROUP BY p.engine_id, p.model_id, p.set_key, p.page
),
sets AS (
    SELECT p.engine_id, p.model_id, p.set_key, any_value(p.storage_kind) AS storage_kind,
           any_value(p.block_tokens) AS block_tokens, any_value(p.window_tokens) AS window_tokens,
           sum(p.layers)::BIGINT AS layers, sum(p.raw_bytes)::BIGINT AS raw_bytes,
           sum(p.page * p.layers)::BIGINT AS set_page_bytes, count(*) AS n_pages,
           max(p.layers) AS repeats, min(p.layers) = max(p.layers) AS balanced
    FROM pages p GROUP BY p.engine_id, p.model_id, p.set_key
),
repeats AS (   -- repeats_per_group: NULL where no balanced set has more than one page size (not modelled)
    SELECT s.engine_id, s.model_id,
           engine_approximate_gcd(list(s.repeats) FILTER (WHERE s.balanced),
                                  max(s.repeats) FILTER (WHERE s.balanced AND s.n_pages > 1)) AS repeats_per_group
    FROM sets s GROUP BY s.engine_id, s.model_id
    HAVING max(s.repeats) FILTER (WHERE s.balanced AND s.n_pages > 1) IS NOT NULL
),
grouped AS (
    SELECT s.*, r.repeats_per_group,
           CASE WHEN s.balanced THEN (s.repeats + r.repeats_per_group - 1) // r.repeats_per_group ELSE 1 END::BIGINT
               AS request_groups
    FROM sets s JOIN repeats r USING (engine_id, model_id)
),
widest AS (   -- the widest group of each set: Σ_page cdiv(layers at that page, groups) × page
    SELECT p.engine_id, p.model_id, p.set_key,
           sum((p.layers + g.request_groups - 1) // g.request_groups * p.page)::BIGINT AS widest_bytes
    FROM pages p JOIN grouped g USING (engine_id, model_id, set_key)
    GROUP BY ALL
),
block AS (   -- one block id: the widest group over every set
    SELECT w.engine_id, w.model_id, max(w.widest_bytes)::BIGINT AS block_bytes
    FROM widest w GROUP BY ALL
),
packed_sets AS (   -- one block id = the widest group's pages, no tuple slots
    SELECT g.*, b.block_bytes AS page_bytes, 1::BIGINT AS group_size
    FROM grouped g JOIN block b USING (engine_id, model_id)
)
SELECT * FROM engine_compressed_bucket_rows('packed_sets', 'block_outermost', block_size := block_size)
