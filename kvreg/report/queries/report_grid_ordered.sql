-- report_grid_ordered: the report_grid temp table (grid.sql) in the report's order.
SELECT * FROM report_grid
ORDER BY model_idx, context_idx, hardware_idx, weights_idx, kv_idx, tp_idx, engine_idx
