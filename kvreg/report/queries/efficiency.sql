-- efficiency: the fraction of peak bandwidth and compute each listed device is taken to reach under each listed
-- engine family, and the evidence behind it: speed_efficiency (254: fitted to the throughput measurements,
-- falling back to the device's other engines, its architecture, then the hardware entry's stated figure), the
-- same figures the plans and the roofline's expected_* columns divide by.
-- Grain: one row per listed hardware × engine family of a listed engine.
-- Inputs: speed_efficiency, hardware, engines, report_items.
-- Units: fractions (0–1); NULL = neither fitted nor stated (rates are then the ceiling).
--   bandwidth_basis / compute_basis  'measured' (this device × engine family), 'derived' (another level's
--     measurements), or the stated figure's confidence (e.g. 'estimated'); *_level the level (254); evidence
--     the one-line summary.
--   vendor_measured  for a stated figure only: the same vendor's devices measured under this engine family
--     (speed_efficiency level 'hardware'), e.g. 'mi300x 0.23 (n=3)', so a reader can see how far a guess may be
--     from the nearest evidence; NULL when none or when the figure is not the stated one.
-- speed_efficiency is read twice (the join and the vendor subquery): materialised once, 1.15 -> 0.55 s CPU (same rows)
WITH se_all AS MATERIALIZED (SELECT * FROM speed_efficiency),
hw AS (SELECT item_id AS hardware_id, item_idx FROM report_items
            WHERE report_id = $report AND item_kind = 'hardware'),
fam AS (SELECT e.engine AS engine_family, min(i.item_idx) AS engine_idx
        FROM report_items i JOIN engines e ON e.engine_id = i.item_id
        WHERE i.report_id = $report AND i.item_kind = 'engine' GROUP BY ALL)
SELECT h.hardware_id, coalesce(h.name, h.hardware_id) AS hardware_name, f.engine_family,
       se.bandwidth_efficiency, se.bandwidth_basis, se.bandwidth_level, se.bandwidth_n,
       se.compute_efficiency, se.compute_basis, se.compute_level, se.compute_n, se.evidence,
       CASE WHEN se.bandwidth_level = 'stated' THEN
           (SELECT string_agg(format('{} {:.2f} (n={})', m.hardware_id, m.bandwidth_efficiency, m.bandwidth_n), ', '
                              ORDER BY m.hardware_id)
            FROM se_all m JOIN hardware mh ON mh.hardware_id = m.hardware_id
            WHERE m.engine_family = f.engine_family AND m.bandwidth_level = 'hardware' AND mh.vendor = h.vendor)
       END AS vendor_measured
FROM hw
JOIN hardware h ON h.hardware_id = hw.hardware_id
CROSS JOIN fam f
LEFT JOIN se_all se ON se.hardware_id = h.hardware_id AND se.engine_family = f.engine_family
ORDER BY hw.item_idx, f.engine_idx
