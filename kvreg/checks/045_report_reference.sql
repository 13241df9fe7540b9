-- report_reference: a report definition lists a model, hardware, engine or precision that does not exist.
-- Grain: one row per dangling report item.  Inputs: report_items, models, hardware, engines, precisions,
-- invalid_entries (an entry file that exists but failed validation has its own problems: one root
-- problem is reported once, not again at every report naming it).
SELECT i.file, i.line, i.key,
       format('report lists {} ''{}'', which is not in the registry', replace(i.item_kind, '_', ' '), i.item_id) AS message,
       -- ids: the nearest ones ({near:…}, kvreg/checks/__init__.py) and how to list them all (dozens)
       CASE i.item_kind
            WHEN 'model' THEN '{near:model:' || i.item_id || '}list them: kvreg sql "SELECT model_id FROM models"'
            WHEN 'hardware' THEN '{near:hardware:' || i.item_id || '}list them: kvreg sql "SELECT hardware_id FROM hardware"'
            WHEN 'engine' THEN '{near:engine:' || i.item_id || '}known engines: '
                 || (SELECT string_agg(engine_id, ', ' ORDER BY engine_id) FROM engines)
            WHEN 'weights_dtype' THEN 'weights precisions: '
                 || (SELECT string_agg(dtype, ', ' ORDER BY dtype) FROM precisions WHERE for_weights)
            ELSE 'KV cache precisions: ' || (SELECT string_agg(dtype, ', ' ORDER BY dtype) FROM precisions WHERE for_kv)
       END AS hint
FROM report_items i
WHERE ((i.item_kind = 'model' AND i.item_id NOT IN (SELECT model_id FROM models))
   OR (i.item_kind = 'hardware' AND i.item_id NOT IN (SELECT hardware_id FROM hardware))
   OR (i.item_kind = 'engine' AND i.item_id NOT IN (SELECT engine_id FROM engines))
   OR (i.item_kind = 'weights_dtype' AND i.item_id NOT IN (SELECT dtype FROM precisions WHERE for_weights))
   OR (i.item_kind = 'kv_dtype' AND i.item_id NOT IN (SELECT dtype FROM precisions WHERE for_kv)))
  AND NOT EXISTS (SELECT 1 FROM invalid_entries v WHERE v.kind = i.item_kind AND v.entry_id = i.item_id)
ORDER BY i.file, i.line
