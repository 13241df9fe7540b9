-- capacity_for_pool(pool_bytes): a table macro answering "I have this much free: how many fit?"
-- Grain: one row per model × kv_dtype × tp × context_tokens, for a KV pool given by the caller
-- (bytes per device), bypassing the hardware and engine budget (kvreg fit --kv-pool).
-- Inputs: kv_sequence_costs.  Units: sequences, tokens, bytes.
CREATE OR REPLACE MACRO capacity_for_pool(pool_bytes) AS TABLE
SELECT s.*, pool_bytes::DOUBLE AS pool_bytes,
       greatest(0, floor(pool_bytes / s.seq_bytes))::BIGINT AS max_seqs,
       greatest(0, floor(pool_bytes / s.naive_seq_bytes))::BIGINT AS naive_max_seqs,
       greatest(0, floor(pool_bytes / s.seq_bytes * s.context_tokens))::BIGINT AS pool_tokens
FROM kv_sequence_costs s
