-- engine_request_fits, engine_starts, engine_admitted_seqs, engine_running_requests, engine_max_num_seqs,
-- engine_running_concurrency: scalar macros, whether one
-- request of max_model_len fits the pool, whether a release starts, how many sequences it then admits, and SGLang's
-- default cap on running requests, and the requests a release keeps running; shared by engine_capacity (220) and
-- engine_capacity_for_memory (221).
-- Units: blocks, tokens, sequences.
-- Inputs: num_blocks, blocks_per_request, null_block_in_fit_check, long_request; concurrency, max_num_seqs.
-- Source (engine_accounting.md §3, §4; the releases' accounting.long_request and running_requests_rule):
--   engine_request_fits   one request of max_model_len fits: num_blocks (− the null block, block 0, where the release
--                         leaves it out of the check) ≥ blocks_per_request (vLLM check_enough_kv_cache_memory)
--   engine_starts         'refuse_start' (vLLM): only when that request fits; 'cap_request_len' (SGLang, TensorRT-LLM):
--                         whenever the pool holds a block at all — SGLang raises "Not enough memory" only when
--                         max_total_num_tokens ≤ 0 (model_runner.py) and caps max_req_len to the pool (tp_worker.py);
--                         TensorRT-LLM reduces the attention window and max_seq_len to the pool (resource_manager.py
--                         _validate_and_adjust_attention_windows)
--   engine_admitted_seqs  floor(concurrency) capped by max_num_seqs, 0 unless a request of max_model_len is served
--                         (a release that caps the request length serves none of that length); 220 passes
--                         engine_running_concurrency (below) as the concurrency
--   engine_running_requests  SGLang's max_running_requests with no --max-running-requests:
--                         min(T // divisor, min(max(floor(T ÷ L × per_context), min_requests), max_requests)),
--                         T the logged pool (max_total_num_tokens), L = context_len (tp_worker.py, model_runner.py
--                         init_memory_pool, 0.5.x); NULL where the release has no such rule
CREATE OR REPLACE MACRO engine_request_fits(num_blocks, blocks_per_request, null_block_in_fit_check) AS
    num_blocks - CASE WHEN null_block_in_fit_check THEN 1 ELSE 0 END >= blocks_per_request;

CREATE OR REPLACE MACRO engine_starts(num_blocks, blocks_per_request, null_block_in_fit_check, long_request) AS
    CASE WHEN long_request = 'cap_request_len' THEN num_blocks >= 1
         ELSE engine_request_fits(num_blocks, blocks_per_request, null_block_in_fit_check) END;

CREATE OR REPLACE MACRO engine_admitted_seqs(serves_request, concurrency, max_num_seqs) AS
    CASE WHEN serves_request THEN least(floor(concurrency), max_num_seqs) ELSE 0 END::BIGINT;

CREATE OR REPLACE MACRO engine_running_requests(pool_tokens, max_model_len, pool_divisor, per_context, min_requests,
                                                max_requests) AS
    CASE WHEN pool_divisor IS NOT NULL
         THEN least(pool_tokens // pool_divisor,
                    least(greatest(floor(pool_tokens / max_model_len * per_context), min_requests), max_requests))
         END::BIGINT;

-- engine_max_num_seqs(knob, release_max_num_seqs, pool_tokens, max_model_len, <running_requests_rule>): the cap on
-- running sequences a release applies: the knob where set, else the rule's figure where the release has one, else its
-- max_num_seqs default.
CREATE OR REPLACE MACRO engine_max_num_seqs(knob, release_max_num_seqs, pool_tokens, max_model_len, pool_divisor,
                                            per_context, min_requests, max_requests) AS
    coalesce(knob, engine_running_requests(pool_tokens, max_model_len, pool_divisor, per_context, min_requests,
                                           max_requests),
             release_max_num_seqs)::BIGINT;

-- engine_running_concurrency(num_blocks, blocks_per_request, running_blocks_per_request, null_block_in_fit_check,
-- concurrency): the requests of max_model_len a release keeps running (unrounded), what engine_admitted_seqs floors.
-- A release whose scheduler frees the blocks behind a window (accounting.frees_out_of_window_blocks: vLLM V1's
-- SlidingWindowManager / ChunkedLocalAttentionManager remove_skipped_blocks) holds running_blocks_per_request for each
-- decoding request (220 passes blocks_per_request where it does not free them) and the start-up worst case,
-- blocks_per_request, for the one whose prefill chunk is in flight:
--   N = (num_blocks − null block − blocks_per_request + running_blocks_per_request) ÷ running_blocks_per_request
-- (N − 1 decoding requests and one prefilling fill the pool).  Where no group is window-bounded (running =
-- blocks_per_request), the release's own concurrency figure (engine_concurrency, 211).
CREATE OR REPLACE MACRO engine_running_concurrency(num_blocks, blocks_per_request, running_blocks_per_request,
                                                   null_block_in_fit_check, concurrency) AS
    CASE WHEN running_blocks_per_request < blocks_per_request
         THEN greatest(0, num_blocks - CASE WHEN null_block_in_fit_check THEN 1 ELSE 0 END - blocks_per_request
                          + running_blocks_per_request) / running_blocks_per_request
         ELSE concurrency END;
