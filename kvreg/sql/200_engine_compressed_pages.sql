-- engine_compressed_pages_at(block_size := NULL): table macro, every cache DeepSeek-V4's compressed attention gets
-- under a release that models its layout (accounting.compressed_mla), with its page — the ONE definition of those
-- pages; engine_compressed_buckets_at (layer tuples, 0.22–0.32) and engine_packed_buckets_at (block-outermost,
-- 0.33) lay them out.
-- Grain: one row per engine (compressed_mla given) × served model (a registry model alone, no draft, with a full
--   group that carries compress) × vLLM cache kind of a layer group; set_key names the cache set vLLM buckets it in:
--   'mla' (every compressed KV and indexer cache, one block), 'sliding:<block>:<window>' (each SlidingWindowMLASpec).
-- Inputs: engine_accounting (compressed_*), served_models, layer_groups, state_tensors, precisions.
-- Units: bytes (raw_page, page), tokens (block_tokens, window_tokens), layers.
-- Rules (vLLM 0.22.0; 0.33.0 builds the same specs and pages):
--   every layer a sliding-window cache of sliding_block_tokens entries (v1/attention/backends/mla/sparse_swa.py
--   0.22.0:49-88, 0.33.0:76-147 DeepseekV4SWACache); a compressed layer (ratio r) an MLAAttentionSpec of block_tokens
--   tokens = block_tokens / r entries of entry_bytes (models/deepseek_v4/attention.py 0.22.0:704-718, 0.33.0:860-883),
--   at r = 4 also the indexer key cache, block_tokens / r entries of index_head_dim + index_head_dim / 128 × 4 bytes
--   (attention.py 0.22.0:751-763, 837; 0.33.0:911-926, 1024-1029); each compressor tensor a SlidingWindowMLASpec of its
--   ratio's state block × state_dim fp32 (state_dim = elements / window; models/deepseek_v4/compressor.py
--   0.22.0:121-165, 0.33.0:139-192).  Every page rounded up to page_alignment (v1/kv_cache_interface.py 0.22.0:301-307,
--   0.33.0:719-726 _apply_alignment_padding).
--   A compressor ratio the release's state cache does not take (or a compressor group without compress), or a
--   ratio that does not divide the block: vLLM refuses the model (compressor.py 0.22.0:140, 0.33.0:158), so no row for
--   the model at all rather than a partial set.
--   block_size (the --block-size knob): only the layout's compressed block (else no row: vLLM's page match fails).
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_compressed_pages_at(block_size := NULL) AS TABLE
WITH acc AS (
    SELECT a.engine_id, a.compressed_layout AS layout, a.compressed_block_tokens AS cblock,
           a.compressed_sliding_block_tokens AS sblock,
           a.compressed_entry_bytes AS entry_bytes, a.compressed_page_alignment_bytes AS align,
           list_transform(string_split(a.compressed_state_ratios, ','), lambda x: x::BIGINT) AS ratios,
           list_transform(string_split(a.compressed_state_block_tokens, ','), lambda x: x::BIGINT) AS state_blocks,
           list_transform(string_split(a.compressed_state_windows, ','), lambda x: x::BIGINT) AS state_windows
    FROM engine_accounting a
    WHERE a.compressed_mla_modelled
      AND (block_size IS NULL OR block_size::BIGINT = a.compressed_block_tokens)
),
cm AS (   -- served sets that are one compressed-attention model alone
    SELECT s.served_id, s.model_id FROM served_models s
    WHERE s.served_id = s.model_id AND s.num_speculative_tokens = 0
      AND s.model_id IN (SELECT g.model_id FROM layer_groups g WHERE g.kind = 'full' AND g.compress_tokens IS NOT NULL)
),
caches AS (   -- one row per vLLM cache kind of a model: its set, block, window, raw page and layer count
    SELECT a.engine_id, m.served_id AS model_id, 'sliding:' || a.sblock || ':' || g.window_tokens AS set_key,
           'sliding' AS storage_kind, a.sblock AS block_tokens, g.window_tokens, (a.sblock * a.entry_bytes)::BIGINT AS raw_page,
           g.layer_count AS layers
    FROM acc a CROSS JOIN cm m JOIN layer_groups g ON g.model_id = m.model_id AND g.kind = 'sliding'
    UNION ALL
    SELECT a.engine_id, m.served_id, 'mla', 'mla', a.cblock, NULL::BIGINT,
           a.cblock // g.compress_tokens * a.entry_bytes, g.layer_count
    FROM acc a CROSS JOIN cm m JOIN layer_groups g ON g.model_id = m.model_id AND g.kind = 'full'
                                                  AND g.compress_tokens IS NOT NULL
    UNION ALL
    SELECT a.engine_id, m.served_id, 'mla', 'mla', a.cblock, NULL::BIGINT,
           a.cblock // g.compress_tokens * (g.index_head_dim + g.index_head_dim // 128 * 4), g.layer_count
    FROM acc a CROSS JOIN cm m JOIN layer_groups g ON g.model_id = m.model_id AND g.kind = 'full'
                                                  AND g.compress_tokens IS NOT NULL AND g.index_head_dim IS NOT NULL
    UNION ALL
    SELECT a.engine_id, m.served_id,
           'sliding:' || a.state_blocks[list_position(a.ratios, g.compress_tokens)] || ':'
               || a.state_windows[list_position(a.ratios, g.compress_tokens)],
           'sliding', a.state_blocks[list_position(a.ratios, g.compress_tokens)],
           a.state_windows[list_position(a.ratios, g.compress_tokens)],
           a.state_blocks[list_position(a.ratios, g.compress_tokens)]
               * (t.elements // a.state_windows[list_position(a.ratios, g.compress_tokens)])
               * p.bytes_per_element::BIGINT,
           g.layer_count
    FROM acc a CROSS JOIN cm m
    JOIN layer_groups g ON g.model_id = m.model_id AND g.kind = 'recurrent' AND g.variant = 'compressor'
    JOIN state_tensors t ON t.model_id = g.model_id AND t.group_idx = g.group_idx
    JOIN precisions p ON p.dtype = t.dtype
    WHERE list_position(a.ratios, g.compress_tokens) IS NOT NULL
),
unmodelled AS (   -- see the header: vLLM refuses such a model
    SELECT a.engine_id, m.served_id AS model_id
    FROM acc a CROSS JOIN cm m JOIN layer_groups g ON g.model_id = m.model_id
    WHERE (g.kind = 'recurrent' AND g.variant = 'compressor'
           AND (g.compress_tokens IS NULL OR list_position(a.ratios, g.compress_tokens) IS NULL))
       OR (g.kind = 'full' AND g.compress_tokens IS NOT NULL AND a.cblock % g.compress_tokens <> 0)
)
SELECT c.engine_id, c.model_id, a.layout, c.set_key, c.storage_kind, c.block_tokens, c.window_tokens, c.raw_page,
       ((c.raw_page::BIGINT + a.align::BIGINT - 1) // a.align::BIGINT * a.align::BIGINT)::BIGINT AS page, c.layers
FROM caches c JOIN acc a USING (engine_id)
WHERE (c.engine_id, c.model_id) NOT IN (SELECT (u.engine_id, u.model_id) FROM unmodelled u)
