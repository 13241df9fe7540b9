-- hardware_implausible: a device's bandwidth or peak FLOP/s outside what any shipped part comes near, alone or against
-- each other (usually a unit slip: 3.35 GB/s written for TB/s, PFLOP/s for TFLOP/s).  The roofline divides by both
-- (kvreg/sql/120_hardware_peaks.sql), so a slip moves every decode step and prefill of the device a thousandfold.
-- Bands, each the shipped registry's span (2026-12-03, 46 devices) with a margin of 2.5× or more on both sides:
--   bandwidth (memory, per device)    50 GB/s .. 20 TB/s     shipped 256 GB/s (strix-halo-128gb) .. 8 TB/s (b200,
--                                                            gb200, gb300, b300, mi355x)
--   bandwidth ÷ usable memory         0.5 .. 200 per second  shipped 1.64 (m3-ultra-512gb: 819 GB/s over 512 GiB) ..
--     (memory sweeps per second)                             52.4 (rtx-5090: 1.79 TB/s over 32 GB)
--   peak_flops, each precision        1 .. 100,000 TFLOP/s   shipped 65 TFLOP/s (t4 fp16) .. 15,000 (gb300 nvfp4)
--   ridge point, peak ÷ bandwidth     1 .. 5,000 FLOP/byte   shipped 37 (h20 bf16: 148 TFLOP/s over 4 TB/s) ..
--                                                            1,875 (gb300 nvfp4)
-- A ridge point is judged only where its peak and bandwidth are each in band (one slip, one problem).
-- Grain: one row per out-of-band figure.  Inputs: hardware, hardware_flops.
WITH peaks AS (
    SELECT f.hardware_id, f.dtype, f.flop_per_s, h.bandwidth_bytes_per_s, h.file, h.line,
           f.flop_per_s BETWEEN 1e12 AND 1e17 AS peak_in_band,
           h.bandwidth_bytes_per_s BETWEEN 50e9 AND 20e12 AS bandwidth_in_band
    FROM hardware_flops f JOIN hardware h USING (hardware_id)
)
SELECT file, line, 'bandwidth' AS key,
       format('bandwidth {:.4g} GB/s of {} is outside 50 GB/s .. 20 TB/s, the band of every shipped device '
              '(256 GB/s .. 8 TB/s)', bandwidth_bytes_per_s / 1e9, hardware_id) AS message,
       'check the unit: 3.35 TB/s is 3,350 GB/s; a bare number is bytes per second; if it is right, widen the band '
       || 'in kvreg/checks/070_hardware_implausible.sql citing the part' AS hint
FROM hardware
WHERE NOT bandwidth_bytes_per_s BETWEEN 50e9 AND 20e12
UNION ALL
SELECT file, line, 'bandwidth',
       format('bandwidth {:.4g} GB/s over {:.4g} GiB usable reads the memory {:.3g} times a second, outside 0.5 .. 200 '
              '(shipped devices: 1.64 .. 52.4)', bandwidth_bytes_per_s / 1e9, usable_bytes / 2 ^ 30,
              bandwidth_bytes_per_s / usable_bytes),
       'bandwidth or memory_usable has a unit slip (TB/s vs GB/s, TB vs GB); if both are right, widen the band in '
       || 'kvreg/checks/070_hardware_implausible.sql citing the part'
FROM hardware
WHERE bandwidth_bytes_per_s BETWEEN 50e9 AND 20e12
  AND NOT bandwidth_bytes_per_s / usable_bytes BETWEEN 0.5 AND 200
UNION ALL
SELECT file, line, 'peak_flops.' || dtype,
       format('peak_flops {} {:.4g} TFLOP/s of {} is outside 1 .. 100,000 TFLOP/s, the band of every shipped device '
              '(65 .. 15,000 TFLOP/s)', dtype, flop_per_s / 1e12, hardware_id),
       'check the unit: 1979 TFLOP/s is 1.979 PFLOP/s; give the dense figure (not 2:4 sparsity); if it is right, '
       || 'widen the band in kvreg/checks/070_hardware_implausible.sql citing the part'
FROM peaks
WHERE NOT peak_in_band
UNION ALL
SELECT file, line, 'peak_flops.' || dtype,
       format('peak_flops {} {:.4g} TFLOP/s over bandwidth {:.4g} GB/s is a ridge point of {:,.0f} FLOP per byte, '
              'outside 1 .. 5,000 (shipped devices: 37 .. 1,875)', dtype, flop_per_s / 1e12,
              bandwidth_bytes_per_s / 1e9, flop_per_s / bandwidth_bytes_per_s),
       'one of the two has a unit slip (TFLOP/s vs PFLOP/s, TB/s vs GB/s); if both are right, widen the band in '
       || 'kvreg/checks/070_hardware_implausible.sql citing the part'
FROM peaks
WHERE peak_in_band AND bandwidth_in_band AND NOT flop_per_s / bandwidth_bytes_per_s BETWEEN 1 AND 5000
ORDER BY file, line, key
