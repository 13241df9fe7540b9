-- missing_reference: an entry names another entry that does not exist.
-- Grain: one row per dangling reference.  Inputs: residents, models, invalid_entries (a model
-- file that exists but failed validation has its own problems; it is not reported again here).
SELECT r.file, r.line, 'residents.' || r.resident_idx || '.model' AS key,
       format('resident model ''{}'' is not in the registry', r.model_id) AS message,
       '{near:model:' || r.model_id || '}add registry/models/' || r.model_id || '.yaml (kvreg import-hf can write it) or fix the id' AS hint
FROM residents r
WHERE r.model_id IS NOT NULL AND r.model_id NOT IN (SELECT model_id FROM models)
  AND r.model_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'model')
