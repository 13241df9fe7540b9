-- engine_compressed_bucket_rows(sets, layout, block_size := NULL): table macro, the ONE output projection of the two
-- DeepSeek-V4 layouts (engine_compressed_buckets_at: 0.22–0.32's layer tuples; engine_packed_buckets_at: 0.33's
-- block-outermost packing): their cache sets as rows with the columns of engine_kv_buckets, so the layouts differ
-- only in how they size a set, never in how a set becomes a bucket row.
-- sets: the NAME of a relation (the caller's CTE, read with query_table as plan_levers reads its ranked table) with
--   one row per engine × served model × cache set and the columns engine_id, model_id, storage_kind, window_tokens,
--   layers, raw_bytes (the set's unpadded pages × layers), block_tokens, set_page_bytes, page_bytes (one block id's
--   bytes, as the layout sizes it), group_size (tuple slots per block id), request_groups.
-- layout: the releases' accounting.compressed_mla.layout ('layer_tuples' or 'block_outermost'), also layout_mode.
-- block_size: the --block-size set (NULL = the layout's compressed block); a release whose compressed block differs
--   gives no row (vLLM's page match fails: engine_compressed_pages_at).
-- Grain: one row per set row × kv_dtype (the release's compressed_kv_dtypes) × tp (tp_sizes).
-- Inputs: engine_accounting, kv_layer_costs (the kv_dtype axis), tp_sizes.
-- Units: bytes (pages; token_bytes = raw_bytes ÷ layers ÷ block_tokens per token per layer), tokens, layers.
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_compressed_bucket_rows(sets, layout, block_size := NULL) AS TABLE
WITH acc AS (
    SELECT a.engine_id, a.compressed_block_tokens AS cblock, string_split(a.compressed_kv_dtypes, ',') AS kv_dtypes
    FROM engine_accounting a
    WHERE a.compressed_mla_modelled AND a.compressed_layout = layout
      AND (block_size IS NULL OR block_size::BIGINT = a.compressed_block_tokens)
)
SELECT g.engine_id, g.model_id, k.kv_dtype, t.tp, 0::BIGINT AS mla_block_tokens, false AS mla_sparse,
       g.storage_kind, g.window_tokens, g.layers,
       g.raw_bytes / g.layers / g.block_tokens AS token_bytes, NULL::DOUBLE AS state_bytes,
       layout::VARCHAR AS layout_mode, g.block_tokens AS base_block_tokens, g.block_tokens AS attn_block_tokens,
       g.block_tokens, g.set_page_bytes AS raw_page_bytes, g.page_bytes::BIGINT AS page_bytes,
       g.group_size::BIGINT AS group_size, g.request_groups, NULL::DOUBLE AS pool_ratio, 0 AS num_speculative_tokens,
       -- unset, vLLM takes the compressed layout's one block (0.22: the sparse SWA backend's preferred block,
       -- platforms/interface.py 0.22.0:489-501 Phase 1, sparse_swa.py 0.22.0:105-107; 0.33: the block every V4
       -- backend takes, platforms/interface.py 0.33.0:766-779), not the release's 16
       coalesce(block_size::BIGINT, a.cblock) AS block_size,
       block_size IS NULL OR block_size::BIGINT = a.cblock AS block_size_is_default,
       false AS mla_block_size_forced
FROM query_table(sets) g
JOIN acc a USING (engine_id)
CROSS JOIN (SELECT DISTINCT kv_dtype FROM kv_layer_costs) k
CROSS JOIN tp_sizes t
WHERE list_contains(a.kv_dtypes, k.kv_dtype);
