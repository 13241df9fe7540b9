-- efficiency: the fraction of peak bandwidth and compute each listed device is assumed to reach
-- (hardware_efficiency table, from the hardware entries); the roofline's expected_* columns and the
-- plans macro divide by these, and use the ceiling (1.0) where a device states none.
-- Grain: one row per listed hardware.  Inputs: hardware, hardware_efficiency, report_items.
-- Units: fractions (0–1); NULL = not stated.
SELECT h.hardware_id, coalesce(h.name, h.hardware_id) AS hardware_name, e.bandwidth_efficiency,
       e.compute_efficiency
FROM hardware h
JOIN report_items i ON i.report_id = $report AND i.item_kind = 'hardware' AND i.item_id = h.hardware_id
LEFT JOIN hardware_efficiency e ON e.hardware_id = h.hardware_id
ORDER BY i.item_idx
