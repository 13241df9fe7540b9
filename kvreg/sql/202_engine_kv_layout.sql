-- engine_kv_layout_at(block_size := NULL): table macro, how one engine release lays out a served model's KV pool
-- at the --block-size a user sets (NULL = the release default) — the ONE definition; the view engine_kv_layout is
-- it at the default.
-- Grain: one row per engine × served model × kv_dtype × tp × mla_block_tokens (the device class's MLA block, 0 for a
--   model without MLA layers; engine_layer_specs_at); mla_sparse: the model's MLA layers are sparse (DSA).
-- Inputs: engine_kv_buckets_at, engine_layer_specs_at.
-- Units: page_bytes = bytes of one block of one layer (after unification); block_bytes = bytes of
--   one block id across all shared tensors (page × group_size); tokens; layers.
-- Rules (engine_accounting.md §3): grouped: num_groups = Σ cdiv(n_b, group_size), padding_layers =
--   num_groups·group_size − layers, block_bytes = page·group_size; single: one group of all pool
--   layers, block_bytes = Σ layers·page (V0 cache_block_size, UniformTypeKVCacheSpecs); swa_pools
--   (SGLang §8): block_bytes = block·Σ(full pages + ratio·sliding pages); layer_tuples (DeepSeek-V4,
--   engine_compressed_buckets_at): num_groups = Σ groups of the cache sets, group_size = tuple slots per block,
--   page_bytes = one tuple (Σ distinct MLA pages), block_bytes = page·group_size, padding_layers 0 (not counted);
--   block_outermost (DeepSeek-V4 in 0.33, engine_packed_buckets_at): num_groups = Σ groups of the cache sets,
--   group_size 1, page_bytes = block_bytes = the widest group's packed pages.
--   min_block_tokens: the smallest attention block size (the ≤0.20 token report multiplies by it); layer_tuples:
--     the compressed (MLA) cache block.
--   Quirk flags say whether a release rule changes this model's figure (engine_quirks.trigger).
--   block_size, block_size_is_default: the setting (the knob, else the release's block size; engine_layer_specs_at;
--     layer_tuples: the compressed layout's, engine_compressed_buckets_at: unset = the sparse SWA backend's 256);
--   mla_block_size_forced: the knob was given but the release keeps its MLA backend's block for the mla layers.
-- Every column reference is qualified: the parameter block_size shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_kv_layout_at(block_size := NULL) AS TABLE
WITH agg AS (
    SELECT b.engine_id, b.model_id, b.kv_dtype, b.tp, b.mla_block_tokens, any_value(b.layout_mode) AS layout_mode,
           sum(b.layers) AS pool_layers,
           CASE any_value(b.layout_mode)
                WHEN 'grouped' THEN any_value(b.group_size)
                WHEN 'layer_tuples' THEN any_value(b.group_size)
                WHEN 'block_outermost' THEN any_value(b.group_size)
                ELSE sum(b.layers) END AS group_size,
           CASE any_value(b.layout_mode) WHEN 'grouped' THEN sum(b.request_groups)
                WHEN 'layer_tuples' THEN sum(b.request_groups)
                WHEN 'block_outermost' THEN sum(b.request_groups) ELSE 1 END AS num_groups,
           CASE any_value(b.layout_mode)
                WHEN 'grouped' THEN sum(b.request_groups) * any_value(b.group_size) - sum(b.layers) ELSE 0 END
               AS padding_layers,
           CASE any_value(b.layout_mode)
                WHEN 'grouped' THEN max(b.page_bytes) * any_value(b.group_size)
                WHEN 'layer_tuples' THEN max(b.page_bytes) * any_value(b.group_size)
                WHEN 'block_outermost' THEN max(b.page_bytes) * any_value(b.group_size)
                WHEN 'swa_pools' THEN sum(b.layers * b.page_bytes * coalesce(b.pool_ratio, 1))
                ELSE sum(b.layers * b.page_bytes) END AS block_bytes,
           -- layer_tuples: the cache block (the MLA set's), not the sliding sets' own small blocks
           CASE WHEN any_value(b.layout_mode) IN ('layer_tuples', 'block_outermost')
                THEN max(b.block_tokens) FILTER (WHERE b.storage_kind = 'mla')
                ELSE min(b.block_tokens) FILTER (WHERE b.storage_kind <> 'recurrent') END AS min_block_tokens,
           max(b.block_tokens) FILTER (WHERE b.storage_kind <> 'recurrent') AS max_block_tokens,
           bool_or(b.storage_kind <> 'recurrent' AND b.attn_block_tokens > b.base_block_tokens) AS recurrent_page_alignment,
           -- layer_tuples: the setting as the compressed layout has it (unset = the backend's 256, not the release's 16)
           any_value(b.block_size) AS tuple_block_size, bool_and(b.block_size_is_default) AS tuple_block_size_is_default
    FROM engine_kv_buckets_at(block_size := block_size) b
    GROUP BY ALL
),
flags AS (
    SELECT l.engine_id, l.model_id, l.kv_dtype, l.tp, l.mla_block_tokens, bool_or(l.mla_sparse) AS mla_sparse,
           bool_or(l.stored_as_full AND l.kind = 'sliding') AS sliding_stored_as_full,
           bool_or(l.stored_as_full AND l.kind = 'chunked') AS chunked_stored_as_full,
           bool_or(l.kind = 'recurrent' AND NOT l.in_pool) AS recurrent_outside_pool,
           bool_or(l.k_eq_v_stored_twice) AS k_eq_v_stored_twice,
           bool_or(l.kind = 'mla' AND l.base_block_tokens > 16) AS mla_block_size,
           bool_or(l.in_pool AND l.storage_kind = 'sliding') AS sliding_prefill_reserve,
           any_value(l.block_size) AS block_size, bool_and(l.block_size_is_default) AS block_size_is_default,
           bool_or(l.mla_block_size_forced) AS mla_block_size_forced
    FROM engine_layer_specs_at(block_size := block_size) l
    GROUP BY ALL
)
SELECT a.engine_id, a.model_id, a.kv_dtype, a.tp, a.mla_block_tokens, f.mla_sparse, a.layout_mode, a.pool_layers,
       a.block_bytes / a.group_size AS page_bytes,
       a.min_block_tokens AS block_size_tokens, a.max_block_tokens, a.num_groups, a.group_size,
       a.padding_layers, a.block_bytes,
       f.sliding_stored_as_full, f.chunked_stored_as_full, f.recurrent_outside_pool,
       -- DeepSeek-V4's caches store one vector per entry (SlidingWindowMLASpec / MLAAttentionSpec, no V)
       f.k_eq_v_stored_twice AND a.layout_mode NOT IN ('layer_tuples', 'block_outermost') AS k_eq_v_stored_twice,
       f.mla_block_size, f.sliding_prefill_reserve, a.recurrent_page_alignment,
       a.padding_layers > 0 AS has_padding_layers,
       a.layout_mode = 'swa_pools' AS swa_pool_ratio,
       CASE WHEN a.layout_mode IN ('layer_tuples', 'block_outermost') THEN a.tuple_block_size ELSE f.block_size END
           AS block_size,
       CASE WHEN a.layout_mode IN ('layer_tuples', 'block_outermost') THEN a.tuple_block_size_is_default
            ELSE f.block_size_is_default END
           AS block_size_is_default,
       f.mla_block_size_forced
FROM agg a JOIN flags f USING (engine_id, model_id, kv_dtype, tp, mla_block_tokens);

-- engine_kv_layout: engine_kv_layout_at at the release default block size (columns, grain and units as above).
CREATE OR REPLACE VIEW engine_kv_layout AS
SELECT * FROM engine_kv_layout_at()
