-- unknown_throughput_reference: a throughput measurement names a model, hardware or engine the registry lacks.
-- Grain: one row per dangling reference.  Inputs: throughput_measurements, models, hardware, engines,
-- invalid_entries (an entry that exists but failed validation has its own problems; not reported again).
SELECT t.file, t.line, format('measurements.{}.hardware', t.measurement_idx) AS key,
       format('hardware ''{}'' is not in the registry', t.hardware_id) AS message,
       '{near:hardware:' || t.hardware_id || '}add hardware/' || t.hardware_id || '.yaml or fix the id' AS hint
FROM throughput_measurements t
WHERE t.hardware_id NOT IN (SELECT hardware_id FROM hardware)
  AND t.hardware_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'hardware')
UNION ALL
SELECT t.file, t.line, format('measurements.{}.model', t.measurement_idx),
       format('model ''{}'' is not in the registry', t.model_id),
       '{near:model:' || t.model_id || '}add registry/models/' || t.model_id || '.yaml or fix the id'
FROM throughput_measurements t
WHERE t.model_id NOT IN (SELECT model_id FROM models)
  AND t.model_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'model')
UNION ALL
SELECT DISTINCT t.file, 1, 'engine', format('engine ''{}'' is not in the registry', t.engine_id),
       '{near:engine:' || t.engine_id || '}name an engine release range id from registry/engines'
FROM throughput_measurements t
WHERE t.engine_id NOT IN (SELECT engine_id FROM engines)
  AND t.engine_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'engine')
