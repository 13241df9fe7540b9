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
--   engine         key = engine family, every hardware pooled — only from measurements on TWO OR MORE architectures:
--                  one architecture's measurements cannot tell the engine's share of an efficiency from the
--                  hardware's (below), so they never stand for the engine on other hardware (its 'all' fallback
--                  pools them with everything else instead)
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
-- WHY MI300X × vLLM IS FITTED PER HARDWARE × ENGINE (the 24 AMD rows, vLLM 0.9–0.11, TP 8, Llama 3.1 70B/405B FP8),
--   checked with `kvreg sql` on throughput_ceilings (numbers in docs/calibration.md, "MI300X × vLLM"):
--   * implied efficiency 0.23–0.33 (median 0.27), flat across model (70B 0.23–0.30, 405B 0.23–0.33), lengths
--     (128/2048 … 2048/2048) and batch (500–3,200); the spread is the release (0.9 ≈ 0.29, 0.10/0.11 ≈ 0.25).
--     TensorRT-LLM at TP 8 on the same models and lengths: H100 0.39, H200 0.50, B200 0.31 — within one engine
--     the hardware alone moves it this much, so a per-hardware efficiency is what the data resolves.
--   * NOT a per-step all-reduce latency: 2 all-reduces per layer each of fixed latency λ cost 2·L·λ ÷ B per
--     output token; at λ = 20 µs that is 1.0–2.9 % of the measured time per token of every row (B = 500–3,200),
--     at 30 µs at most 4.4 % (λ illustrative, 10–30 µs: no published figure is sourced, none is needed to rule it out).
--     At these batches each all-reduce carries B × d_model × 2 bytes = 16–100 MiB, above vLLM's custom
--     all-reduce limit (8 MiB: vllm 0.11.0 distributed/device_communicators/custom_all_reduce.py:57, :233;
--     ROCm's quick reduce is off unless VLLM_ROCM_QUICK_REDUCE_QUANTIZATION is set, envs.py:984,
--     cuda_communicator.py:130) so RCCL runs it in its bandwidth regime, which the all-reduce BYTES term models.
--   * NOT the xGMI mesh's link overhead alone: at AMD's usable 48 of 64 GB/s per link (ROCm blog "Understanding
--     RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X", 2025-03-02) the all-reduce takes 1.33× its
--     time at 448 GB/s; with it and the roof at H200's TP-8 efficiency (0.50) every row is still over-predicted
--     by 33–88 % (at H100's 0.39: 5–49 %): the shortfall is in the GPU work itself, not in the link.
--   * engine family vs hardware: the registry holds no vLLM measurement on NVIDIA and no TensorRT-LLM on AMD,
--     so the two cannot be separated: the fit keeps them together (hardware level, this engine family), and the
--     engine level (above) does not carry MI300X's residual to vLLM on other hardware.
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
engine_breadth AS (
    -- engine families measured on two or more architectures in this holdout: only they get an engine level
    SELECT holdout, engine_family FROM host GROUP BY ALL HAVING count(DISTINCT architecture) >= 2
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
    WHERE (holdout, engine_family) IN (SELECT (holdout, engine_family) FROM engine_breadth)
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
    WHERE (holdout, engine_family) IN (SELECT (holdout, engine_family) FROM engine_breadth)
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
