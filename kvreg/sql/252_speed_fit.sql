-- speed_fit: achieved fractions of the roofline fitted to the throughput measurements, with their evidence,
-- once on every measurement (holdout '') and once without each source (holdout = that source id, for
-- leave-one-source-out evaluation: 255_speed_calibration).
-- Grain: one row per holdout × roof × level × key (× engine family where the level has one).
-- Inputs: throughput_ceilings, throughput_measurements.
-- Each measurement implies the efficiency of the roof that bounds it (bound):
--   implied = (roof_s + allreduce_s) × output_tok_per_s   (roof_s = memory_s or compute_s)
--   so that the prediction 1/((roof_s + allreduce_s)/implied) reproduces it exactly: the all-reduce is serial
--   with the step and is taken to reach the same share of its link as the binding roof of its own (an
--   ASSUMPTION, checked by the measurements: TensorRT-LLM's measured/ceiling ratio stays flat from TP 1 to 8,
--   while all-reduces at full link speed over-predict TP 8 about twofold).  The fitted efficiency is the
--   MEDIAN of the implied efficiencies in the group (robust to a few odd rows), n = how many, sources = how many.
-- Levels (most specific first; 253_speed_efficiency_by_holdout takes the first that has data):
--   hardware       key = hardware_id, per engine family
--   hardware_any   key = hardware_id, every engine family pooled
--   architecture   key = hardware.architecture, per engine family
--   architecture_any key = hardware.architecture, every engine family pooled
--   engine         key = engine family, every hardware pooled
--   all            key = 'all', everything pooled
-- Units: fractions (0, 1].
CREATE OR REPLACE VIEW speed_fit AS
WITH holdouts AS (
    SELECT '' AS holdout
    UNION ALL
    SELECT DISTINCT source_id FROM throughput_measurements
),
implied AS (
    SELECT h.holdout, c.source_id, c.hardware_id, c.architecture, c.engine_family, c.bound AS roof,
           (CASE c.bound WHEN 'memory' THEN c.memory_s ELSE c.compute_s END + coalesce(c.allreduce_s, 0))
               * c.output_tok_per_s AS efficiency
    FROM holdouts h
    JOIN throughput_ceilings c ON c.source_id <> h.holdout
    WHERE c.bound IS NOT NULL
),
levels AS (
    SELECT holdout, roof, 'hardware' AS level, hardware_id AS key, engine_family, efficiency, source_id FROM implied
    UNION ALL
    SELECT holdout, roof, 'hardware_any', hardware_id, NULL, efficiency, source_id FROM implied
    UNION ALL
    SELECT holdout, roof, 'architecture', architecture, engine_family, efficiency, source_id FROM implied
    WHERE architecture IS NOT NULL
    UNION ALL
    SELECT holdout, roof, 'architecture_any', architecture, NULL, efficiency, source_id FROM implied
    WHERE architecture IS NOT NULL
    UNION ALL
    SELECT holdout, roof, 'engine', engine_family, engine_family, efficiency, source_id FROM implied
    UNION ALL
    SELECT holdout, roof, 'all', 'all', NULL, efficiency, source_id FROM implied
)
SELECT holdout, roof, level, key, engine_family,
       least(1.0, median(efficiency)) AS efficiency,
       count(*) AS n, count(DISTINCT source_id) AS sources
FROM levels
GROUP BY ALL
