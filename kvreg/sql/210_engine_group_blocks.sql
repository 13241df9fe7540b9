-- engine_group_blocks(...): scalar macro, blocks one request holds in one KV group of a bucket.
-- Grain: one value per (bucket, max_model_len, batched tokens).  Units: blocks.
-- Inputs: storage_kind, block_tokens, window_tokens, max_model_len (L), window_batched_tokens
--   (T = max_num_batched_tokens × the release's factor), sliding_extra_blocks, recurrent_blocks,
--   pool_ratio (SGLang sliding pool ratio, else NULL).
-- Source (engine_accounting.md §2 max_memory_usage_bytes, vllm/v1/kv_cache_interface.py):
--   full / mla           cdiv(L, bs)
--   sliding (window W)   cdiv(min(W − 1 + T, L), bs) + 1          (SlidingWindowSpec)
--   chunked (chunk C)    cdiv(min(C + T, L), bs)                  (ChunkedLocalAttentionSpec, no +1)
--   recurrent            1 per request (MambaSpec, mode none)
--   sliding in SGLang's swa pool: min(W, L) tokens of a pool ratio × the full pool (§8)
CREATE OR REPLACE MACRO engine_group_blocks(storage_kind, block_tokens, window_tokens, max_model_len,
                                            window_batched_tokens, sliding_extra_blocks, recurrent_blocks,
                                            pool_ratio) AS
    CASE WHEN storage_kind = 'sliding' AND pool_ratio IS NOT NULL
         THEN ceil(least(window_tokens, max_model_len) / pool_ratio / block_tokens)::BIGINT
         WHEN storage_kind = 'sliding'
         THEN (least(window_tokens - 1 + window_batched_tokens, max_model_len) + block_tokens - 1) // block_tokens
              + sliding_extra_blocks
         WHEN storage_kind = 'chunked'
         THEN (least(window_tokens + window_batched_tokens, max_model_len) + block_tokens - 1) // block_tokens
         WHEN storage_kind = 'recurrent' THEN recurrent_blocks
         ELSE (max_model_len + block_tokens - 1) // block_tokens END
