-- hardware_peaks: the two roofs of one device for one weight precision, plus stated efficiencies.
-- Grain: one row per hardware × weights_dtype (precisions with for_weights).
-- Inputs: hardware, hardware_flops, hardware_precisions, hardware_efficiency, precisions, hardware_rates.
-- Units: per device (one TP rank).
--   compute_dtype        the precision the matmuls run in: the weights' own precision when it is a
--                        float format (fp8, nvfp4, mxfp4) the hardware lists as native AND has a peak
--                        for; otherwise bf16 (integer formats are weight-only: dequantised to bf16 —
--                        W8A16/W4A16; Ampere has no fp8, so fp8 weights run bf16 math there)
--   peak_flop_per_s      dense peak at compute_dtype (NULL when the entry gives none: never 0)
--   bandwidth_bytes_per_s memory bandwidth (NULL when unknown)
--   ridge_flop_per_byte  peak ÷ bandwidth: the intensity above which a kernel is compute-bound
--   bandwidth_efficiency, compute_efficiency  achieved fraction of each roof, from the hardware
--                        entry's `efficiency` block (NULL when not stated)
--   interconnect_bytes_per_s  one direction, per device (NULL when unknown)
--   interconnect_domain_size  devices one link domain connects at that bandwidth (an HGX node's NVSwitch 8,
--                        an NVLink bridge 2, NVL72 72; NULL when the entry does not say): tensor
--                        parallelism wider than it is not modelled at interconnect_bytes_per_s
--   price_usd_per_hour   rental price of one device: the lowest listed on-demand quote (hardware_rates,
--                        115_hardware_rates.sql; NULL when unknown), with price_provider and price_date
-- Source: kv-cache-chapter.txt §2.4 (ridge point I* = peak FLOP/s ÷ bandwidth, 989/3.35 = 295).
CREATE OR REPLACE VIEW hardware_peaks AS
SELECT h.hardware_id, w.dtype AS weights_dtype,
       CASE WHEN w.dtype IN ('fp8', 'nvfp4', 'mxfp4') AND n.dtype IS NOT NULL AND fw.flop_per_s IS NOT NULL
            THEN w.dtype ELSE 'bf16' END AS compute_dtype,
       CASE WHEN w.dtype IN ('fp8', 'nvfp4', 'mxfp4') AND n.dtype IS NOT NULL AND fw.flop_per_s IS NOT NULL
            THEN fw.flop_per_s ELSE fb.flop_per_s END AS peak_flop_per_s,
       h.bandwidth_bytes_per_s,
       CASE WHEN w.dtype IN ('fp8', 'nvfp4', 'mxfp4') AND n.dtype IS NOT NULL AND fw.flop_per_s IS NOT NULL
            THEN fw.flop_per_s ELSE fb.flop_per_s END / h.bandwidth_bytes_per_s AS ridge_flop_per_byte,
       e.bandwidth_efficiency, e.compute_efficiency,
       h.interconnect_bytes_per_s, h.interconnect_domain_size,
       rt.usd_per_hour AS price_usd_per_hour, rt.price_provider, rt.price_date
FROM hardware h
CROSS JOIN (SELECT dtype FROM precisions WHERE for_weights) w
LEFT JOIN hardware_precisions n ON n.hardware_id = h.hardware_id AND n.dtype = w.dtype
LEFT JOIN hardware_flops fw ON fw.hardware_id = h.hardware_id AND fw.dtype = w.dtype
LEFT JOIN hardware_flops fb ON fb.hardware_id = h.hardware_id AND fb.dtype = 'bf16'
LEFT JOIN hardware_efficiency e ON e.hardware_id = h.hardware_id
LEFT JOIN hardware_rates rt ON rt.hardware_id = h.hardware_id
