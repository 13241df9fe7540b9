-- capacity_at(context_list, gpu_memory_utilization := NULL, max_num_seqs := NULL,
--   max_num_batched_tokens := NULL, enforce_eager := NULL, num_speculative_tokens := NULL): table macro,
-- how many sequences fit at any context lengths, naive vs first principles vs what the engine admits —
-- the ONE definition of the capacity every per-scenario view plans on; the view capacity is this macro
-- applied to the contexts axis table.  The knobs (NULL = the engine's default) go to memory_pools_at and
-- engine_capacity_at.
-- One memory model per engine id: for an engine release with accounting rules (pool_basis = 'engine') the
-- pool is the release's available KV memory and max_seqs is the engine's admission (engine_capacity_at:
-- blocks, the start check, max_num_seqs); for first-principles it is floor(pool ÷ seq_bytes).
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp × context (each
--   distinct positive value of context_list, a LIST of token counts).
-- Inputs: memory_pools_at; table macros kv_sequence_costs_at, engine_capacity_at.
-- Units: sequences (whole), tokens, bytes per device.
--   first_principles_seqs  floor(pool_bytes / seq_bytes), 0 when nothing fits (the same pool, any engine)
--   max_seqs        the sequences the scenario is sized on: engine_admitted_seqs for pool_basis 'engine',
--                   first_principles_seqs otherwise
--   naive_max_seqs  floor(naive_pool_bytes / naive_seq_bytes)
--   pool_tokens     tokens of context the pool holds: engine rows the release's logged "GPU KV cache size";
--                   first principles pool ÷ seq × s (the definition vLLM ≥0.22 logs)
--   naive_ratio     naive_max_seqs ÷ max_seqs: how far the naive planner over-promises
--   fits            one sequence fits: the engine starts and admits one (engine), pool_bytes ≥ seq_bytes
--                   (first principles)
--   engine_starts   the release starts at this max_model_len (NULL for first principles)
--   kv_pool_share   fraction of the claimed memory that is KV pool (the rest weights, reserve, residents)
--   pool_basis and the knob columns: as memory_pools_at
-- Source: kv-budget-lesson.txt (36 vs 48 sequences), kv-arithmetic-hybrid-attention.txt; engine rows:
--   engine_accounting.md (220).
CREATE OR REPLACE MACRO capacity_at(context_list, gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                    max_num_batched_tokens := NULL, enforce_eager := NULL,
                                    num_speculative_tokens := NULL) AS TABLE
WITH fp AS (
    SELECT p.model_id, p.hardware_id, p.engine_id, p.weights_dtype, s.kv_dtype, p.tp,
           s.context_tokens, s.context_label, s.within_native,
           p.usable_bytes, p.claimed_bytes, p.reserve_bytes, p.resident_bytes, p.weights_bytes, p.weights_basis,
           p.pool_bytes, p.naive_pool_bytes,
           s.seq_bytes, s.growing_bytes, s.bounded_bytes, s.state_bytes, s.conv_state_bytes, s.naive_seq_bytes,
           greatest(0, floor(p.pool_bytes / s.seq_bytes))::BIGINT AS first_principles_seqs,
           greatest(0, floor(p.naive_pool_bytes / s.naive_seq_bytes))::BIGINT AS naive_max_seqs,
           greatest(0, floor(p.pool_bytes / s.seq_bytes * s.context_tokens))::BIGINT AS first_principles_tokens,
           p.pool_basis, p.gpu_memory_utilization, p.util_is_default, p.max_num_seqs, p.max_num_seqs_is_default,
           p.max_num_batched_tokens, p.default_batched, p.enforce_eager, p.num_speculative_tokens
    FROM memory_pools_at(gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs,
                         max_num_batched_tokens := max_num_batched_tokens, enforce_eager := enforce_eager,
                         num_speculative_tokens := num_speculative_tokens) p
    JOIN kv_sequence_costs_at(context_list) s ON s.model_id = p.model_id AND s.tp = p.tp
),
sized AS (
    SELECT f.*, e.starts AS engine_starts, e.admitted_seqs AS engine_admitted_seqs,
           e.logged_kv_tokens AS engine_logged_kv_tokens,
           CASE WHEN f.pool_basis = 'engine' THEN coalesce(e.admitted_seqs, 0)
                ELSE f.first_principles_seqs END::BIGINT AS max_seqs,
           CASE WHEN f.pool_basis = 'engine' THEN coalesce(e.logged_kv_tokens, 0)
                ELSE f.first_principles_tokens END::BIGINT AS pool_tokens,
           CASE WHEN f.pool_basis = 'engine' THEN coalesce(e.starts AND e.admitted_seqs >= 1, false)
                ELSE f.pool_bytes >= f.seq_bytes END AS fits
    FROM fp f
    LEFT JOIN engine_capacity_at(context_list, gpu_memory_utilization := gpu_memory_utilization,
                                 max_num_seqs := max_num_seqs, max_num_batched_tokens := max_num_batched_tokens,
                                 enforce_eager := enforce_eager, num_speculative_tokens := num_speculative_tokens) e
           ON f.pool_basis = 'engine' AND e.engine_id = f.engine_id AND e.model_id = f.model_id
          AND e.hardware_id = f.hardware_id AND e.weights_dtype = f.weights_dtype AND e.kv_dtype = f.kv_dtype
          AND e.tp = f.tp AND e.max_model_len = f.context_tokens
)
SELECT z.model_id, z.hardware_id, z.engine_id, z.weights_dtype, z.kv_dtype, z.tp,
       z.context_tokens, z.context_label, z.within_native,
       z.usable_bytes, z.claimed_bytes, z.reserve_bytes, z.resident_bytes, z.weights_bytes, z.weights_basis,
       z.pool_bytes, z.naive_pool_bytes,
       z.seq_bytes, z.growing_bytes, z.bounded_bytes, z.state_bytes, z.conv_state_bytes, z.naive_seq_bytes,
       z.max_seqs, z.naive_max_seqs, z.pool_tokens,
       z.naive_max_seqs / nullif(z.max_seqs, 0) AS naive_ratio,
       z.fits,
       greatest(0, z.pool_bytes) / z.claimed_bytes AS kv_pool_share,
       z.first_principles_seqs, z.first_principles_tokens, z.engine_starts, z.engine_admitted_seqs,
       z.pool_basis, z.gpu_memory_utilization, z.util_is_default, z.max_num_seqs, z.max_num_seqs_is_default,
       z.max_num_batched_tokens, z.default_batched, z.enforce_eager, z.num_speculative_tokens
FROM sized z
