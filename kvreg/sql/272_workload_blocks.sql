-- workload_blocks_at(prefix_tokens, prompt_tokens, block_size := NULL): table macro, the blocks of a request an engine release's
-- prefix cache shares — the ONE definition of prefix sharing in blocks (plans, 275, uses it with
-- engine_seq_blocks below).
-- Grain: one row per engine × served model × kv_dtype × tp × mla_block_tokens (as engine_kv_buckets: the device
--   class's MLA block, 0 without MLA layers; plans join it on capacity_at's mla_block_tokens).
-- Inputs: engine_kv_buckets (the layout's block_tokens and request_groups: the block size comes from the
--   layout, never a constant); prefix_tokens P (a system prompt every sequence of a replica starts with),
--   prompt_tokens I (the request's whole input, ≥ P + 1; NULL = unknown, then P + 1: only the prefix is
--   known to be shared); block_size: the --block-size knob (NULL = the release default), passed to
--   engine_kv_buckets_at so the shared blocks are counted at the blocks the plan is sized on.
-- Units: blocks (summed over the KV groups a request holds blocks in).
--   prefix_blocks  Σ over full-attention (full, mla) groups ⌊min(P, I − 1) ÷ block_tokens⌋: held ONCE per replica
--   prompt_blocks  Σ over the same groups ⌊(I − 1) ÷ block_tokens⌋: held once per request by its n samples
-- Rule (vLLM 0.19.0 v1, read in the released wheel):
--   only FULL blocks are hashed and so only full blocks can be shared — v1/core/kv_cache_utils.py:592-597
--   (request_block_hasher: "We only hash full blocks"); a cache hit is a run of whole blocks,
--   max_length // block_size (v1/core/single_type_kv_cache_manager.py:445), capped at num_tokens − 1
--   ("we must recompute the last token", v1/core/kv_cache_manager.py:195-201).  So the tail P mod block of a
--   prefix is in a block of its own in every sequence (that block also holds the sequence's own tokens).
--   Sliding-window and chunked groups: a sequence at its end holds only its last W tokens
--   (remove_skipped_blocks frees blocks behind the window, single_type_kv_cache_manager.py:358-398,
--   get_num_skipped_tokens = computed − W + 1, :601), and those are past the prefix once the sequence is
--   W tokens beyond it; so they are counted unshared (conservative for a sequence still inside its window).
--   Recurrent state is per sequence (one state block per request).  A single-group layout shares only
--   when every pool layer is full attention (one block spans all layers); a mixed single group or SGLang's
--   two pools: no sharing counted (conservative).
--   Parallel sampling n > 1: vLLM v1 fans a request out into n child requests with the same prompt
--   (v1/engine/async_llm.py:386-397, ParentRequest), which hit each other's cached prompt blocks by the
--   same rule; beam search is n sequences of one prompt as well.
CREATE OR REPLACE MACRO workload_blocks_at(prefix_tokens, prompt_tokens, block_size := NULL) AS TABLE
SELECT b.engine_id, b.model_id, b.kv_dtype, b.tp, b.mla_block_tokens,
       CASE WHEN any_value(b.layout_mode) IN ('grouped', 'layer_tuples', 'block_outermost')
            THEN coalesce(sum(b.request_groups * (least(prefix_tokens, coalesce(prompt_tokens, prefix_tokens + 1) - 1)
                                                  // b.block_tokens))
                          FILTER (WHERE b.storage_kind IN ('full', 'mla')), 0)
            WHEN bool_and(b.storage_kind IN ('full', 'mla')) AND any_value(b.layout_mode) = 'single'
            THEN max(least(prefix_tokens, coalesce(prompt_tokens, prefix_tokens + 1) - 1) // b.block_tokens)
            ELSE 0 END::BIGINT AS prefix_blocks,
       CASE WHEN any_value(b.layout_mode) IN ('grouped', 'layer_tuples', 'block_outermost')
            THEN coalesce(sum(b.request_groups * ((coalesce(prompt_tokens, prefix_tokens + 1) - 1) // b.block_tokens))
                          FILTER (WHERE b.storage_kind IN ('full', 'mla')), 0)
            WHEN bool_and(b.storage_kind IN ('full', 'mla')) AND any_value(b.layout_mode) = 'single'
            THEN max((coalesce(prompt_tokens, prefix_tokens + 1) - 1) // b.block_tokens)
            ELSE 0 END::BIGINT AS prompt_blocks
FROM engine_kv_buckets_at(block_size := block_size) b
GROUP BY ALL;

-- engine_seq_blocks(blocks_per_request, prefix_blocks, prompt_blocks, samples): scalar macro, the blocks one
-- request of `samples` sequences holds beyond the replica's shared prefix — the ONE engine-side per-request
-- block count of a workload.  blocks_per_request: one sequence of the held length alone
-- (engine_request_blocks_at, 215); prefix_blocks, prompt_blocks: workload_blocks_at.
-- = n × (blocks − prompt_blocks) + (prompt_blocks − prefix_blocks): each sample its own blocks after the
--   prompt's full blocks, the prompt's full blocks beyond the prefix once per request.  n = 1:
--   blocks − prefix_blocks.
-- Admission (plans): ⌊(num_blocks − prefix_blocks) ÷ engine_seq_blocks⌋ requests, i.e.
--   num_blocks − shared ≥ requests × per-request blocks.
CREATE OR REPLACE MACRO engine_seq_blocks(blocks_per_request, prefix_blocks, prompt_blocks, samples) AS
    samples * (blocks_per_request - prompt_blocks) + (prompt_blocks - prefix_blocks);

-- workload_requests(request_rate_per_s, ttft_s, output_tokens, tpot_s): scalar macro, concurrent requests of a
-- workload given as a request rate — Little's law, L = λ × W, with W the time a request spends in the
-- system when it just meets its targets: TTFT + (output − 1) × TPOT (the first token at TTFT, each further
-- one TPOT later: vLLM's own benchmark defines TPOT = (latency − TTFT) ÷ (output_len − 1),
-- vllm/benchmarks/serve.py:443-446 in 0.19.0).  The targets are upper bounds, so sizing at them is the
-- largest mean concurrency a configuration meeting them sees.  TTFT not given: 0 (W undercounts the
-- prefill; `kvreg plan` says so).  Rounded up to whole requests; the mean, not a percentile (a Poisson
-- arrival stream fluctuates by about √L around it).
-- Units: requests per second, seconds, tokens → requests.
CREATE OR REPLACE MACRO workload_requests(request_rate_per_s, ttft_s, output_tokens, tpot_s) AS
    ceil(request_rate_per_s * (coalesce(ttft_s, 0) + greatest(output_tokens - 1, 0) * tpot_s))::BIGINT
