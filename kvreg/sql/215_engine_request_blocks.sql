-- engine_request_blocks_at(len_list, batched_list, block_size := NULL, only_models := NULL, only_engines := NULL,
--   release_batched := NULL): table macro, blocks one request of max_model_len
-- tokens holds, summed over KV groups — the ONE definition of blocks per request; the view
-- engine_request_blocks is this macro over the max_model_lens and batched_tokens axes, and
-- engine_capacity_at (220) applies it at any context and batched-token setting.
-- Grain: one row per engine × served model × kv_dtype × tp × mla_block_tokens (engine_kv_buckets_at) × max_model_len (each distinct value of
--   len_list, a LIST of token counts) × max_num_batched_tokens (each distinct value of batched_list).
--   block_size: the --block-size a user sets (NULL = the release default), passed to engine_kv_buckets_at.
--   only_models / only_engines (VARCHAR[] of served model and engine ids, NULL = all): those rows only, filtered before
--   the lengths × batched settings fan-out (engine_capacity_at joins these rows by keys, so its caller's filters do
--   not reach here; the whole registry is ~1.3 M rows per call).  Rows are per bucket set: no value changes.
--   release_batched (BOOLEAN, NULL = false): only the batched settings a release can default to on some device
--   (its max_num_batched_tokens, max_num_batched_tokens_large_gpu, its mem-fraction tiers' chunked_prefill_tokens:
--   205 release_batched), not batched_list's other values (engine_capacity_at at the release defaults joins no other).
-- Inputs: engine_kv_buckets_at, engine_accounting; scalar macro engine_group_blocks (210).
-- Units: blocks.
-- Rule (engine_accounting.md §4): recurrent groups hold the release's blocks + num_speculative_tokens
--   (MambaSpec.max_memory_usage_bytes, v1/kv_cache_interface.py 0.20.0:540-547);
--   grouped pools (and DeepSeek-V4's layer tuples and 0.33 packing, whose groups share one block pool) sum blocks over all
--   groups (Σ_g blocks_g); a single
--   group (or SGLang's pools) needs the largest per-bucket figure.
--   running_blocks_per_request: the blocks one request holds while it decodes at max_model_len, T = 0 in the window
--   formulas (a sliding group cdiv(min(W − 1, L), bs) + 1: the window's W − 1 earlier tokens and the +1 for a window that
--   does not start on a block boundary, SlidingWindowManager.remove_skipped_blocks; a chunked group one chunk); equal to
--   blocks_per_request for a model without window-bounded layers; NULL where the release does not free the blocks behind a
--   window (accounting.frees_out_of_window_blocks false: the scheduler holds the start-up figure) and for DeepSeek-V4's
--   page-weighted layouts (layer_tuples, block_outermost: their freeing is not modelled).
--   concurrency_blocks_per_request: the blocks the "Maximum concurrency" figure divides by
--   (get_max_concurrency_for_kv_cache_config, v1/core/kv_cache_utils.py 0.22.0:877-895: num_layer_per_group ×
--   Σ_g max_memory_usage_bytes(group) ÷ (group 0's page × num_layer_per_group)): for layer_tuples (DeepSeek-V4)
--   cdiv(Σ_set blocks_set × set page bytes, MLA set page bytes), where a UniformTypeKVCacheSpecs group's page is the
--   sum of its layers' pages; for every other layout it is blocks_per_request (block_outermost, DeepSeek-V4 in 0.33:
--   v1/core/kv_cache_utils.py 0.33.0:1061-1098 divides by Σ_g cdiv(max_memory_usage_bytes, page) = Σ_g blocks_g).
CREATE OR REPLACE MACRO engine_request_blocks_at(len_list, batched_list, block_size := NULL, only_models := NULL,
                                                 only_engines := NULL, release_batched := NULL) AS TABLE
SELECT b.engine_id, b.model_id, b.kv_dtype, b.tp, b.mla_block_tokens, l.max_model_len, t.max_num_batched_tokens,
       CASE WHEN any_value(b.layout_mode) IN ('grouped', 'layer_tuples', 'block_outermost') THEN sum(b.request_groups * engine_group_blocks(
                 b.storage_kind, b.block_tokens, b.window_tokens, l.max_model_len,
                 t.max_num_batched_tokens * a.window_batched_tokens_factor, a.sliding_extra_blocks,
                 a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio))
            ELSE max(engine_group_blocks(
                 b.storage_kind, b.block_tokens, b.window_tokens, l.max_model_len,
                 t.max_num_batched_tokens * a.window_batched_tokens_factor, a.sliding_extra_blocks,
                 a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio)) END::BIGINT AS blocks_per_request,
       -- the same request once it decodes at max_model_len with no prefill chunk in flight (T = 0): its sliding groups
       -- hold cdiv(min(W − 1, L), bs) + 1 blocks, its chunked groups one chunk, the rest as above — what a scheduler
       -- that frees the blocks behind the window keeps per running request (accounting.frees_out_of_window_blocks);
       -- NULL where the scheduler holds the start-up figure
       CASE WHEN NOT any_value(a.frees_out_of_window_blocks)
                 OR any_value(b.layout_mode) IN ('layer_tuples', 'block_outermost') THEN NULL
            WHEN any_value(b.layout_mode) = 'grouped' THEN sum(b.request_groups * engine_group_blocks(
                 b.storage_kind, b.block_tokens, b.window_tokens, l.max_model_len, 0, a.sliding_extra_blocks,
                 a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio))
            ELSE max(engine_group_blocks(
                 b.storage_kind, b.block_tokens, b.window_tokens, l.max_model_len, 0, a.sliding_extra_blocks,
                 a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio)) END::BIGINT
           AS running_blocks_per_request,
       -- the blocks vLLM's concurrency figure charges: layer_tuples weights each cache set's blocks by its pages
       -- over the MLA set's, cdiv(Σ_set blocks · set pages, MLA set pages); otherwise blocks_per_request
       coalesce(((sum(b.raw_page_bytes::BIGINT * engine_group_blocks(
                      b.storage_kind, b.block_tokens, b.window_tokens, l.max_model_len,
                      t.max_num_batched_tokens * a.window_batched_tokens_factor, a.sliding_extra_blocks, 0, NULL))
                      FILTER (WHERE b.layout_mode = 'layer_tuples')
                  + max(b.raw_page_bytes::BIGINT) FILTER (WHERE b.layout_mode = 'layer_tuples' AND b.storage_kind = 'mla') - 1)
                 // max(b.raw_page_bytes::BIGINT) FILTER (WHERE b.layout_mode = 'layer_tuples' AND b.storage_kind = 'mla')),
                blocks_per_request)::BIGINT AS concurrency_blocks_per_request
FROM engine_kv_buckets_at(block_size := block_size) b
JOIN engine_accounting a ON a.engine_id = b.engine_id
CROSS JOIN (SELECT DISTINCT unnest(len_list)::BIGINT AS max_model_len) l
CROSS JOIN (SELECT DISTINCT unnest(batched_list)::BIGINT AS max_num_batched_tokens) t
LEFT JOIN (SELECT y.engine_id, list(y.chunked_prefill_tokens) AS tiers FROM engine_mem_fraction_tiers y GROUP BY ALL) rt
       ON coalesce(release_batched, false) AND rt.engine_id = a.engine_id
WHERE l.max_model_len > 0
  AND (NOT coalesce(release_batched, false)
       OR t.max_num_batched_tokens IN (a.max_num_batched_tokens, a.max_num_batched_tokens_large_gpu)
       OR list_contains(coalesce(rt.tiers, []), t.max_num_batched_tokens))
  AND (only_models IS NULL OR list_contains(only_models, b.model_id))
  AND (only_engines IS NULL OR list_contains(only_engines, b.engine_id))
GROUP BY ALL;

-- engine_request_blocks: engine_request_blocks_at over the max_model_lens × batched_tokens axes (both include
-- every observation's setting); columns, grain and units as the macro above.
CREATE OR REPLACE VIEW engine_request_blocks AS
SELECT * FROM engine_request_blocks_at((SELECT list(max_model_len ORDER BY max_model_len) FROM max_model_lens),
                                       (SELECT list(max_num_batched_tokens ORDER BY max_num_batched_tokens)
                                        FROM batched_tokens))
