-- speed_fit: achieved fractions of the roofline fitted to the throughput measurements, with their evidence,
-- once on every measurement (holdout '') and once without each source (holdout = that source id, for
-- leave-one-source-out evaluation: 255_speed_calibration).
-- Grain: one row per holdout × roof (memory, compute, host) × level × key (× engine family where the level has one).
-- Inputs: throughput_ceilings (sources with in_fit only: the others are predicted, never fitted), throughput_measurements.
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
-- HOST ROOF (roof = 'host', column request_s; efficiency NULL).  Besides the GPU work, every request costs the
--   serving process host time that does not shrink with more or faster devices: admission and scheduling, the
--   context (prompt) steps that run outside CUDA graphs (TensorRT-LLM's PyTorch backend captures graphs for
--   generation-only batches: cuda_graph_config in docs/source/performance/perf-overview.md, v1.0), sampling
--   set-up and response handling in Python.  A replica therefore finishes at most 1 ÷ request_s requests per
--   second, i.e. output_tokens ÷ request_s output tokens per second, whatever its GPUs; it binds on short
--   requests of a fast model.  The evidence, in that page (commit 00f37686, "Qwen3-30B-A3B"): on RTX 6000 Pro,
--   128/128 goes 28,011 → 39,490 tok/s from TP 1 to TP 8 (1.4×) while 128/2048 goes 12,540 → 52,676 (4.2×);
--   the same B200 GPU behind a Grace host (GB200) reaches 0.61× of the x86 DGX B200 at 128/128 but 1.06× at
--   128/4096.  kvreg does not compute this host time from first principles: it takes the fastest request
--   turnover measured (the least output_tokens ÷ output_tok_per_s) — a MEASURED LOWER BOUND on the per-request
--   time, so the roof it sets is still a ceiling (it binds only where measurements show it does).  Host time
--   belongs to the engine and the host machine: levels hardware (key hardware_id: its host, a DGX's x86 CPUs,
--   a GB200's Grace), architecture, engine — never pooled across engine families.
-- Units: fractions (0, 1]; request_s in seconds.
CREATE OR REPLACE VIEW speed_fit AS
WITH tc AS MATERIALIZED (
    -- throughput_ceilings once for both fits below (a view named twice is evaluated twice)
    SELECT * FROM throughput_ceilings
),
holdouts AS (
    SELECT '' AS holdout
    UNION ALL
    SELECT DISTINCT source_id FROM throughput_measurements
),
implied AS (
    SELECT h.holdout, c.source_id, c.hardware_id, c.architecture, c.engine_family, c.bound AS roof,
           (CASE c.bound WHEN 'memory' THEN c.memory_s ELSE c.compute_s END + coalesce(c.allreduce_s, 0))
               * c.output_tok_per_s AS efficiency
    FROM holdouts h
    JOIN tc c ON c.source_id <> h.holdout AND c.in_fit
    WHERE c.bound IS NOT NULL
),
host AS (
    -- the host roof: seconds of the replica per request (see the header: the fastest turnover measured)
    SELECT h.holdout, c.source_id, c.hardware_id, c.architecture, c.engine_family,
           c.output_tokens / c.output_tok_per_s AS request_s
    FROM holdouts h
    JOIN tc c ON c.source_id <> h.holdout AND c.in_fit
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
),
host_levels AS (
    SELECT holdout, 'hardware' AS level, hardware_id AS key, engine_family, request_s, source_id FROM host
    UNION ALL
    SELECT holdout, 'architecture', architecture, engine_family, request_s, source_id FROM host
    WHERE architecture IS NOT NULL
    UNION ALL
    SELECT holdout, 'engine', engine_family, engine_family, request_s, source_id FROM host
)
SELECT holdout, roof, level, key, engine_family,
       least(1.0, median(efficiency)) AS efficiency, NULL::DOUBLE AS request_s,
       count(*) AS n, count(DISTINCT source_id) AS sources
FROM levels
GROUP BY ALL
UNION ALL
SELECT holdout, 'host', level, key, engine_family, NULL, min(request_s), count(*), count(DISTINCT source_id)
FROM host_levels
GROUP BY ALL
