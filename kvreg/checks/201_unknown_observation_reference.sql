-- unknown_observation_reference: an observation names hardware or a draft model the registry lacks.
-- Grain: one row per dangling reference.  Inputs: observations, hardware, models, invalid_entries
-- (a referenced file that exists but failed validation is reported once, as its own problems).
-- (A missing *target* model is allowed: the entry waits for the model to be imported, and
-- `calibration.missing` says so.)
SELECT o.file, o.hardware_line, 'hardware' AS key,
       format('hardware ''{}'' is not in the registry', o.hardware_id) AS message,
       '{near:hardware:' || o.hardware_id || '}add hardware/' || o.hardware_id || '.yaml or fix the id' AS hint
FROM observations o
WHERE o.hardware_id IS NOT NULL AND o.hardware_id NOT IN (SELECT hardware_id FROM hardware)
  AND o.hardware_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'hardware')
UNION ALL
SELECT o.file, o.draft_line, 'settings.draft_model',
       format('draft model ''{}'' is not in the registry', o.draft_model_id),
       '{near:model:' || o.draft_model_id || '}add registry/models/' || o.draft_model_id || '.yaml or fix the id'
FROM observations o
WHERE o.draft_model_id IS NOT NULL AND o.draft_model_id NOT IN (SELECT model_id FROM models)
  AND o.draft_model_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'model')
