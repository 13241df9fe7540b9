-- capacity_at(context_list): table macro, how many sequences fit in the pool at any context
-- lengths, naive vs first principles — the ONE definition of the capacity arithmetic; the view
-- capacity is this macro applied to the contexts axis table.
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp × context (each
--   distinct positive value of context_list, a LIST of token counts).
-- Inputs: memory_pools; table macro kv_sequence_costs_at.
-- Units: sequences (whole), tokens, bytes per device.
--   max_seqs        floor(pool_bytes / seq_bytes), 0 when nothing fits
--   naive_max_seqs  floor(naive_pool_bytes / naive_seq_bytes)
--   pool_tokens     tokens of context the pool holds at this context length (pool ÷ seq × s),
--                   the same definition vLLM ≥0.22 logs as "GPU KV cache size"
--   naive_ratio     naive_max_seqs ÷ max_seqs: how far the naive planner over-promises
--   fits            one sequence fits: pool_bytes ≥ seq_bytes
--   kv_pool_share   fraction of the claimed memory that is KV pool (the rest weights, reserve, residents)
-- Source: kv-budget-lesson.txt (36 vs 48 sequences), kv-arithmetic-hybrid-attention.txt.
CREATE OR REPLACE MACRO capacity_at(context_list) AS TABLE
SELECT p.model_id, p.hardware_id, p.engine_id, p.weights_dtype, s.kv_dtype, p.tp,
       s.context_tokens, s.context_label, s.within_native,
       p.usable_bytes, p.claimed_bytes, p.reserve_bytes, p.resident_bytes, p.weights_bytes, p.weights_basis,
       p.pool_bytes, p.naive_pool_bytes,
       s.seq_bytes, s.growing_bytes, s.bounded_bytes, s.state_bytes, s.conv_state_bytes, s.naive_seq_bytes,
       greatest(0, floor(p.pool_bytes / s.seq_bytes))::BIGINT AS max_seqs,
       greatest(0, floor(p.naive_pool_bytes / s.naive_seq_bytes))::BIGINT AS naive_max_seqs,
       greatest(0, floor(p.pool_bytes / s.seq_bytes * s.context_tokens))::BIGINT AS pool_tokens,
       greatest(0, floor(p.naive_pool_bytes / s.naive_seq_bytes))
           / nullif(greatest(0, floor(p.pool_bytes / s.seq_bytes)), 0) AS naive_ratio,
       p.pool_bytes >= s.seq_bytes AS fits,
       greatest(0, p.pool_bytes) / p.claimed_bytes AS kv_pool_share
FROM memory_pools p
JOIN kv_sequence_costs_at(context_list) s ON s.model_id = p.model_id AND s.tp = p.tp
