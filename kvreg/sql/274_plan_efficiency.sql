-- plan_efficiency: the efficiencies plans (275) divides by, per hardware × engine family, with the second figure a
-- call resting on a guess is also sized at.
-- Grain: one row per hardware × engine family (as speed_efficiency).
-- Inputs: speed_efficiency (254), hardware (vendor).
-- Columns: every column of speed_efficiency, then, only where the bandwidth efficiency is the hardware entry's
--   stated figure (bandwidth_level 'stated': nothing measured on the device, its architecture or its other engines):
--   vendor_hardware_id            the same vendor's device measured under this engine family (speed_efficiency level
--                                 'hardware') with the LOWEST bandwidth efficiency: the pessimistic end of the
--                                 nearest evidence, so the second plan shows how far the guess may move the call
--                                 (one such device for AMD × vLLM today: mi300x)
--   vendor_bandwidth_efficiency   its bandwidth efficiency (fraction); vendor_bandwidth_n its measurements
--   vendor_evidence               the evidence line plans prints when sized at it, e.g. "bandwidth 0.23 measured on
--                                 mi300x (n=3, same vendor; the entry states 0.45); compute 0.42 derived (n=…, all)"
--                                 (the compute efficiency is kept: a TPOT-bound call is bound by bandwidth)
--   Where the vendor has no measured device under this family (first-principles has none anywhere; SGLang none on
--   AMD), the same vendor's lowest measured figure under ANY engine family stands in, named with its family
--   ("… measured on mi300x under vllm …"), as speed_efficiency's own fallback lets a device borrow another engine's
--   figure (hardware_any); vendor_engine_family says which family it is.
--   NULL where the figure is not the stated one, or the vendor has no measured device at all.
-- Why: a stated 0.45 against a same-vendor measured 0.23 halves the decode rate; plans(efficiency_basis :=
--   'vendor_measured') sizes the same workload on this column so the report can show both (issue 12).
CREATE OR REPLACE VIEW plan_efficiency AS
WITH e AS (
    SELECT se.*, h.vendor,
           -- the same vendor's measured devices: the lowest figure and which device (n, family) it is, under this
           -- family and, as the stand-in, under any family
           arg_min(CASE WHEN se.bandwidth_level = 'hardware' THEN {'bw': se.bandwidth_efficiency, 'id': se.hardware_id,
                                                                    'n': se.bandwidth_n, 'family': se.engine_family} END,
                   CASE WHEN se.bandwidth_level = 'hardware' THEN se.bandwidth_efficiency END)
               OVER (PARTITION BY h.vendor, se.engine_family) AS own,
           arg_min(CASE WHEN se.bandwidth_level = 'hardware' THEN {'bw': se.bandwidth_efficiency, 'id': se.hardware_id,
                                                                    'n': se.bandwidth_n, 'family': se.engine_family} END,
                   CASE WHEN se.bandwidth_level = 'hardware' THEN se.bandwidth_efficiency END)
               OVER (PARTITION BY h.vendor) AS any_family
    FROM speed_efficiency se
    JOIN hardware h ON h.hardware_id = se.hardware_id
), v AS (
    SELECT e.* EXCLUDE (own, any_family), coalesce(e.own, e.any_family) AS m, e.own IS NULL AS other_family
    FROM e
)
SELECT v.* EXCLUDE (vendor, m, other_family),
       CASE WHEN v.bandwidth_level = 'stated' THEN v.m.id END AS vendor_hardware_id,
       CASE WHEN v.bandwidth_level = 'stated' THEN v.m.bw END AS vendor_bandwidth_efficiency,
       CASE WHEN v.bandwidth_level = 'stated' THEN v.m.n END AS vendor_bandwidth_n,
       CASE WHEN v.bandwidth_level = 'stated' AND v.m IS NOT NULL THEN
           concat_ws('; ', format('bandwidth {:.2f} measured on {}{} (n={}, same vendor; the entry states {:.2f})',
                                  v.m.bw, v.m.id, CASE WHEN v.other_family THEN ' under ' || v.m.family ELSE '' END,
                                  v.m.n, v.bandwidth_efficiency),
                     -- the compute part of speed_efficiency's own evidence line, unchanged
                     nullif(array_to_string(string_split(v.evidence, '; ')[2:], '; '), ''))
       END AS vendor_evidence,
       CASE WHEN v.bandwidth_level = 'stated' THEN v.m.family END AS vendor_engine_family
FROM v
