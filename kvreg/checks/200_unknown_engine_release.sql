-- unknown_engine_release: an observation names an engine release range that is not in the registry.
-- Grain: one row per such observation.  Inputs: observations, engine_accounting, invalid_entries
-- (an engine file that exists but failed validation is reported once, as its own problems).
SELECT o.file, o.engine_line, 'engine' AS key,
       format('engine release ''{}'' is not in the registry', o.engine_id) AS message,
       'known ranges: ' || (SELECT string_agg(engine_id, ', ' ORDER BY engine_id) FROM engine_accounting) AS hint
FROM observations o
WHERE o.engine_id IS NOT NULL AND o.engine_id NOT IN (SELECT engine_id FROM engine_accounting)
  AND o.engine_id NOT IN (SELECT entry_id FROM invalid_entries WHERE kind = 'engine')
