-- engines: the engine releases a report uses, with the accounting assumptions they carry.
-- Grain: one row per listed engine.  Inputs: engines, report_items.
-- Units: reserve_bytes in bytes; gpu_memory_utilization a fraction; block size in tokens.
SELECT e.*
FROM engines e
JOIN report_items i ON i.report_id = $report AND i.item_kind = 'engine' AND i.item_id = e.engine_id
ORDER BY i.item_idx
