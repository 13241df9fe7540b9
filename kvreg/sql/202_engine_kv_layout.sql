-- engine_kv_layout: how one engine release lays out a served model's KV pool.
-- Grain: one row per engine × served model × kv_dtype × tp.
-- Inputs: engine_kv_buckets, engine_layer_specs.
-- Units: page_bytes = bytes of one block of one layer (after unification); block_bytes = bytes of
--   one block id across all shared tensors (page × group_size); tokens; layers.
-- Rules (engine_accounting.md §3): grouped: num_groups = Σ cdiv(n_b, group_size), padding_layers =
--   num_groups·group_size − layers, block_bytes = page·group_size; single: one group of all pool
--   layers, block_bytes = Σ layers·page (V0 cache_block_size, UniformTypeKVCacheSpecs); swa_pools
--   (SGLang §8): block_bytes = block·Σ(full pages + ratio·sliding pages).
--   min_block_tokens: the smallest attention block size (the ≤0.20 token report multiplies by it).
--   Quirk flags say whether a release rule changes this model's figure (engine_quirks.trigger).
CREATE OR REPLACE VIEW engine_kv_layout AS
WITH agg AS (
    SELECT engine_id, model_id, kv_dtype, tp, any_value(layout_mode) AS layout_mode,
           sum(layers) AS pool_layers,
           CASE any_value(layout_mode)
                WHEN 'grouped' THEN any_value(group_size)
                ELSE sum(layers) END AS group_size,
           CASE any_value(layout_mode) WHEN 'grouped' THEN sum(request_groups) ELSE 1 END AS num_groups,
           CASE any_value(layout_mode)
                WHEN 'grouped' THEN sum(request_groups) * any_value(group_size) - sum(layers) ELSE 0 END
               AS padding_layers,
           CASE any_value(layout_mode)
                WHEN 'grouped' THEN max(page_bytes) * any_value(group_size)
                WHEN 'swa_pools' THEN sum(layers * page_bytes * coalesce(pool_ratio, 1))
                ELSE sum(layers * page_bytes) END AS block_bytes,
           min(block_tokens) FILTER (WHERE storage_kind <> 'recurrent') AS min_block_tokens,
           max(block_tokens) FILTER (WHERE storage_kind <> 'recurrent') AS max_block_tokens,
           bool_or(storage_kind <> 'recurrent' AND attn_block_tokens > base_block_tokens) AS recurrent_page_alignment
    FROM engine_kv_buckets
    GROUP BY ALL
),
flags AS (
    SELECT engine_id, model_id, kv_dtype, tp,
           bool_or(stored_as_full AND kind = 'sliding') AS sliding_stored_as_full,
           bool_or(stored_as_full AND kind = 'chunked') AS chunked_stored_as_full,
           bool_or(kind = 'recurrent' AND NOT in_pool) AS recurrent_outside_pool,
           bool_or(k_eq_v_stored_twice) AS k_eq_v_stored_twice,
           bool_or(kind = 'mla' AND base_block_tokens > 16) AS mla_block_size,
           bool_or(in_pool AND storage_kind = 'sliding') AS sliding_prefill_reserve
    FROM engine_layer_specs
    GROUP BY ALL
)
SELECT a.engine_id, a.model_id, a.kv_dtype, a.tp, a.layout_mode, a.pool_layers,
       a.block_bytes / a.group_size AS page_bytes,
       a.min_block_tokens AS block_size_tokens, a.max_block_tokens, a.num_groups, a.group_size,
       a.padding_layers, a.block_bytes,
       f.sliding_stored_as_full, f.chunked_stored_as_full, f.recurrent_outside_pool, f.k_eq_v_stored_twice,
       f.mla_block_size, f.sliding_prefill_reserve, a.recurrent_page_alignment,
       a.padding_layers > 0 AS has_padding_layers,
       a.layout_mode = 'swa_pools' AS swa_pool_ratio
FROM agg a JOIN flags f USING (engine_id, model_id, kv_dtype, tp)
