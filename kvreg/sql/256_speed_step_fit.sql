-- speed_step_fit: does a FIXED time per decode step explain why achieved bandwidth fractions fall as bandwidth
-- rises (Ampere 0.47, Hopper 0.41, Blackwell 0.29 under TensorRT-LLM)?  A diagnostic beside speed_fit (252), read by
-- `kvreg calibrate --speed` and its tests; roofline and plans do NOT read it (see the verdict below).
-- Grain: one row per holdout ('' or 'architecture:' || family) × engine family × roof (memory, compute) ×
--   architecture (NULL: the pooled row, one efficiency for every architecture of the family).
-- Inputs: speed_evidence (252: the same fitted rows, host rule and holdouts as speed_fit), decode_coefficients
--   (layers), throughput_ceilings (the rows with a stated batch, for the check).
-- The step model, per output token of a row (one decode step serves `batch` sequences):
--   1 / output_tok_per_s = roof_s ÷ eff + t_layer · layers ÷ batch
--   roof_s   the step's time per output token at efficiency 1 (speed_evidence: the kernel classes' binding roofs
--            plus the all-reduce, 251)
--   t_layer  seconds per layer per step that do not shrink with bandwidth or FLOP/s: kernel launches and the
--            host's per-step work.  What the engines do per decode step: vLLM 0.19.0 replays one full CUDA graph
--            per decode batch (config/compilation.py:571-573, FULL_AND_PIECEWISE the V1 default) for batches up to
--            min(2·max_num_seqs, 512) sequences (:640-646), beyond that piecewise graphs with attention launched
--            per layer outside them (:558-560); every step the engine core schedules, runs the model, samples
--            and updates request state on the host (v1/engine/core.py:380-405 step(): schedule → execute_model →
--            sample_tokens → update_from_output), and at TP > 1 each layer waits on two all-reduces.
--            TensorRT-LLM's PyTorch backend captures graphs for generation-only batches (cuda_graph_config,
--            docs/source/performance/perf-overview.md, v1.0).  Launch and sync costs are microseconds per kernel,
--            so t_layer should be of the order of 10 µs.
--   Fitted per engine family × roof by weighted least squares (weights 1/y², i.e. relative residuals), eff per
--   architecture and t_layer shared by every architecture of the family (closed form: with a_k = 1/eff_k,
--   t = Σ_k (Szy − Sxz·Sxy/Sxx) ÷ Σ_k (Szz − Sxz²/Sxx), a_k = (Sxy − t·Sxz) ÷ Sxx, S.. the weighted sums of the
--   architecture's rows, x = roof_s, z = layers ÷ batch, y = 1/output_tok_per_s; t < 0 counts 0).
-- Columns: t_layer_s (s, shared by the family × roof in that holdout), efficiency (with the term),
--   efficiency_without (the same least squares with t = 0), n (rows), floor_share_max / floor_share_source /
--   floor_share_hardware: the CHECK — over every measurement of the family with a stated batch (concurrency:
--   MLPerf server runs, llm-ie, the vLLM blog; fitted or not) the largest (t_layer·layers + batch ÷
--   ceiling_tok_per_s) ÷ (batch ÷ output_tok_per_s): the fixed time plus the step's roofline time at efficiency
--   1, as a share of the MEASURED step; above 1 no efficiency ≤ 1 reaches a step the engine was measured to
--   take, so the term is refuted as a fixed cost.
-- VERDICT on the shipped registry (docs/calibration.md, "A fixed per-step term"), with the kernel classes and
--   TensorRT-LLM's whole-request admission and the decode-only and prompt steps apart (speed10) of 251:
--   TensorRT-LLM's rows ask for t_layer ≈ 42 µs (memory) / 166 µs (compute) per layer per step — tens of launches
--   per layer — which its runs with a stated batch allow (floor_share_max 0.68 / 0.92, MLPerf v5.1 Nebius H200),
--   but the generations stay apart with it: bandwidth efficiency Blackwell 0.41 → 0.43, Hopper 0.63 → 0.67.
--   vLLM's and SGLang's rows ask for no fixed term (t = 0) since their llm-ie decoding batch is Little's law on
--   the logs' printed means (speed12); before, with the median-ITL batch (small exactly at the long inputs: vLLM
--   10,000/500 × 200 17.6 for 47.7 decoding) the fit read that 1/batch as 214 µs (vLLM) / 208 µs (SGLang), and the
--   vLLM FP8-KV blog's Llama-3.1-8B at a stated concurrency of 8 on H100 refuted it (32 layers: 6.8 ms fixed +
--   13.0 ms roofline against a measured 17.8 ms step, floor_share_max 1.11; before speed10 278 µs).  (Before the
--   classes and the admission, with the pool-sized batch, the
--   TensorRT-LLM fit was 342 / 535 µs and refuted by MLPerf's H200 and GB200 server runs, 1.16 / 1.62: the
--   batch, not a time per step, carried most of that 1/batch signal.)  So the decode step (104) keeps no fixed
--   term: it does not carry an efficiency across generations, and tens of launches' time would land on every
--   small-batch plan.  (It does keep the host's time per SEQUENCE per step, 252 speed_seq_step_fit: B·t, a constant
--   time per output token, which the rows identify per device and which carries between sources; speed11.)
-- Units: seconds, fractions.
CREATE OR REPLACE VIEW speed_step_fit AS
WITH layers AS (
    SELECT DISTINCT model_id, kv_dtype, tp, layers FROM decode_coefficients
),
r AS (
    SELECT e.holdout, e.engine_family, e.roof, e.architecture,
           e.roof_s AS x, l.layers / e.batch AS z, 1 / e.output_tok_per_s AS y,
           e.output_tok_per_s * e.output_tok_per_s AS w
    FROM speed_evidence e
    JOIN layers l ON l.model_id = e.model_id AND l.kv_dtype = e.kv_dtype AND l.tp = e.tp
    WHERE e.roof IN ('memory', 'compute') AND (e.holdout = '' OR e.holdout LIKE 'architecture:%')
),
arch AS (
    SELECT holdout, engine_family, roof, architecture, count(*) AS n,
           sum(w * x * x) AS sxx, sum(w * x * y) AS sxy, sum(w * x * z) AS sxz, sum(w * z * z) AS szz,
           sum(w * z * y) AS szy
    FROM r GROUP BY ALL
),
shared AS (
    SELECT holdout, engine_family, roof,
           CASE WHEN sum(szz - sxz * sxz / sxx) > 0
                THEN greatest(0, sum(szy - sxz * sxy / sxx) / sum(szz - sxz * sxz / sxx)) ELSE 0 END AS t_layer_s,
           sum(n) AS n, sum(sxx) AS sxx, sum(sxy) AS sxy, sum(sxz) AS sxz
    FROM arch GROUP BY ALL
),
checked AS (
    -- the fixed part plus the ceiling's own time, in measured step time, of every measured step with a stated
    -- batch (header, CHECK)
    SELECT s.holdout, s.engine_family, s.roof,
           arg_max(struct_pack(share := s.t_layer_s * l.layers * c.output_tok_per_s / c.batch + c.ratio,
                               source := c.source_id, hardware := c.hardware_id),
                   s.t_layer_s * l.layers * c.output_tok_per_s / c.batch + c.ratio) AS worst
    FROM shared s
    JOIN throughput_ceilings c ON c.engine_family = s.engine_family AND c.concurrency IS NOT NULL
    JOIN layers l ON l.model_id = c.model_id AND l.kv_dtype = c.kv_dtype AND l.tp = c.tp
    GROUP BY ALL
)
SELECT a.holdout, a.engine_family, a.roof, a.architecture, s.t_layer_s,
       a.sxx / (a.sxy - s.t_layer_s * a.sxz) AS efficiency, a.sxx / a.sxy AS efficiency_without, a.n,
       k.worst.share AS floor_share_max, k.worst.source AS floor_share_source, k.worst.hardware AS floor_share_hardware
FROM arch a
JOIN shared s USING (holdout, engine_family, roof)
LEFT JOIN checked k USING (holdout, engine_family, roof)
UNION ALL
SELECT s.holdout, s.engine_family, s.roof, NULL, s.t_layer_s,
       s.sxx / (s.sxy - s.t_layer_s * s.sxz), s.sxx / s.sxy, s.n,
       k.worst.share, k.worst.source, k.worst.hardware
FROM shared s
LEFT JOIN checked k USING (holdout, engine_family, roof);

-- speed_step_calibration: the step model of speed_step_fit predicting the measurements it was fitted without —
-- leave-one-architecture-out, each row from its family's POOLED row fitted without its architecture (the figure
-- an unmeasured generation would get), with the term (efficiency, t_layer_s) and without it
-- (efficiency_without), at the row's binding roof only.
-- Grain: one row per measurement with a binding roof whose architecture's holdout has a pooled fit.
-- Columns: the measurement's keys (source_id, measurement_idx, hardware_id, architecture, engine_family, roof),
--   output_tok_per_s; error_with_term, error_without_term (predicted ÷ measured − 1).
-- Inputs: speed_step_fit, throughput_ceilings, decode_coefficients.  Units: fractions, tokens/s.
CREATE OR REPLACE VIEW speed_step_calibration AS
SELECT c.source_id, c.measurement_idx, c.hardware_id, c.architecture, c.engine_family, c.bound AS roof,
       c.output_tok_per_s,
       -- ratio ÷ measured rate: the step's time per output token at efficiency 1 (roof_s of speed_evidence)
       1 / (c.ratio / c.output_tok_per_s / f.efficiency + f.t_layer_s * l.layers / c.batch)
           / c.output_tok_per_s - 1 AS error_with_term,
       1 / (c.ratio / c.output_tok_per_s / f.efficiency_without) / c.output_tok_per_s - 1 AS error_without_term
FROM throughput_ceilings c
JOIN (SELECT DISTINCT model_id, kv_dtype, tp, layers FROM decode_coefficients) l
  ON l.model_id = c.model_id AND l.kv_dtype = c.kv_dtype AND l.tp = c.tp
JOIN speed_step_fit f ON f.holdout = 'architecture:' || c.architecture AND f.engine_family = c.engine_family
                     AND f.roof = c.bound AND f.architecture IS NULL
