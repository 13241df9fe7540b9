-- memory_pools: how much memory per accelerator is left for KV cache.
-- Grain: one row per model × hardware × engine × weights_dtype × tp.
-- Inputs: hardware, residents, engines, model_weights, tp_sizes.
-- Units: bytes per accelerator (per TP rank).
--   usable_bytes     runtime-reported (or estimated) memory of one device
--   claimed_bytes    usable × the engine's gpu_memory_utilization
--   reserve_bytes    the engine's runtime reserve (activations, workspace, graphs)
--   resident_bytes   memory held by other residents of the device (OS, caches, other models)
--   weights_bytes    model weights ÷ tp
--   pool_bytes       claimed − reserve − residents − weights (negative: the model does not fit)
--   naive_pool_bytes marketed (decimal) memory − weights ÷ tp, as the naive planner subtracts
-- Source: kv-budget-lesson.txt (79.6 GiB usable, 6 GiB reserve, naive 80 − 54).
CREATE OR REPLACE VIEW memory_pools AS
WITH resident_total AS (
    SELECT r.hardware_id, sum(coalesce(r.resident_bytes::DOUBLE, w.weights_bytes)) AS resident_bytes
    FROM residents r
    LEFT JOIN model_weights w ON w.model_id = r.model_id AND w.weights_dtype = coalesce(r.weights_dtype, 'bf16')
    GROUP BY r.hardware_id
)
SELECT w.model_id, h.hardware_id, e.engine_id, w.weights_dtype, t.tp,
       h.usable_bytes, h.marketed_bytes,
       h.usable_bytes * e.gpu_memory_utilization AS claimed_bytes,
       e.reserve_bytes,
       coalesce(r.resident_bytes, 0) AS resident_bytes,
       w.weights_bytes / t.tp AS weights_bytes,
       w.weights_basis,
       h.usable_bytes * e.gpu_memory_utilization - e.reserve_bytes - coalesce(r.resident_bytes, 0)
           - w.weights_bytes / t.tp AS pool_bytes,
       h.marketed_bytes - w.weights_bytes / t.tp AS naive_pool_bytes
FROM model_weights w
CROSS JOIN hardware h
CROSS JOIN engines e
CROSS JOIN tp_sizes t
LEFT JOIN resident_total r ON r.hardware_id = h.hardware_id
