-- memory_pools_at(gpu_memory_utilization := NULL, max_num_seqs := NULL, max_num_batched_tokens := NULL,
--   enforce_eager := NULL, num_speculative_tokens := NULL, only_models := NULL, only_hardware := NULL,
--   only_engines := NULL): table macro, how much memory per accelerator
-- is left for KV cache, with the engine knobs a user sets (NULL = the engine's default) — ONE memory model
-- per engine id: an engine release with accounting rules (engine_accounting) takes its pool from
-- engine_memory_pools_at (205: the release's reserve, util basis and defaults, pool_basis = 'engine');
-- every other engine (first-principles) keeps the simple budget below (pool_basis = 'first-principles').
-- The view memory_pools is this macro with every knob at its default.  only_models / only_hardware / only_engines
-- (VARCHAR[], NULL = all) keep those rows only, filtered inside the macro: a caller that joins these rows to others by their keys
-- (capacity_at's engine rows) cannot have its own filter pushed here, and the engine pools of the whole registry
-- are ~1.7 M rows.
-- Grain: one row per model × hardware × engine × weights_dtype × tp.
-- Inputs: hardware, residents, engines, engine_accounting, model_weights, tp_sizes; engine_memory_pools_at.
-- Units: bytes per accelerator (per TP rank).
--   usable_bytes     runtime-reported (or estimated) memory of one device
--   claimed_bytes    usable × gpu_memory_utilization
--   reserve_bytes    first-principles: the engine entry's runtime reserve (activations, workspace, graphs);
--                    engine: the release's reserve (non-torch + activation/sampler peak + CUDA graphs)
--   resident_bytes   memory held by other residents of the device (OS, caches, other models); subtracted
--                    in the simple budget only (an engine release sizes its pool by its own rule)
--   weights_bytes_per_rank  model weights ÷ tp (one device's share; the whole model's is model_weights.weights_bytes)
--   pool_bytes       first-principles: claimed − reserve − residents − weights;
--                    engine: the release's predicted "Available KV cache memory" (available_kv_bytes);
--                    negative: the model does not fit
--   naive_pool_bytes marketed (decimal) memory − naive_weights_bytes, as the naive planner subtracts
--   naive_weights_bytes  the checkpoint's weights ÷ tp (model_weights), the same for every engine: the naive
--                    planner knows the checkpoint, not what a release loads beside it.  An engine row's
--                    weights_bytes_per_rank is what the release loads per rank (model_weights_per_rank, 035): vocab
--                    padded to 64 rows and buffers such as the rotary cos/sin cache (llama-3.1-8b bf16:
--                    16.06 GB checkpoint + 33.6 MB = 131,072 positions × 128 × 2 B of cos/sin cache =
--                    16.09 GB, as vLLM's "Model loading took" counts it)
--   pool_basis       'engine' | 'first-principles'
--   gpu_memory_utilization, util_is_default; max_num_seqs, max_num_seqs_is_default, max_num_batched_tokens,
--   default_batched, enforce_eager, num_speculative_tokens   the settings (engine rows; NULL in the simple
--                    budget, which has no such knobs besides the utilization)
-- Source: kv-budget-lesson.txt (79.6 GiB usable, 6 GiB reserve, naive 80 − 54); engine rows: 205.
-- Every column reference is qualified: a macro parameter shadows an unqualified column of its name.
CREATE OR REPLACE MACRO memory_pools_at(gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                        max_num_batched_tokens := NULL, enforce_eager := NULL,
                                        num_speculative_tokens := NULL, only_models := NULL,
                                        only_hardware := NULL, only_engines := NULL) AS TABLE
WITH resident_total AS (
    SELECT r.hardware_id, sum(coalesce(r.resident_bytes::DOUBLE, w.weights_bytes)) AS resident_bytes
    FROM residents r
    LEFT JOIN model_weights w ON w.model_id = r.model_id AND w.weights_dtype = coalesce(r.weights_dtype, 'bf16')
    GROUP BY r.hardware_id
),
simple AS (
    SELECT w.model_id, h.hardware_id, e.engine_id, w.weights_dtype, t.tp,
           h.usable_bytes, h.marketed_bytes,
           coalesce(gpu_memory_utilization, e.gpu_memory_utilization)::DOUBLE AS util,
           coalesce(gpu_memory_utilization, e.gpu_memory_utilization) = e.gpu_memory_utilization AS util_is_default,
           e.reserve_bytes::DOUBLE AS reserve_bytes,
           coalesce(r.resident_bytes, 0) AS resident_bytes,
           w.weights_bytes / t.tp AS weights_bytes_per_rank,
           w.weights_basis
    FROM model_weights w
    CROSS JOIN hardware h
    CROSS JOIN engines e
    CROSS JOIN tp_sizes t
    LEFT JOIN resident_total r ON r.hardware_id = h.hardware_id
    WHERE e.engine_id NOT IN (SELECT a.engine_id FROM engine_accounting a)
      AND (only_models IS NULL OR list_contains(only_models, w.model_id))
      AND (only_hardware IS NULL OR list_contains(only_hardware, h.hardware_id))
      AND (only_engines IS NULL OR list_contains(only_engines, e.engine_id))
)
SELECT s.model_id, s.hardware_id, s.engine_id, s.weights_dtype, s.tp, s.usable_bytes, s.marketed_bytes,
       s.usable_bytes * s.util AS claimed_bytes, s.reserve_bytes, s.resident_bytes, s.weights_bytes_per_rank, s.weights_basis,
       s.usable_bytes * s.util - s.reserve_bytes - s.resident_bytes - s.weights_bytes_per_rank AS pool_bytes,
       s.marketed_bytes - s.weights_bytes_per_rank AS naive_pool_bytes, s.weights_bytes_per_rank AS naive_weights_bytes,
       'first-principles' AS pool_basis, s.util AS gpu_memory_utilization, s.util_is_default,
       NULL::BIGINT AS max_num_seqs, NULL::BOOLEAN AS max_num_seqs_is_default,
       NULL::BIGINT AS max_num_batched_tokens, NULL::BOOLEAN AS default_batched,
       NULL::BOOLEAN AS enforce_eager, NULL::BIGINT AS num_speculative_tokens
FROM simple s
UNION ALL
SELECT p.model_id, p.hardware_id, p.engine_id, p.weights_dtype, p.tp, p.usable_bytes, h.marketed_bytes,
       p.usable_bytes * p.gpu_memory_utilization, p.reserve_bytes, coalesce(r.resident_bytes, 0), p.weights_bytes_per_rank,
       w.weights_basis, p.available_kv_bytes, h.marketed_bytes - w.weights_bytes / p.tp, w.weights_bytes / p.tp,
       'engine', p.gpu_memory_utilization, p.util_is_default, p.max_num_seqs, p.max_num_seqs_is_default,
       p.max_num_batched_tokens, p.default_batched, p.enforce_eager, p.num_speculative_tokens
FROM engine_memory_pools_at(max_num_batched_tokens := max_num_batched_tokens,
                            gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs,
                            enforce_eager := enforce_eager, num_speculative_tokens := num_speculative_tokens,
                            only_models := only_models, only_hardware := only_hardware,
                            only_engines := only_engines) p
JOIN model_weights w ON w.model_id = p.model_id AND w.weights_dtype = p.weights_dtype
JOIN hardware h ON h.hardware_id = p.hardware_id
LEFT JOIN resident_total r ON r.hardware_id = p.hardware_id
WHERE (only_models IS NULL OR list_contains(only_models, p.model_id))
  AND (only_hardware IS NULL OR list_contains(only_hardware, p.hardware_id));

-- memory_pools: memory_pools_at with every knob at its default (columns, grain and units as above).
CREATE OR REPLACE VIEW memory_pools AS
SELECT * FROM memory_pools_at()
