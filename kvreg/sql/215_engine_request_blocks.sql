-- engine_request_blocks: blocks one request of max_model_len tokens holds, summed over KV groups.
-- Grain: one row per engine × served model × kv_dtype × tp × max_model_len × max_num_batched_tokens
--   (axis tables max_model_lens and batched_tokens; both include every observation's setting).
-- Inputs: engine_kv_buckets, engine_accounting, max_model_lens, batched_tokens.
-- Units: blocks.
-- Rule (engine_accounting.md §4): recurrent groups hold the release's blocks + num_speculative_tokens
--   (MambaSpec.max_memory_usage_bytes, v1/kv_cache_interface.py 0.20.0:540-547);
--   grouped pools sum blocks over all groups (Σ_g blocks_g); a single
--   group (or SGLang's pools) needs the largest per-bucket figure.
CREATE OR REPLACE VIEW engine_request_blocks AS
SELECT b.engine_id, b.model_id, b.kv_dtype, b.tp, l.max_model_len, t.max_num_batched_tokens,
       CASE any_value(b.layout_mode)
            WHEN 'grouped' THEN sum(b.request_groups * engine_group_blocks(
                 b.storage_kind, b.block_tokens, b.window_tokens, l.max_model_len,
                 t.max_num_batched_tokens * a.window_batched_tokens_factor, a.sliding_extra_blocks,
                 a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio))
            ELSE max(engine_group_blocks(
                 b.storage_kind, b.block_tokens, b.window_tokens, l.max_model_len,
                 t.max_num_batched_tokens * a.window_batched_tokens_factor, a.sliding_extra_blocks,
                 a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio)) END::BIGINT AS blocks_per_request
FROM engine_kv_buckets b
JOIN engine_accounting a USING (engine_id)
CROSS JOIN max_model_lens l
CROSS JOIN batched_tokens t
GROUP BY ALL
