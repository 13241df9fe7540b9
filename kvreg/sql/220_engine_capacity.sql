-- engine_capacity: what an engine release will log and admit, beside first principles.
-- Grain: one row per served model × hardware × engine × weights_dtype × kv_dtype × tp ×
--   max_model_len × max_num_batched_tokens (default_batched marks the release's default).
-- Inputs: engine_memory_pools, engine_kv_layout, engine_request_blocks, engine_accounting,
--   kv_sequence_costs_at, served_models; scalar macros engine_concurrency, engine_logged_tokens,
--   engine_starts, engine_admitted_seqs.
-- Units: bytes per device, blocks, tokens, sequences.
--   page_bytes, block_size_tokens, num_groups, group_size, padding_layers   (engine_kv_layout)
--   available_kv_bytes      predicted by the release's reserve model (engine_memory_pools)
--   num_blocks              floor(available / block_bytes) (§3 get_num_blocks), 0 when negative
--   logged_kv_tokens        "GPU KV cache size" as this release computes it (§4)
--   logged_max_concurrency  "Maximum concurrency for L tokens per request" (unrounded)
--   admitted_seqs           floor(concurrency) capped by max_num_seqs; 0 when it does not start
--   starts                  one request of L fits: num_blocks (− the null block where the release
--                           subtracts it) ≥ blocks_per_request (check_enough_kv_cache_memory)
--   first_principles_tokens pool tokens by per-kind arithmetic from the same available memory:
--                           available ÷ seq_bytes(L) × L (windows at min(L, W), state per sequence)
--   first_principles_seqs   floor(available ÷ seq_bytes(L))
--   first_principles_ratio  first_principles_tokens ÷ logged_kv_tokens (NULL when the engine logs 0)
CREATE OR REPLACE VIEW engine_capacity AS
WITH fp AS (   -- first principles at each max_model_len: the one per-sequence formula (015), summed over
               -- the served models (a target and its draft share the pool)
    SELECT s.served_id AS model_id, k.kv_dtype, k.tp, k.context_tokens AS max_model_len, sum(k.seq_bytes) AS fp_seq_bytes
    FROM served_models s
    JOIN kv_sequence_costs_at((SELECT list(max_model_len) FROM max_model_lens)) k ON k.model_id = s.model_id
    GROUP BY ALL
),
base AS (
    SELECT p.model_id, p.hardware_id, p.engine_id, p.weights_dtype, k.kv_dtype, p.tp, r.max_model_len,
           p.max_num_batched_tokens, p.default_batched, p.max_num_seqs,
           k.layout_mode, k.page_bytes, k.block_size_tokens, k.num_groups, k.group_size, k.padding_layers,
           k.block_bytes, r.blocks_per_request,
           p.usable_bytes, p.gpu_memory_utilization, p.weights_bytes, p.reserve_bytes, p.available_kv_bytes,
           greatest(0, floor(p.available_kv_bytes / k.block_bytes))::BIGINT AS num_blocks,
           a.concurrency_rule, a.logged_tokens_rule, a.null_block_in_fit_check,
           k.sliding_stored_as_full, k.chunked_stored_as_full, k.recurrent_outside_pool, k.k_eq_v_stored_twice,
           k.mla_block_size, k.sliding_prefill_reserve, k.recurrent_page_alignment, k.has_padding_layers, k.swa_pool_ratio,
           f.fp_seq_bytes
    FROM engine_memory_pools p
    JOIN engine_kv_layout k ON k.engine_id = p.engine_id AND k.model_id = p.model_id AND k.tp = p.tp
    JOIN engine_request_blocks r ON r.engine_id = k.engine_id AND r.model_id = k.model_id AND r.kv_dtype = k.kv_dtype
                                AND r.tp = k.tp AND r.max_num_batched_tokens = p.max_num_batched_tokens
    JOIN engine_accounting a ON a.engine_id = p.engine_id
    JOIN fp f ON f.model_id = k.model_id AND f.kv_dtype = k.kv_dtype AND f.tp = k.tp AND f.max_model_len = r.max_model_len
),
adm AS (
    SELECT *,
           engine_concurrency(num_blocks, blocks_per_request, block_size_tokens, max_model_len, concurrency_rule)
               AS logged_max_concurrency,
           engine_starts(num_blocks, blocks_per_request, null_block_in_fit_check) AS starts
    FROM base
)
SELECT * EXCLUDE (fp_seq_bytes),
       engine_logged_tokens(num_blocks, num_groups, block_size_tokens, logged_max_concurrency, max_model_len,
                            logged_tokens_rule) AS logged_kv_tokens,
       engine_admitted_seqs(starts, logged_max_concurrency, max_num_seqs) AS admitted_seqs,
       logged_tokens_rule = 'blocks_per_group_x_min_block_size' AND num_groups > 1 AS grouped_min_block_report,
       NOT starts AS does_not_start,
       has_padding_layers AS padding_layers_wasted,
       greatest(0, floor(available_kv_bytes / fp_seq_bytes * max_model_len))::BIGINT AS first_principles_tokens,
       greatest(0, floor(available_kv_bytes / fp_seq_bytes))::BIGINT AS first_principles_seqs,
       greatest(0, floor(available_kv_bytes / fp_seq_bytes * max_model_len))
           / nullif(engine_logged_tokens(num_blocks, num_groups, block_size_tokens, logged_max_concurrency,
                                         max_model_len, logged_tokens_rule), 0) AS first_principles_ratio
FROM adm
