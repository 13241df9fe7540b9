-- engine_concurrency(...): scalar macro, the "Maximum concurrency for L tokens per request" figure.
-- Units: requests (a ratio, unrounded; vLLM prints it with %.2f).
-- Inputs: num_blocks, blocks_per_request, block_tokens, max_model_len (L), rule.
-- Source (engine_accounting.md §1a, §4):
--   tokens_over_len (V0, V1 ≤0.8.5, SGLang, TRT-LLM): num_blocks × bs / L
--   blocks_over_request_blocks (≥0.9): num_blocks / Σ_g blocks_g (get_max_concurrency_for_kv_cache_config)
CREATE OR REPLACE MACRO engine_concurrency(num_blocks, blocks_per_request, block_tokens, max_model_len, rule) AS
    CASE rule WHEN 'tokens_over_len' THEN num_blocks * block_tokens / max_model_len
              ELSE num_blocks / blocks_per_request END
