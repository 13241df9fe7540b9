-- pools: how each device's memory splits between weights, reserve, residents and the KV pool.
-- Grain: one row per listed model × hardware × engine × weights_dtype × tp (from report_grid).
-- Inputs: report_grid (grid.sql for this report).  Units: bytes per device (per TP rank).
-- weights_printed: at the model's shown weights dtype and engine (grid.sql): the PDF appendix prints those rows only.
SELECT DISTINCT model_id, hardware_id, engine_id, weights_dtype, tp, usable_bytes, claimed_bytes, reserve_bytes,
       resident_bytes, weights_bytes, weights_basis, pool_bytes, naive_pool_bytes, kv_pool_share, weights_fit, weights_printed,
       model_idx, hardware_idx, weights_idx, tp_idx, engine_idx
FROM report_grid
ORDER BY model_idx, hardware_idx, weights_idx, tp_idx, engine_idx
