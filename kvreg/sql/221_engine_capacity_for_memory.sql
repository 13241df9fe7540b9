-- engine_capacity_for_memory(available_kv_bytes, max_model_len, max_num_batched_tokens): table macro,
-- the block arithmetic alone for a given "Available KV cache memory" (e.g. read from a startup log),
-- so the engine's accounting can be checked exactly, separately from the reserve estimate.
-- Grain: one row per engine × served model × kv_dtype × tp.
-- Inputs: engine_kv_layout, engine_kv_buckets, engine_accounting, kv_sequence_costs_at, served_models;
--   scalar macros engine_group_blocks, engine_concurrency, engine_logged_tokens,
--   engine_starts, engine_admitted_seqs.
-- Units: bytes per device, blocks, tokens, sequences; same columns and rules as engine_capacity
--   (max_num_seqs is the release's small-GPU default; admitted_seqs is capped by it).
CREATE OR REPLACE MACRO engine_capacity_for_memory(available_kv_bytes, max_model_len, max_num_batched_tokens) AS TABLE
WITH req AS (
    SELECT b.engine_id, b.model_id, b.kv_dtype, b.tp,
           CASE any_value(b.layout_mode)
                WHEN 'grouped' THEN sum(b.request_groups * engine_group_blocks(
                     b.storage_kind, b.block_tokens, b.window_tokens, max_model_len,
                     max_num_batched_tokens * a.window_batched_tokens_factor, a.sliding_extra_blocks,
                     a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio))
                ELSE max(engine_group_blocks(
                     b.storage_kind, b.block_tokens, b.window_tokens, max_model_len,
                     max_num_batched_tokens * a.window_batched_tokens_factor, a.sliding_extra_blocks,
                     a.recurrent_blocks_per_request + b.num_speculative_tokens, b.pool_ratio)) END::BIGINT AS blocks_per_request
    FROM engine_kv_buckets b JOIN engine_accounting a USING (engine_id)
    GROUP BY ALL
),
fp AS (   -- the one per-sequence formula (015), summed over the served models (target + draft)
    SELECT s.served_id AS model_id, k.kv_dtype, k.tp, sum(k.seq_bytes) AS fp_seq_bytes
    FROM served_models s JOIN kv_sequence_costs_at([max_model_len]) k ON k.model_id = s.model_id
    GROUP BY ALL
),
base AS (
    SELECT k.engine_id, k.model_id, k.kv_dtype, k.tp, max_model_len::BIGINT AS max_model_len,
           max_num_batched_tokens::BIGINT AS max_num_batched_tokens, a.max_num_seqs,
           k.layout_mode, k.page_bytes, k.block_size_tokens, k.num_groups, k.group_size, k.padding_layers,
           k.block_bytes, r.blocks_per_request, available_kv_bytes::DOUBLE AS available_kv_bytes,
           greatest(0, floor(available_kv_bytes / k.block_bytes))::BIGINT AS num_blocks,
           a.concurrency_rule, a.logged_tokens_rule, a.null_block_in_fit_check, f.fp_seq_bytes
    FROM engine_kv_layout k
    JOIN req r USING (engine_id, model_id, kv_dtype, tp)
    JOIN engine_accounting a USING (engine_id)
    JOIN fp f USING (model_id, kv_dtype, tp)
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
       greatest(0, floor(available_kv_bytes / fp_seq_bytes * max_model_len))::BIGINT AS first_principles_tokens,
       greatest(0, floor(available_kv_bytes / fp_seq_bytes))::BIGINT AS first_principles_seqs
FROM adm
