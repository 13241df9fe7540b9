-- capacity_for_pool(pool_bytes, context_list := NULL): a table macro answering "I have this much
-- free: how many fit?" for a KV pool given by the caller (bytes per device), bypassing the hardware
-- and engine budget (kvreg fit --kv-pool).
-- Grain: one row per model × kv_dtype × tp × context: each distinct positive value of context_list
--   (a LIST of token counts), or every context of the contexts axis when it is NULL.
-- Inputs: contexts; table macro kv_sequence_costs_at (the per-sequence arithmetic).
-- Units: sequences, tokens, bytes.  Columns: every column of kv_sequence_costs, then pool_bytes,
--   max_seqs = floor(pool / seq_bytes), naive_max_seqs = floor(pool / naive_seq_bytes),
--   pool_tokens = floor(pool / seq_bytes × s).
CREATE OR REPLACE MACRO capacity_for_pool(pool_bytes, context_list := NULL) AS TABLE
SELECT s.*, pool_bytes::DOUBLE AS pool_bytes,
       greatest(0, floor(pool_bytes / s.seq_bytes))::BIGINT AS max_seqs,
       greatest(0, floor(pool_bytes / s.naive_seq_bytes))::BIGINT AS naive_max_seqs,
       greatest(0, floor(pool_bytes / s.seq_bytes * s.context_tokens))::BIGINT AS pool_tokens
FROM kv_sequence_costs_at(coalesce(context_list,
                                   (SELECT list(context_tokens ORDER BY context_tokens) FROM contexts))) s
