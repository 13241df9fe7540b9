-- pools: how each device's memory splits between weights, reserve, residents and the KV pool.
-- Grain: one row per listed model × hardware × engine × weights_dtype × tp (from report_grid).
-- Inputs: report_grid (grid.sql for this report), report_memory_pools (scope_memory_pools.sql: budget_tp).
-- Units: bytes per device (per TP rank).
-- weights_printed: at the model's shown weights dtype and engine (grid.sql).
-- budget_printed: the one row per device the PDF appendix prints (weights_printed, at budget_tp: the smallest listed
--   TP size whose weights fit, else the largest listed; the grid above it gives the KV pool at every TP size).
SELECT g.*, g.weights_printed AND g.tp = p.budget_tp AS budget_printed
FROM (SELECT DISTINCT model_id, hardware_id, engine_id, weights_dtype, tp, usable_bytes, claimed_bytes, reserve_bytes,
             resident_bytes, weights_bytes_per_rank, weights_basis, pool_bytes, naive_pool_bytes, kv_pool_share, weights_fit,
             weights_printed, model_idx, hardware_idx, weights_idx, tp_idx, engine_idx
      FROM report_grid) g
LEFT JOIN report_memory_pools p USING (model_id, hardware_id, engine_id, weights_dtype, tp)
ORDER BY g.model_idx, g.hardware_idx, g.weights_idx, g.tp_idx, g.engine_idx
