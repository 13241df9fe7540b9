-- sources: every registry entry the report uses, with each source it cites.
-- Grain: one row per (entry, source); entries without sources get one row with NULL source fields.
-- Inputs: report_items, sources, models, hardware, engines.
WITH used AS (
    SELECT DISTINCT item_kind AS kind, item_id AS entry_id,
           CASE item_kind WHEN 'model' THEN 1 WHEN 'hardware' THEN 2 ELSE 3 END AS kind_order
    FROM report_items WHERE report_id = $report AND item_kind IN ('model', 'hardware', 'engine')
),
files AS (
    SELECT 'model' AS kind, model_id AS entry_id, file FROM models
    UNION ALL SELECT 'hardware', hardware_id, file FROM hardware
    UNION ALL SELECT 'engine', engine_id, file FROM engines
)
SELECT u.kind, u.entry_id, f.file, s.source_idx, s.source_id, s.url, s.title, s.date, s.note,
       CASE WHEN regexp_matches(s.url, '^https?://') THEN s.url END AS link_url
FROM used u
JOIN files f USING (kind, entry_id)
LEFT JOIN sources s ON s.kind = u.kind AND s.entry_id = u.entry_id
ORDER BY u.kind_order, u.entry_id, s.source_idx
