-- hardware: the devices a report compares, with memory basis, residents and price.
-- Grain: one row per listed hardware.  Inputs: hardware, residents, report_items.
-- Units: bytes; USD per device-hour.
SELECT h.hardware_id, coalesce(h.name, h.hardware_id) AS hardware_name, h.kind, h.marketed_bytes, h.usable_bytes,
       h.memory_basis, h.unified_memory, h.bandwidth_bytes_per_s, h.price_usd_per_hour, h.price_provider,
       h.price_date,
       (SELECT sum(r.resident_bytes) FROM residents r WHERE r.hardware_id = h.hardware_id) AS resident_bytes,
       (SELECT string_agg(r.name, '; ' ORDER BY r.resident_idx) FROM residents r
         WHERE r.hardware_id = h.hardware_id) AS resident_names
FROM hardware h
JOIN report_items i ON i.report_id = $report AND i.item_kind = 'hardware' AND i.item_id = h.hardware_id
ORDER BY i.item_idx
