-- engine_logged_tokens(...): scalar macro, the "GPU KV cache size: N tokens" figure a release logs.
-- Units: tokens.  Inputs: num_blocks, num_groups, block_tokens (smallest attention block),
--   concurrency (engine_concurrency), max_model_len (L), rule.
-- Source (engine_accounting.md §4):
--   blocks_x_block_size (V0 error text, V1 ≤0.8.5, SGLang, TRT-LLM): num_blocks × bs
--   blocks_per_group_x_min_block_size (0.9 – 0.20): num_blocks // n_groups × min block size
--   concurrency_x_len (≥0.21/0.22 get_kv_cache_capacity): int(conc × L), same float arithmetic as Python
CREATE OR REPLACE MACRO engine_logged_tokens(num_blocks, num_groups, block_tokens, concurrency, max_model_len, rule) AS
    CASE rule WHEN 'blocks_x_block_size' THEN num_blocks * block_tokens
              WHEN 'blocks_per_group_x_min_block_size' THEN (num_blocks // num_groups) * block_tokens
              ELSE floor(concurrency * max_model_len) END::BIGINT
