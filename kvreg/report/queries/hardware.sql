-- hardware: the devices a report compares, with memory basis, residents and price.
-- Grain: one row per listed hardware.  Inputs: hardware, residents, report_items, report_rates (the report's cost basis).
-- Units: bytes; USD per device-hour.
SELECT h.hardware_id, coalesce(h.name, h.hardware_id) AS hardware_name, h.kind, h.marketed_bytes, h.usable_bytes,
       h.memory_basis, h.unified_memory, h.bandwidth_bytes_per_s, rt.usd_per_hour AS price_usd_per_hour,
       rt.price_provider, rt.price_date, rt.cost_basis, rt.basis_label, rt.rental_quotes, rt.rental_high_usd_per_hour,
       rt.purchase_usd, rt.tdp_watts, rt.capex_usd_per_hour, rt.power_usd_per_hour,
       (SELECT sum(r.resident_bytes) FROM residents r WHERE r.hardware_id = h.hardware_id) AS resident_bytes,
       (SELECT string_agg(r.name, '; ' ORDER BY r.resident_idx) FROM residents r
         WHERE r.hardware_id = h.hardware_id) AS resident_names
FROM hardware h
JOIN report_rates rt ON rt.hardware_id = h.hardware_id
JOIN report_items i ON i.report_id = $report AND i.item_kind = 'hardware' AND i.item_id = h.hardware_id
ORDER BY i.item_idx
