-- missing_reference: an entry names another entry that does not exist.
-- Grain: one row per dangling reference.  Inputs: residents, models (draft_for), invalid_entries (a model
-- file that exists but failed validation has its own problems; it is not reported again here).
SELECT r.file, r.line, 'residents.' || r.resident_idx || '.model' AS key,
       format('resident model ''{}'' is not in the registry', r.model_id) AS message,
       '{near:model:' || r.model_id || '}add registry/models/' || r.model_id || '.yaml (kvreg import-hf can write it) or fix the id' AS hint
FROM residents r
WHERE r.model_id IS NOT NULL AND r.model_id NOT IN (SELECT model_id FROM models)
  AND r.model_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'model')
UNION ALL
-- a draft head's target (kvreg/schema/model.py ModelEntry.draft_for)
SELECT m.file, m.line, 'draft_for' AS key,
       format('draft_for names model ''{}'', which is not in the registry', m.draft_for) AS message,
       '{near:model:' || m.draft_for || '}draft_for is the registry id of the model this entry drafts for' AS hint
FROM models m
WHERE m.draft_for IS NOT NULL AND m.draft_for NOT IN (SELECT model_id FROM models)
  AND m.draft_for NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'model')
