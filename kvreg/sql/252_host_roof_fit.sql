-- host_roof_fit: the engine's per-request host time, a third roof beside memory and compute, fitted to the
-- throughput measurements once on every source (holdout '') and once without each source (holdout = its id).
-- Grain: one row per holdout × level × key × engine family.
-- Inputs: throughput_ceilings, throughput_measurements (the holdouts).
-- MECHANISM.  Besides the GPU work, every request costs the serving process host time that does not shrink with
--   more or faster devices: admission and scheduling, the context (prompt) steps that run outside CUDA graphs
--   (TensorRT-LLM's PyTorch backend captures graphs for generation-only batches: cuda_graph_config in
--   docs/source/performance/perf-overview.md, v1.0), sampling set-up and response handling in Python.  A replica
--   therefore finishes at most 1 ÷ request_s requests per second, i.e. output_tokens ÷ request_s output tokens
--   per second, whatever its GPUs.  It binds on short requests of a fast model.  The evidence, in that page
--   (commit 00f37686, "Qwen3-30B-A3B"): on RTX 6000 Pro, 128/128 goes 28,011 → 39,490 tok/s from TP 1 to TP 8
--   (1.4×) while 128/2048 goes 12,540 → 52,676 (4.2×); the same B200 GPU behind a Grace host (GB200) reaches
--   0.61× of the x86 DGX B200 at 128/128 but 1.06× at 128/4096.  Both top out near 310 requests/s (x86).
-- kvreg does not compute this host time from first principles: it takes, per engine family, the fastest
--   request turnover measured (the least output_tokens ÷ output_tok_per_s) — a MEASURED LOWER BOUND on the
--   per-request time, so the roof it sets is still a ceiling (it only binds where measurements show it does).
--   Host time is a property of the engine and the host machine, so it is never pooled across engine families.
-- Levels (most specific first; speed_efficiency_by_holdout takes the first with data):
--   hardware      key = hardware_id (its host: a DGX's x86 CPUs, a GB200's Grace), per engine family
--   architecture  key = hardware.architecture, per engine family
--   engine        key = engine family, every hardware
-- Columns: request_s (s of one replica per request), n (measurements), sources.
CREATE OR REPLACE VIEW host_roof_fit AS
WITH holdouts AS (
    SELECT '' AS holdout
    UNION ALL
    SELECT DISTINCT source_id FROM throughput_measurements
),
implied AS (
    SELECT h.holdout, c.source_id, c.hardware_id, c.architecture, c.engine_family,
           c.output_tokens / c.output_tok_per_s AS request_s
    FROM holdouts h
    JOIN throughput_ceilings c ON c.source_id <> h.holdout
),
levels AS (
    SELECT holdout, 'hardware' AS level, hardware_id AS key, engine_family, request_s, source_id FROM implied
    UNION ALL
    SELECT holdout, 'architecture', architecture, engine_family, request_s, source_id FROM implied
    WHERE architecture IS NOT NULL
    UNION ALL
    SELECT holdout, 'engine', engine_family, engine_family, request_s, source_id FROM implied
)
SELECT holdout, level, key, engine_family, min(request_s) AS request_s,
       count(*) AS n, count(DISTINCT source_id) AS sources
FROM levels
GROUP BY ALL
