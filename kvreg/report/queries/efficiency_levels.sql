-- efficiency_levels: what each evidence level printed beside an efficiency means (the assumptions' glossary), for
-- the levels the report's own efficiency rows use, in speed_efficiency_by_holdout's order of resolution (253: the
-- first level with data wins, per roof).
-- Grain: one row per level used by a bandwidth or compute efficiency of the report's efficiency rows.
-- Inputs: report_efficiency (efficiency.sql, as a temp table).
-- Units: none.
--   level      the word printed in the evidence ("n=7, hardware") and in plans.efficiency_evidence
--   resolution 1 = tried first (253's ORDER BY; 'stated' sits between architecture_any and engine, and engine/all
--              are used only where the entry states no figure)
--   basis      the basis word printed with it ('measured', 'derived', or the stated figure's confidence)
--   meaning    the definition, once
--   used_by    how many of the report's hardware × engine family rows take a figure from this level
WITH levels(level, resolution, basis, meaning) AS (VALUES
    ('hardware', 1, 'measured',
     'fitted to throughput measurements of this device under this engine family'),
    ('hardware_any', 2, 'derived',
     'fitted to measurements of this device under other engine families (none under this one)'),
    ('architecture', 3, 'derived',
     'fitted to measurements of other devices of the same architecture under this engine family'),
    ('architecture_any', 4, 'derived',
     'fitted to measurements of devices of the same architecture under any engine family'),
    ('stated', 5, 'its confidence (e.g. estimated)',
     'the hardware entry''s own stated figure: nothing measured on this device, its architecture or its other engines'),
    ('engine', 6, 'derived',
     'fitted to this engine family''s measurements on any hardware (only where the entry states no figure)'),
    ('all', 7, 'derived',
     'fitted to every throughput measurement in the registry (only where the entry states no figure)')
),
used AS (
    SELECT level, count(*) AS used_by FROM (
        SELECT hardware_id, engine_family, bandwidth_level AS level FROM report_efficiency
        UNION SELECT hardware_id, engine_family, compute_level FROM report_efficiency)
    WHERE level IS NOT NULL GROUP BY level
)
SELECT coalesce(l.level, u.level) AS level, l.resolution, l.basis,
       -- a level 253 gained and this glossary lacks is printed as such, never silently dropped
       coalesce(l.meaning, 'not defined in this report''s glossary (kvreg/report/queries/efficiency_levels.sql)')
           AS meaning,
       u.used_by
FROM used u LEFT JOIN levels l USING (level)
ORDER BY l.resolution NULLS LAST, level
