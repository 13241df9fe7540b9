-- speed_fit: achieved fractions of the roofline fitted to the throughput measurements, with their evidence,
-- once on every measurement (holdout ''), once without each source (holdout = that source id, for
-- leave-one-source-out evaluation: 255_speed_calibration) and once without every row of one architecture family
-- (holdout = 'architecture:' || hardware.architecture, leave-one-architecture-out: whether a figure fitted on
-- other generations carries to this one — the held-out rows then fall to the stated figure or the engine / all
-- levels, 253).
-- Grain: one row per holdout × roof (memory, compute, host) × level × key (× engine family where the level has one).
-- Inputs: throughput_ceilings (sources with in_fit only: the others are predicted, never fitted), throughput_measurements.
-- Each measurement implies the efficiency of the roof that holds the larger part of its kernel classes' time (bound,
-- 251): implied = ratio = (the ceiling's time: decode-only and prompt steps, each Σ classes greatest(memory,
--   compute), plus allreduce_s; 104 expected_mixed_step_s) × output_tok_per_s, so that the
--   prediction at that efficiency for both roofs (expected_mixed_step_s, 104) reproduces it exactly — one figure per
--   row, since one rate cannot tell two roofs' shares apart (a row of both kinds of class lends its figure to the
--   roof that holds most of its time); the all-reduce is serial
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
--   requests of a fast model.  kvreg does not compute this host time from first principles: it reads it off the
--   rows that SHOW a host bound, by mechanism (host_evidence below), never off a GPU-bound run (whose turnover
--   says only that the host kept up):
--   (a) shortfall: in its series (same source, engine release, hardware, model, precisions, input length) a row
--       with MORE GPU work per request (output_tokens ÷ ceiling_tok_per_s: a longer output, or fewer devices)
--       reaches more than twice its measured ÷ ceiling ratio.  GPU-bound rows keep that ratio roughly as the GPU
--       work per request changes (TP series are flat, e.g. B200 Llama-3.3-70B 128/128 TP 1→8: 0.35, 0.38, 0.41,
--       0.39, trtllm-perf-overview-0.20); a fixed per-request cost instead eats a larger share of a shorter
--       request.  (a) alone was not enough before the kernel classes (251): the MoE prompt steps fell short too (below);
--   (b) pace: it turns requests over fastest of all rows of its source on that engine × hardware (the host's
--       pace: a run that finished fewer requests per second than another run of the same engine on the same
--       machines was not held by the host; with one greatest() over the totals this ruled out the Qwen3-30B-A3B
--       2048/128 rows, then 0.25-0.38 of their 2048/2048 series, at 25-52 requests/s beside the same machines'
--       188-311 at 128/128; with the classes and the routed activations they are 0.56-0.81×, no shortfall).
--   The rows that pass both (trtllm-perf-overview-1.0, Qwen3-30B-A3B nvfp4 TP 1 128/128, commit 00f37686):
--   B200 311.1 requests/s at 0.203 of the ceiling vs 0.446 at 128/4096 (0.45×); GB200 (the same GPU behind a
--   Grace host) 188.3 requests/s, 0.117 vs 0.450 (0.26×).  The next fastest-turnover rows are 0.76-0.84×
--   (Llama-3.1-8B 128/128 on L40S, H100, H200), 0.88× (B200 Llama-3.3-70B TP 8), 0.93× (RTX PRO 6000, the same
--   Qwen model, 218.8 requests/s; 0.52× before the classes), then 1.01-1.13× (the AMD and llm-ie fastest runs):
--   the factor 2 sits in the one gap of that list (0.26, 0.45 | 0.76, 0.77 …).  A host-evidence row gives no GPU efficiency
--   (its shortfall is the host's); its turnover (output_tokens ÷ output_tok_per_s) is the host time, and a level
--   takes the least.  Host time belongs to the engine and the host machine: levels hardware (key hardware_id:
--   its host, a DGX's x86 CPUs, a GB200's Grace) and architecture, per engine family — never the engine level
--   (253) nor pooled across engine families.  Until this rule, every row counted: SGLang's llm-ie DeepSeek-R1 run
--   (a 2,000-token request of a 671B model at TP 8, 0.61 s) would have capped every SGLang replica at 1.6
--   requests/s, and the vLLM llm-ie run capped the Nemotron recipe at 0.08× its measurement.
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
-- speed_evidence: the rows speed_fit aggregates, one per holdout × fitted measurement — what each row says about
-- the roof that bounds it (efficiency) or about the host (request_s, the host-evidence rows only), per the header;
-- also read by speed_step_fit (256) so that both fits rest on the same rows, host rule and holdouts.
-- Columns: holdout; the measurement's keys (source_id, measurement_idx, hardware_id, architecture, engine_family,
--   engine_id, model_id, kv_dtype, tp); roof ('memory' | 'compute' | 'host'); roof_s (s per output token: the
--   step's time at efficiency 1, ratio ÷ output_tok_per_s — Σ kernel classes' binding roof plus the all-reduce,
--   251; NULL for host rows); output_tok_per_s, output_tokens, batch, concurrency (as throughput_ceilings);
--   efficiency (roof_s × output_tok_per_s = ratio, the implied efficiency above; NULL for host rows);
--   request_s (host rows: output_tokens ÷ output_tok_per_s, s; else NULL).
CREATE OR REPLACE VIEW speed_evidence AS
WITH tc AS MATERIALIZED (
    -- throughput_ceilings once for the rule and the rows below (a view named twice is evaluated twice)
    SELECT * FROM throughput_ceilings
),
holdouts AS (
    -- held_source / held_architecture: the rows a holdout removes (at most one of the two is set)
    SELECT '' AS holdout, NULL AS held_source, NULL AS held_architecture
    UNION ALL
    SELECT DISTINCT source_id, source_id, NULL FROM throughput_measurements
    UNION ALL
    SELECT DISTINCT 'architecture:' || architecture, NULL, architecture FROM tc WHERE architecture IS NOT NULL
),
host_evidence AS (
    -- the rows that show a host bound (header, HOST ROOF): (a) shortfall beside more GPU work per request in the
    -- series, and (b) the fastest turnover of the source on this engine × hardware.  Within one source, so a
    -- holdout removes a row's evidence with the row.
    SELECT c.source_id, c.measurement_idx
    FROM tc c
    WHERE c.in_fit
      AND EXISTS (SELECT 1 FROM tc q
                  WHERE q.source_id = c.source_id AND q.engine_id = c.engine_id AND q.hardware_id = c.hardware_id
                    AND q.model_id = c.model_id AND q.weights_dtype = c.weights_dtype AND q.kv_dtype = c.kv_dtype
                    AND q.input_tokens = c.input_tokens
                    AND q.output_tokens / q.ceiling_tok_per_s > c.output_tokens / c.ceiling_tok_per_s
                    AND q.ratio > 2 * c.ratio)
      AND c.output_tok_per_s / c.output_tokens
          >= (SELECT max(q.output_tok_per_s / q.output_tokens) FROM tc q
              WHERE q.source_id = c.source_id AND q.engine_id = c.engine_id AND q.hardware_id = c.hardware_id)
),
rows AS (
    SELECT h.holdout, c.*, he.source_id IS NOT NULL AS host_row,
           -- the step's time per output token at efficiency 1 (kernel classes, 251): ratio ÷ measured rate
           c.ratio / c.output_tok_per_s AS bound_s
    FROM holdouts h
    JOIN tc c ON c.source_id IS DISTINCT FROM h.held_source AND c.architecture IS DISTINCT FROM h.held_architecture
             AND c.in_fit
    LEFT JOIN host_evidence he ON he.source_id = c.source_id AND he.measurement_idx = c.measurement_idx
)
-- GPU-roof evidence: every fitted row but the host-bound ones (their shortfall is the host's); host evidence: the
-- host-bound rows only (header)
SELECT holdout, source_id, measurement_idx, hardware_id, architecture, engine_family, engine_id, model_id, kv_dtype, tp,
       CASE WHEN host_row THEN 'host' ELSE bound END AS roof,
       CASE WHEN NOT host_row THEN bound_s END AS roof_s,
       output_tok_per_s, output_tokens, batch, concurrency,
       CASE WHEN NOT host_row THEN bound_s * output_tok_per_s END AS efficiency,
       CASE WHEN host_row THEN output_tokens / output_tok_per_s END AS request_s
FROM rows
WHERE host_row OR bound IS NOT NULL;

-- speed_seq_step_fit: the HOST's time per scheduled sequence per decode step (issue 13, speed11), per holdout ×
-- engine family × level, fitted on speed_evidence's GPU-roof rows (the same rows, host rule and holdouts as the
-- efficiencies below) and applied to every step (speed_seq_step_pick): the implied efficiencies (speed_fit), the
-- predictions (255), roofline's expected_* and plans (104 decode_step_s's host_s_per_seq).
-- Grain: one row per holdout × engine family × level ('hardware' key hardware_id, 'architecture' key architecture,
--   'engine' key engine family) with GPU-roof evidence.
-- Mechanism: each decode step the serving process walks its scheduled sequences in Python, on the step's critical
--   path, before and after the GPU work — no CUDA graph and no roofline sees it, and it grows with the batch, not
--   with the model:
--   TensorRT-LLM's PyTorch backend (v1.0): model_engine.py PyTorchModelEngine._prepare_tp_inputs builds the step's
--   inputs in per-request loops (`for request in generation_requests:` appends each sequence's position id, cached
--   length, prompt length, seq slot — per beam — before one host→device copy); sampler.py TorchSampler
--   update_requests walks the generation requests again to add each new token and test the stop criteria
--   (add_new_token, _handle_stop_criteria); py_executor.py's response handling makes one response per request.
--   vLLM V1: v1/core/sched/scheduler.py schedule() walks self.running (one token-budget and block-allocation step per
--   request) and update_from_output() walks the scheduled requests to append tokens and check stops.
--   Per output token of a row (one decode step serves `batch` sequences, each one token):
--     1 / output_tok_per_s = roof_s ÷ eff + t_seq
--   so the term is a fixed time per OUTPUT TOKEN, the same at every batch: it weighs most where the GPU's time per
--   token is least (large batches of a small or sparse model: Qwen3-30B-A3B nvfp4 128/128 at 2,048 sequences).
--   It is the host MACHINE's and the engine's (its CPU, its Python): levels per engine family, hardware first (a
--   DGX's x86 host, a GB200 tray's Grace), then its architecture, then every device of the family — as the host
--   roof's levels (speed_fit below), never pooled across engine families.
-- Fit: weighted least squares (weights 1/y², relative residuals), one slope a_g = 1/eff per group g = hardware ×
--   roof, t_seq shared by the level's groups (closed form, as speed_step_fit 256 with z = 1: t = Σ_g (Sy − Sx·Sxy/Sxx)
--   ÷ Σ_g (S1 − Sx²/Sxx), S.. the weighted sums of the group's rows, x = roof_s, y = 1/output_tok_per_s; t < 0
--   counts 0: the data show no such term).  Identified by how 1/rate falls with roof_s within one device and roof
--   (its intercept): a group of one row fits its own slope exactly and says nothing, so groups of two rows or more
--   only, and a level with no spread left has no figure (NULL; the next level answers).
-- Columns: seq_step_s (s per sequence per step; NULL: not identified at this level), n (rows), sources.
-- Shipped registry (docs/calibration.md, "A host time per sequence per step"), TensorRT-LLM: B200 8.5 µs (89 rows;
--   7.5 and 9.0 on the 1.0 and 0.20 pages alone), GB200 18.5 (29), H100 2.3, H200 2.3, GH200 3.7 (the same Grace
--   CPU as GB200: Grace alone does not make the GB200 figure), L40S 9.3, A100 and RTX PRO 6000 0 (negative fits);
--   the family 5.4 µs (435 rows); vLLM H200 1.1 µs, MI300X 0; SGLang 0.
CREATE OR REPLACE VIEW speed_seq_step_fit AS
WITH r AS (
    SELECT holdout, engine_family, hardware_id, architecture, roof, source_id, roof_s AS x, 1 / output_tok_per_s AS y,
           output_tok_per_s * output_tok_per_s AS w
    FROM speed_evidence
    WHERE roof IN ('memory', 'compute')
),
g AS (
    -- one slope (1/eff) per hardware × roof: the weighted sums of its rows
    SELECT holdout, engine_family, hardware_id, any_value(architecture) AS architecture, roof, count(*) AS n,
           list(DISTINCT source_id) AS srcs,
           -- summed in one fixed order (rows equal in x and y add the same terms): a parallel sum's order varies with
           -- the threads, and its last bits with it, so a persisted table would differ from its view (test_persist)
           sum(w * x * x ORDER BY x, y) AS sxx, sum(w * x * y ORDER BY x, y) AS sxy, sum(w * x ORDER BY x, y) AS sx,
           sum(w ORDER BY x, y) AS s1, sum(w * y ORDER BY x, y) AS sy
    FROM r GROUP BY holdout, engine_family, hardware_id, roof
),
levels AS (
    SELECT g.*, 'hardware' AS level, hardware_id AS key FROM g
    UNION ALL
    SELECT g.*, 'architecture', architecture FROM g WHERE architecture IS NOT NULL
    UNION ALL
    SELECT g.*, 'engine', engine_family FROM g
)
SELECT holdout, engine_family, level, key,
       -- identified only by groups of two rows or more (one row fits its own slope exactly), and only when the
       -- rows' roof_s spread is more than rounding (1e-9 of the weights: numerically zero otherwise)
       CASE WHEN sum(s1 - sx * sx / sxx ORDER BY hardware_id, roof) FILTER (WHERE n >= 2)
                 > 1e-9 * sum(s1 ORDER BY hardware_id, roof) FILTER (WHERE n >= 2)
            THEN greatest(0, sum(sy - sx * sxy / sxx ORDER BY hardware_id, roof) FILTER (WHERE n >= 2)
                             / sum(s1 - sx * sx / sxx ORDER BY hardware_id, roof) FILTER (WHERE n >= 2)) END AS seq_step_s,
       sum(n) FILTER (WHERE n >= 2) AS n, len(list_distinct(flatten(list(srcs) FILTER (WHERE n >= 2)))) AS sources
FROM levels GROUP BY holdout, engine_family, level, key;

-- speed_seq_step_pick: the host's seconds per sequence per step each hardware × engine family uses, per holdout —
-- the first level of speed_seq_step_fit with a figure: hardware (this device's machines and host, this engine
-- family), architecture, engine (every device of the family).  Read by speed_fit (implied efficiencies) and 253
-- (predictions, roofline, plans).  Grain: holdout × hardware × engine family with any evidence in that holdout.
-- Columns: holdout, hardware_id, engine_family, seq_step_s (s), level, n.
CREATE OR REPLACE VIEW speed_seq_step_pick AS
WITH f AS MATERIALIZED (SELECT * FROM speed_seq_step_fit WHERE seq_step_s IS NOT NULL),
picked AS (
    SELECT f.holdout, h.hardware_id, f.engine_family,
           arg_min(struct_pack(s := f.seq_step_s, level := f.level, n := f.n),
                   CASE f.level WHEN 'hardware' THEN 1 WHEN 'architecture' THEN 2 ELSE 3 END) AS p
    FROM hardware h
    JOIN f ON (f.level = 'hardware' AND f.key = h.hardware_id) OR (f.level = 'architecture' AND f.key = h.architecture)
           OR f.level = 'engine'
    GROUP BY ALL
)
SELECT holdout, hardware_id, engine_family, p.s AS seq_step_s, p.level AS level, p.n AS n FROM picked;

CREATE OR REPLACE VIEW speed_fit AS
WITH ev AS MATERIALIZED (
    -- speed_evidence once for both fits below
    SELECT * FROM speed_evidence
),
implied AS (
    -- the GPU's share of the measured time per output token once the host's per-sequence step time is taken out
    -- (speed_seq_step_fit): roof_s ÷ (1/rate − t_seq); NULL (left out) when the host term alone exceeds it
    SELECT e.holdout, e.source_id, e.hardware_id, e.architecture, e.engine_family, e.roof,
           e.roof_s / nullif(greatest(1 / e.output_tok_per_s - coalesce(q.seq_step_s, 0), 0), 0) AS efficiency
    FROM ev e
    LEFT JOIN speed_seq_step_pick q ON q.holdout = e.holdout AND q.engine_family = e.engine_family
                                   AND q.hardware_id = e.hardware_id
    WHERE e.roof <> 'host'
),
host AS (
    SELECT holdout, source_id, hardware_id, architecture, engine_family, request_s FROM ev WHERE roof = 'host'
),
engine_breadth AS (
    -- engine families whose evidence FOR THIS ROOF spans two or more architectures in this holdout: only they get
    -- an engine level for it (vLLM's memory-bound rows are Hopper and CDNA3, its compute-bound rows CDNA3 alone:
    -- counted over both roofs, MI300X's compute figure had become vLLM's on every device, e.g. the MI355X's)
    SELECT holdout, engine_family, roof
    FROM implied
    GROUP BY ALL HAVING count(DISTINCT architecture) >= 2
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
    WHERE (holdout, engine_family, roof) IN (SELECT (holdout, engine_family, roof) FROM engine_breadth)
    UNION ALL
    SELECT holdout, roof, 'all', 'all', NULL, efficiency, source_id FROM implied
),
host_levels AS (
    SELECT holdout, 'hardware' AS level, hardware_id AS key, engine_family, request_s, source_id FROM host
    UNION ALL
    SELECT holdout, 'architecture', architecture, engine_family, request_s, source_id FROM host
    WHERE architecture IS NOT NULL
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
