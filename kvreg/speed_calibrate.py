"""``kvreg calibrate --speed``: published throughput measurements beside kvreg's predictions.

All arithmetic is in the views ``throughput_ceilings`` (the roofline ceiling of each measured
workload), ``speed_fit`` / ``speed_efficiency_by_holdout`` (efficiencies fitted in SQL, per
hardware × engine family, with and without each source) and ``speed_calibration`` (each
measurement predicted in-sample and leave-one-source-out); see docs/sql.md.  This module only
picks rows and lays them out: a terminal table, Markdown (the "Speed" section of
docs/calibration.md) or JSON.
"""

from __future__ import annotations

import json

from kvreg.calibrate import _md, _text   # one table renderer for both calibrations

LOSO = "leave-one-source-out"

SUMMARY_SQL = """
SELECT hardware_id, engine_family, count(*) FILTER (WHERE mode = 'in-sample') AS n,  -- measurements, once
       median(abs_error) FILTER (WHERE mode = 'in-sample') AS in_sample_median,
       max(abs_error) FILTER (WHERE mode = 'in-sample') AS in_sample_worst,
       median(abs_error) FILTER (WHERE mode = ?) AS loso_median,
       max(abs_error) FILTER (WHERE mode = ?) AS loso_worst,
       any_value(bandwidth_efficiency) FILTER (WHERE mode = 'in-sample') AS bandwidth_efficiency,
       any_value(compute_efficiency) FILTER (WHERE mode = 'in-sample') AS compute_efficiency
FROM _speed_calibration
GROUP BY ALL
ORDER BY hardware_id, engine_family
"""

OVERALL_SQL = """
SELECT mode, count(*) AS n, median(abs_error) AS median_abs_error, max(abs_error) AS worst_abs_error,
       quantile_cont(abs_error, 0.9) AS p90_abs_error, count(DISTINCT source_id) AS sources,
       count(DISTINCT hardware_id) AS hardware, count(tpot_error) AS tpot_checked,
       median(abs(tpot_error)) AS tpot_median_abs_error,
       median(abs(carried_error)) AS carried_median_abs_error,
       quantile_cont(abs(carried_error), 0.9) AS carried_p90_abs_error,
       max(abs(carried_error)) AS carried_worst_abs_error
FROM _speed_calibration
GROUP BY mode
ORDER BY mode
"""

LOAO = "leave-one-architecture-out"

# Leave-one-architecture-out per architecture × engine family: the figure used (stated, where the hardware entry
# states one, else carried) beside the carried figure (speed_calibration carried_error)
ARCH_SQL = """
SELECT architecture, engine_family, count(*) AS n, mode(bandwidth_level) AS bandwidth_level,
       median(abs_error) AS median_abs_error, max(abs_error) AS worst_abs_error,
       median(abs(carried_error)) AS carried_median_abs_error, max(abs(carried_error)) AS carried_worst_abs_error,
       any_value(carried_bandwidth_efficiency) AS carried_bandwidth_efficiency
FROM _speed_calibration
WHERE mode = ?
GROUP BY ALL
ORDER BY architecture, engine_family
"""

# speed_step_fit (256) on every source: the fixed per-step term per engine family × roof × architecture
STEP_FIT_SQL = """
SELECT engine_family, roof, coalesce(architecture, '(pooled)') AS architecture, t_layer_s, efficiency_without,
       efficiency, n, floor_share_max, floor_share_source, floor_share_hardware
FROM speed_step_fit
WHERE holdout = ''
ORDER BY engine_family, roof, architecture NULLS LAST
"""

# speed_seq_step_fit (252) on every source: the host's time per sequence per step, per engine family × level
SEQ_STEP_SQL = """
SELECT engine_family, level, key, seq_step_s, n, sources
FROM speed_seq_step_fit
WHERE holdout = '' AND seq_step_s IS NOT NULL
ORDER BY engine_family, CASE level WHEN 'engine' THEN 1 WHEN 'architecture' THEN 2 ELSE 3 END, key
"""

STEP_LOAO_SQL = """
SELECT count(*) AS n, median(abs(error_without_term)) AS without_median, quantile_cont(abs(error_without_term), 0.9)
           AS without_p90, max(abs(error_without_term)) AS without_worst,
       median(abs(error_with_term)) AS with_median, quantile_cont(abs(error_with_term), 0.9) AS with_p90,
       max(abs(error_with_term)) AS with_worst
FROM speed_step_calibration
"""


# Issue 13's bar for a measurement predicted with its own source left out: |error| ≤ 40 %.  The rows above it
# are listed one by one and grouped by what they share (engine family, model, weights precision, direction of
# the error), so that each group's missing mechanism can be named (docs/calibration.md, "Held out over 40 %").
HELD_OUT_TARGET = 0.40

OVER_TARGET_SQL = """
SELECT source_id, measurement_idx, hardware_id, engine_family, engine_version, scenario, model_id, weights_dtype,
       kv_dtype, tp, input_tokens, output_tokens, batch, bound, output_tok_per_s, predicted_tok_per_s, error,
       CASE WHEN host_bound THEN 'host' WHEN bound = 'compute' THEN compute_level ELSE bandwidth_level END
           AS efficiency_level,
       CASE WHEN bound = 'compute' THEN compute_efficiency ELSE bandwidth_efficiency END AS efficiency,
       host_bound, predictable_held_out, held_out_note
FROM _speed_calibration
WHERE mode = ? AND abs_error > ?
ORDER BY abs_error DESC, source_id, measurement_idx
"""

# the same rows grouped by what they have in common; each group's hardware, sources, lengths and TP listed
OVER_TARGET_GROUPS_SQL = """
SELECT engine_family, model_id, weights_dtype, CASE WHEN error > 0 THEN 'over' ELSE 'under' END AS direction,
       count(*) AS n, max(abs_error) AS worst_abs_error, median(abs_error) AS median_abs_error,
       string_agg(DISTINCT hardware_id, ', ' ORDER BY hardware_id) AS hardware,
       string_agg(DISTINCT source_id, ', ' ORDER BY source_id) AS sources,
       string_agg(DISTINCT input_tokens || '/' || output_tokens, ', ' ORDER BY input_tokens || '/' || output_tokens)
           AS lengths,
       string_agg(DISTINCT tp::VARCHAR, ', ' ORDER BY tp::VARCHAR) AS tp,
       string_agg(DISTINCT bound, ', ' ORDER BY bound) AS bound,
       count(*) FILTER (WHERE NOT predictable_held_out) AS not_predictable
FROM _speed_calibration
WHERE mode = ? AND abs_error > ?
GROUP BY ALL
ORDER BY worst_abs_error DESC
"""


def speed_report(con, progress=None) -> dict:
    """The speed calibration as plain data.

    Returns ``{"overall": [...], "by_hardware": [...], "measurements": [...], "by_architecture": [...],
    "step_term": {"fit": [...], "leave_one_architecture_out": {...}}, "seq_step": [...], ...}``: overall errors per mode
    (in-sample, leave-one-source-out, leave-one-architecture-out; ``carried_*`` with the carried
    bandwidth figure in place of a stated one), per hardware × engine family, every measurement with
    its ceiling and both per-source predictions, leave-one-architecture-out per architecture ×
    engine family (stated vs carried), and the fixed per-step term's fit and check
    (``speed_step_fit``, ``speed_step_calibration``), and the host's time per sequence per step per engine
    family × level (``speed_seq_step_fit``: seq_step_s in seconds, n rows).  Errors are fractions, predicted ÷ measured − 1; rates in
    output tokens per second over the replica (``tp`` devices).  ``progress`` (optional) is called with a short
    message before each slow step (the fits with each source and architecture held out, the step-term fit).
    """
    say = progress or (lambda message: None)
    cols = lambda cur: [d[0] for d in cur.description]  # noqa: E731
    say("fitting the speed efficiencies and predicting every throughput measurement")
    # The view chain (ceilings, fits with each source held out, predictions) is evaluated once: the three
    # queries below read a temporary copy of its 2 × measurements rows.
    con.execute("CREATE OR REPLACE TEMP TABLE _speed_calibration AS SELECT * FROM speed_calibration")
    cur = con.execute(OVERALL_SQL)
    overall = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    cur = con.execute(SUMMARY_SQL, [LOSO, LOSO])
    by_hw = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    cur = con.execute(
        """SELECT i.source_id, i.measurement_idx, i.hardware_id, i.engine_family, i.model_id, i.weights_dtype, i.tp,
                  i.input_tokens, i.output_tokens, i.batch, i.bound, i.output_tok_per_s, i.ceiling_tok_per_s,
                  i.predicted_tok_per_s AS predicted_in_sample, i.error AS error_in_sample,
                  l.predicted_tok_per_s AS predicted_loso, l.error AS error_loso,
                  l.bandwidth_level AS loso_bandwidth_level, l.compute_level AS loso_compute_level,
                  i.host_bound AS host_bound_in_sample, l.host_bound AS loso_host_bound, l.host_level AS loso_host_level,
                  l.predictable_held_out AS loso_predictable, l.held_out_note AS loso_held_out_note
           FROM _speed_calibration i
           JOIN _speed_calibration l ON l.mode = ? AND l.source_id = i.source_id
                                   AND l.measurement_idx = i.measurement_idx
           WHERE i.mode = 'in-sample'
           ORDER BY i.source_id, i.measurement_idx""", [LOSO])
    rows = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    say("leaving one architecture out at a time")
    cur = con.execute(ARCH_SQL, [LOAO])
    by_arch = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    cur = con.execute(OVER_TARGET_SQL, [LOSO, HELD_OUT_TARGET])
    over_rows = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    cur = con.execute(OVER_TARGET_GROUPS_SQL, [LOSO, HELD_OUT_TARGET])
    over_groups = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    con.execute("DROP TABLE _speed_calibration")
    say("fitting the fixed per-step term")
    cur = con.execute(STEP_FIT_SQL)
    step_fit = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    cur = con.execute(STEP_LOAO_SQL)
    step_loao = dict(zip(cols(cur), cur.fetchone()))
    cur = con.execute(SEQ_STEP_SQL)
    seq_step = [dict(zip(cols(cur), r)) for r in cur.fetchall()]
    return {"seq_step": seq_step, "overall": overall, "by_hardware": by_hw, "measurements": rows, "by_architecture": by_arch,
            "step_term": {"fit": step_fit, "leave_one_architecture_out": step_loao},
            "held_out_over_target": {"target": HELD_OUT_TARGET, "rows": over_rows, "groups": over_groups}}


def _pct(x) -> str:
    return "" if x is None else f"{100 * x:.1f}"


def _signed(x) -> str:
    return "" if x is None else f"{100 * x:+.1f}"


def _num(x) -> str:
    return "" if x is None else f"{x:,.0f}"


def _eff(x) -> str:
    return "" if x is None else f"{x:.2f}"


def _tables(rep: dict, with_rows: bool) -> list[tuple[str, list[str], list[list[str]]]]:
    overall = ("Overall", ["mode", "measurements", "sources", "hardware", "median abs error %", "p90 abs error %",
                           "worst abs error %", "carried bandwidth: median / p90 / worst %"],
               [[o["mode"], f"{o['n']:,}", str(o["sources"]), str(o["hardware"]), _pct(o["median_abs_error"]),
                 _pct(o["p90_abs_error"]), _pct(o["worst_abs_error"]),
                 f"{_pct(o['carried_median_abs_error'])} / {_pct(o['carried_p90_abs_error'])} / "
                 f"{_pct(o['carried_worst_abs_error'])}"] for o in rep["overall"]])
    by_hw = ("Per hardware and engine family",
             ["hardware", "engine", "measurements", "bandwidth eff", "compute eff", "in-sample median abs error %",
              "in-sample worst %", "leave-one-source-out median abs error %", "leave-one-source-out worst %"],
             [[h["hardware_id"], h["engine_family"], str(h["n"]), _eff(h["bandwidth_efficiency"]),
               _eff(h["compute_efficiency"]), _pct(h["in_sample_median"]), _pct(h["in_sample_worst"]),
               _pct(h["loso_median"]), _pct(h["loso_worst"])] for h in rep["by_hardware"]])
    by_arch = ("Leave-one-architecture-out: the stated figure against the carried one",
               ["architecture", "engine", "measurements", "bandwidth from", "median abs error %", "worst %",
                "carried bandwidth eff", "carried median abs error %", "carried worst %"],
               [[a["architecture"], a["engine_family"], str(a["n"]), a["bandwidth_level"] or "",
                 _pct(a["median_abs_error"]), _pct(a["worst_abs_error"]), _eff(a["carried_bandwidth_efficiency"]),
                 _pct(a["carried_median_abs_error"]), _pct(a["carried_worst_abs_error"])]
                for a in rep["by_architecture"]])
    step = rep["step_term"]
    step_fit = ("A fixed per-step term (speed_step_fit): fitted, and checked against measured steps",
                ["engine", "roof", "architecture", "t per layer per step µs", "efficiency without",
                 "efficiency with", "measurements", "fixed + roofline ÷ measured step, worst", "worst row"],
                [[f["engine_family"], f["roof"], f["architecture"], f"{1e6 * f['t_layer_s']:.0f}",
                  _eff(f["efficiency_without"]), _eff(f["efficiency"]), str(f["n"]),
                  "" if f["floor_share_max"] is None else f"{f['floor_share_max']:.2f}",
                  f"{f['floor_share_source'] or ''} {f['floor_share_hardware'] or ''}".strip()]
                 for f in step["fit"]])
    lo = step["leave_one_architecture_out"]
    step_loao = ("A fixed per-step term: leave-one-architecture-out (pooled family figure, binding roof only)",
                 ["model", "measurements", "median abs error %", "p90 abs error %", "worst abs error %"],
                 [["without the term", str(lo["n"]), _pct(lo["without_median"]), _pct(lo["without_p90"]),
                   _pct(lo["without_worst"])],
                  ["with the term", str(lo["n"]), _pct(lo["with_median"]), _pct(lo["with_p90"]),
                   _pct(lo["with_worst"])]])
    seq_step = ("The host's time per sequence per step (speed_seq_step_fit): per engine family, every source",
                ["engine", "level", "key", "µs per sequence per step", "measurements", "sources"],
                [[f["engine_family"], f["level"], f["key"], f"{1e6 * f['seq_step_s']:.1f}", str(f["n"]),
                  str(f["sources"])] for f in rep["seq_step"]])
    over = rep["held_out_over_target"]
    target = f"{100 * over['target']:.0f} %"
    over_groups = (f"Held out over {target}: the rows grouped by what they share (leave-one-source-out)",
                   ["engine", "model", "weights", "direction", "rows", "worst %", "median %", "hardware", "sources",
                    "in/out tokens", "tp", "bound", "not predictable held out"],
                   [[g["engine_family"], g["model_id"], g["weights_dtype"], g["direction"], str(g["n"]),
                     _pct(g["worst_abs_error"]), _pct(g["median_abs_error"]), g["hardware"], g["sources"],
                     g["lengths"], g["tp"], g["bound"] or "", str(g["not_predictable"])] for g in over["groups"]])
    over_rows = (f"Held out over {target}: every row (leave-one-source-out)",
                 ["source", "#", "hardware", "engine", "model", "weights", "tp", "in/out tokens", "batch", "bound",
                  "measured tok/s", "predicted tok/s", "error %", "efficiency (level)"],
                 [[r["source_id"], str(r["measurement_idx"]), r["hardware_id"], r["engine_family"], r["model_id"],
                   r["weights_dtype"], str(r["tp"]), f"{r['input_tokens']:,}/{r['output_tokens']:,}",
                   f"{r['batch']:,}", r["bound"] or "", _num(r["output_tok_per_s"]), _num(r["predicted_tok_per_s"]),
                   _signed(r["error"]), f"{_eff(r['efficiency'])} ({r['efficiency_level'] or ''})"]
                  for r in over["rows"]])
    out = [overall, by_hw, over_groups, over_rows, by_arch, seq_step, step_fit, step_loao]
    if with_rows:
        out.append(("Measurements",
                    ["source", "hardware", "model", "weights", "tp", "in/out tokens", "batch", "bound",
                     "measured tok/s", "ceiling tok/s", "predicted tok/s", "error %", "left-out predicted tok/s",
                     "left-out error %", "left-out efficiency from"],
                    [[m["source_id"], m["hardware_id"], m["model_id"], m["weights_dtype"], str(m["tp"]),
                      f"{m['input_tokens']:,}/{m['output_tokens']:,}", f"{m['batch']:,}", m["bound"] or "",
                      _num(m["output_tok_per_s"]), _num(m["ceiling_tok_per_s"]), _num(m["predicted_in_sample"]),
                      _signed(m["error_in_sample"]), _num(m["predicted_loso"]), _signed(m["error_loso"]),
                      f"host roof ({m['loso_host_level']})" if m["loso_host_bound"]
                      else m["loso_bandwidth_level"] if m["bound"] != "compute" else m["loso_compute_level"]]
                     for m in rep["measurements"]]))
    return out


MD_INTRO = [
    "## Speed: published throughput against kvreg's prediction",
    "",
    "Generated by `kvreg calibrate --format markdown` (also `kvreg calibrate --speed`); do not edit by hand.",
    "Each measurement (registry/throughput/*.yaml: output tokens per second of one replica, offline, at the",
    "stated input/output lengths) is set beside the roofline ceiling of its workload (`throughput_ceilings`:",
    "decode at the mean context plus the prompt's causal prefill, per output token, at the largest batch the",
    "engine's KV pool could hold) and beside kvreg's prediction: the ceiling with each roof scaled by",
    "the efficiency `speed_efficiency` fits in SQL (median implied efficiency per hardware × engine family,",
    "falling back to the architecture family, the hardware entry's stated figure, the engine, all), plus the",
    "host's time per sequence per step (`speed_seq_step_fit`, below), or by the",
    "engine's host roof when that is slower: the fastest request turnover of the rows that show a host bound (a",
    "shortfall of more than half beside more GPU work per request, at the machine's fastest pace) on this hardware",
    "(falling back to the architecture), spread over the request's output tokens (`speed_fit`, roof `host`).",
    "*In-sample*: efficiencies fitted on every source.  *Leave-one-source-out*: efficiencies fitted without the",
    "measurement's own source, so it predicts a source kvreg has not seen.  Error = predicted ÷ measured − 1.",
    "A source marked `in_fit: false` (its entry says why) is never fitted to, only predicted: both modes agree.",
    "",
    "**The batch is the engine's pool (issue 13, speed7).**  A row without a fixed concurrency is costed at the",
    "most requests the ENGINE'S KV pool holds (240 memory_pools_at: the release's reserve and memory fraction, at",
    "the fraction the source ran where it says, the entry's `kv_cache_fraction`: TensorRT-LLM's perf-overview pages",
    "ran trtllm-bench at `--kv_cache_free_gpu_mem_fraction 0.95` \"in majority of cases\", 0.90 on out-of-memory;",
    "0.95, the upper, keeps the batch an upper bound), no longer all the memory beside the weights",
    "(kvreg/sql/251_throughput_ceilings.sql).  Llama-3.3-70B FP8 on ONE H100 at 5,000/500: 0.95 × (79.19 GiB −",
    "72.72 GB of weights − 2.23 GB reserve) = 9.57 GB holds 10 requests of 901 MB, not 13; its implied efficiency",
    "0.395 → 0.497, its error +50.8 → +32.7 % in-sample, +63.9 → +35.9 % left out.  Over all 511 rows: in-sample",
    "median 10.3 → 9.7 %, p90 25.4 → 25.0 %, worst 84.3 → 82.8 %; leave-one-source-out median 12.2 → 11.8 %, p90",
    "31.6 → 32.4 %, worst 220 % (unchanged: the host-bound GB200 row); leave-one-architecture-out median 24.4 →",
    "25.9 % (the stated 0.45 under-predicts the now smaller ceilings of TensorRT-LLM's measured 0.64-0.66 devices).",
    "H100 × TensorRT-LLM's bandwidth figure went 0.595 → 0.660, and the held-out vLLM rows on H100 that borrowed it",
    "to +63 % (next).",
    "",
    "**Which figure an unmeasured engine × device borrows: the engine's, on the same architecture, first",
    "(speed7).**  The engine's kernels set the share of the roof it reaches (on one H200: vLLM 0.37, SGLang 0.45,",
    "TensorRT-LLM 0.64), so an engine not measured on a device takes its own figure on that architecture before the",
    "device's other engines (kvreg/sql/253_speed_efficiency_by_holdout.sql).  It moves only the 7 held-out vLLM rows",
    "on H100 (Krai MLPerf vLLM 0.9.2, the vLLM FP8-KV blog): from H100 × TensorRT-LLM (0.660) their |error| median",
    "26.3 %, worst 63.3 %, 3 rows over 40 %; from Hopper × vLLM (0.366) median 19.8 %, worst 42.8 %, 1 row.  All",
    "rows, leave-one-source-out: median 11.8 → 12.0 %, p90 32.4 → 32.2 %, rows over 40 % 21 → 19; TPOT median 18.7",
    "→ 17.9 %.  Without the pool change the same swap was 13.9 → 19.8 % median, 48.3 → 42.8 % worst on those rows",
    "(tried and reverted before on that evidence).  Still off: the dense Llama-3.1-8B blog rows (−43 %, −30 %):",
    "vLLM's Hopper figure rests on MLA + MoE (DeepSeek-R1) and hybrid (Nemotron) models only.",
    "",
    "| speed7 step | in-sample median / p90 / worst % | leave-one-source-out median / p90 / worst % | LOSO rows > 40 % | leave-one-architecture-out median / p90 / worst % | TPOT median % |",
    "|---|---|---|---|---|---|",
    "| before (main 29401c7) | 10.3 / 25.4 / 84.3 | 12.2 / 31.6 / 220.2 | 21 | 24.4 / 41.9 / 292.7 | 18.9 |",
    "| batch on the engine's pool | 9.7 / 25.0 / 82.8 | 11.8 / 32.4 / 220.2 | 21 | 25.9 / 43.0 / 293.1 | 18.7 |",
    "| + the engine's figure on the architecture first | 9.7 / 24.8 / 82.8 | 12.0 / 32.2 / 220.2 | 19 | 25.9 / 43.0 / 293.1 | 17.9 |",
    "| + decode-only and prompt steps apart (speed10) | 8.8 / 22.1 / 85.9 | 11.2 / 31.6 / 220.7 | 16 | 26.5 / 44.8 / 294.3 | 14.9 |",
    "| + the host's time per sequence per step, one figure per engine family (speed11) | 8.7 / 19.7 / 75.5 | 11.1 / 31.5 / 139.9 | 16 | 27.0 / 42.7 / 214.7 | — |",
    "| + that figure per hardware, else architecture, else engine family (speed11) | 8.0 / 20.1 / 74.5 | 10.5 / 31.7 / 105.7 | 13 | 27.0 / 42.6 / 224.1 | 15.1 |",
    "| + the llm-ie decoding batch by Little's law on the logs' printed means (speed12) | 7.9 / 20.8 / 66.5 | 10.6 / 31.9 / 105.7 | 18 | 27.2 / 43.5 / 224.1 | 16.0 |",
    "",
    "**speed12.**  llm-ie's batch: requests × (mean E2E − mean TTFT) ÷ duration, the logs' printed means, not tok/s ×",
    "median ITL (vLLM 10,000/500 × 200: 18 → 48).  Still off held out (the entries' notes say why): DeepSeek-R1 30,000/100",
    "(attention 67 % of its compute time, ≤ 18 % on every fitted compute-bound row), MI325X (the MI300X's die on a 1,000 W",
    "board; AMD's MLPerf build 1.45× Krai's on MI300X), the blog's dense Llama-3.1-8B (Hopper × vLLM rests on MoE rows).",
    "",
    "**A host time per sequence per step (issue 13, speed11; `speed_seq_step_fit`, kvreg/sql/252_speed_fit.sql).**",
    "Each decode step the serving process walks its scheduled sequences in Python on the step's critical path:",
    "TensorRT-LLM's PyTorch backend builds the step's inputs in per-request loops",
    "(`tensorrt_llm/_torch/pyexecutor/model_engine.py` `_prepare_tp_inputs`: `for request in generation_requests:`",
    "appends each sequence's position id, cached length, prompt length and slot) and its sampler walks them again",
    "to add each token and test the stop criteria (`sampler.py` `update_requests`); vLLM V1's scheduler walks",
    "`self.running` in `schedule()` and the outputs in `update_from_output()`.  No roofline and no CUDA graph sees",
    "it, and it grows with the batch: per output token it is a constant t, 1 ÷ measured = roof time ÷ efficiency",
    "+ t, which weighs most where the GPU's time per token is least (Qwen3-30B-A3B nvfp4 at 2,048 sequences).",
    "Fitted in SQL by weighted least squares (relative residuals) with one slope per hardware × roof and t shared,",
    "at three levels per engine family (hardware, architecture, every device), the first with a figure applying;",
    "t comes out of every implied efficiency, and the predictions, roofline's expected columns and plans (through",
    "`decode_step_s`'s `host_s_per_seq`, kvreg/sql/104_decode_step.sql) add B·t to each step.  TensorRT-LLM:",
    "B200 8.5 µs (89 rows; 7.5 µs fitted on the 1.0 page alone, 9.0 on the 0.20 page alone: the figure carries",
    "between sources), GB200 18.5 (29 rows, one page), H100 and H200 2.3, GH200 3.7, L40S 9.3, A100 and RTX PRO",
    "6000 0 (negative fits count 0); the family 5.4 µs over 435 rows (the memory- and compute-bound rows alone",
    "5.6 and 5.7).  vLLM: H200 1.1 µs, MI300X 0; SGLang 0.  The GB200's figure is not its Grace CPU's: GH200,",
    "the same Neoverse V2 Grace beside a Hopper GPU, fits 3.7 µs, so no host-CPU field on the hardware entry is",
    "called for; what else differs on the GB200 tray (one Grace per two GPUs, the 1.0 release) is not resolved.",
    "Held out, B200's 128/128 row (host-bound in-sample) goes +85 → +21 %; GB200's, whose page is the only",
    "GB200 evidence, falls to Blackwell's (B200's) 9.0 µs and goes +221 → +106 %.  H100 × TensorRT-LLM's",
    "bandwidth figure goes 0.660 → 0.673, B200's 0.38 → 0.45, GB200's 0.43 → 0.51 (the shortfall the host term",
    "now carries).  Tried first, one figure per engine family (5.6 µs): worst 139.9 %, rows over 40 % unchanged",
    "at 16, SGLang's rows pushed over 40 % by the H200 figure they borrow.  A per-hardware figure needs groups",
    "of two rows or more: a group of one row fits its own slope exactly and says nothing about t (with such",
    "groups H200 × vLLM held out by its llm-ie page fitted a t that left efficiency 1.0).",
    "",
    "**Decode-only and prompt steps apart (issue 13, speed10).**  An engine does not spread the prompts evenly over",
    "its decode steps: a step's token budget (max_num_batched_tokens; TensorRT-LLM's max_num_tokens, 8,192) goes to",
    "the B running requests' decode tokens first and the waiting prompts' chunks fill what is left (vLLM V1",
    "`vllm/v1/core/sched/scheduler.py` schedule(): \"First, schedule the RUNNING requests\", then the WAITING ones;",
    "TensorRT-LLM's in-flight batching the same within max_num_tokens).  B ÷ output requests arrive per step and each",
    "prompt takes ceil(input ÷ (budget − B)) steps, so a share f = least(1, B ÷ output × ceil(input ÷ (budget − B)))",
    "of the steps carries a prompt (`throughput_ceilings.prompt_step_share`) and is compute-bound on its FLOPs, while",
    "the others wait on the weights and the KV they read (`expected_mixed_step_s`, kvreg/sql/104_decode_step.sql).",
    "One greatest() over the average step had hidden the prompt's FLOPs under reads that run in other steps.  Worked",
    "by hand (tests/test_speed.py): Llama-3.3-70B fp8 on two H100s at 20,000/2,000, 24 requests, f = 0.036: ceiling",
    "971 → 704.5 tok/s, implied efficiency 0.43 → 0.59 (H100 TP 1 memory-bound rows: 0.70); f = 1 rows (a chunk every",
    "step: 128/128 at 2,048 requests, 1,000/1,000 at 1,012) do not move.  The TensorRT-LLM 20,000/2,000 rows (+42 %,",
    "+48 % held out) and SGLang's DeepSeek-R1 rows (+45 %) come under 40 %, the TPOT median error 17.9 → 14.9 %; every",
    "fitted figure moves a little (H200 × TensorRT-LLM bandwidth 0.636 → 0.618, H200 × vLLM 0.366 → 0.388), and so",
    "every plan's.  The earlier try (all prompts in steps of their own, f = 0: leave-one-source-out median 11.8 %, p90",
    "32.3 %) over-counted the short prompts that do ride in every step.  Checked and not adopted beside it: the token",
    "budget as a cap on the decode batch (B ≤ budget × output ÷ (input + output): 482 at 2,048/128) moves only the",
    "2,048/128 and 5,000/500 rows, whose compute does not depend on B, and no statistic by 0.1 %.",
    "",
    "**MI300X × vLLM (AMD's pages, 24 rows, TP 8, Llama 3.1 70B/405B fp8): the mechanism checked.**  Predicted from",
    "the NVIDIA-era prior (bandwidth 0.45 stated, compute pooled from TensorRT-LLM) they came out 33–98 % too fast",
    "(median 63 %).  Their implied efficiency is 0.23–0.33, flat across model, lengths and batch; the spread is the",
    "release (0.9 ≈ 0.29, 0.10/0.11 ≈ 0.25).  A per-step all-reduce latency (2 per layer, 20 µs each, spread over",
    "the batch of 500–3,200) is 1.0–2.9 % of each row's measured time per token (at 30 µs at most 4.4 %): at these",
    "batches every all-reduce",
    "is 16–100 MiB, above vLLM's 8 MiB custom all-reduce, so RCCL runs it in its bandwidth regime, which the",
    "all-reduce bytes term already models.  The xGMI links' usable 48 of 64 GB/s (AMD ROCm blog, 2025-03-02) with",
    "the rest at H200's TP-8 efficiency still over-predicts every row by 33–88 %.  With no vLLM row on NVIDIA and",
    "no TensorRT-LLM row on AMD the engine's share cannot be told from the hardware's, so the rows are fitted per",
    "hardware × engine family (MI300X × vLLM measured; MI325X derived through CDNA3; MI355X, CDNA4, keeps its",
    "stated figure) and an engine-level fit needs measurements on two architectures or more",
    "(kvreg/sql/252_speed_fit.sql).  Leave-one-source-out, the AMD rows' median error went 63.0 % → 11.5 % and",
    "the worst 98.1 % → 24.6 %.",
    "",
    "**The host roof, by mechanism.**  Only rows that show a host bound set it: a row whose series (same source,",
    "engine, hardware, model, precisions, input length) holds a row with more GPU work per request reaching more",
    "than twice its measured ÷ ceiling ratio, and which turns requests over fastest of its source on that engine",
    "× hardware.  Two rows do: Qwen3-30B-A3B nvfp4 at 128/128 on B200 (311 requests/s, 0.24× its 128/4,096",
    "ratio) and on GB200 behind Grace (188 requests/s, 0.14×).  A GPU-bound run's turnover says only that the",
    "host kept up, so it no longer caps anything: the vLLM Nemotron recipe, capped by the llm-ie DeepSeek-R1 run,",
    "went −91.9 % → +24.9 % left out, the MLPerf vLLM rows on H100 −20 % → −9 %, and SGLang's llm-ie rows (whose",
    "2,000-token TP-8 requests would have capped every SGLang replica at 1.6 requests/s) are fitted (H200 ×",
    "SGLang bandwidth 0.43 measured).  Cost: with the 1.0 page left out no other source shows TensorRT-LLM host-",
    "bound, so its two Blackwell 128/128 rows are predicted without a roof (+209 %, +430 %), and the RTX PRO 6000",
    "128/128 row (0.52×, inside the GPU-bound scatter) gets none either (kvreg/sql/252_speed_fit.sql).",
    "",
    "**Held out over 40 % (issue 13's bar), by what the rows share (speedho; speed10; speed11).**  13 of 511 rows,",
    "in six groups (the two tables below, generated); what each group's rows have in common and what the model",
    "misses.  (The bullets' figures are from before the host's per-sequence step time, speed11, except where they",
    "say so: with it the Qwen group is 4 rows, worst +106 %, and SGLang's rows stay under 40 %.)",
    "",
    "- *TensorRT-LLM × Qwen3-30B-A3B nvfp4 on B200 and GB200* (trtllm-perf-overview-1.0; 6 rows, worst +220 %).",
    "  The two 128/128 rows are host-bound in-sample; with the page left out no other source shows TensorRT-LLM",
    "  host-bound on Blackwell, so they are predicted on the GPUs alone (`predictable_held_out` false).  The host is",
    "  the likeliest mechanism: GB200 (the same GPU behind a Grace host) runs this small MoE at 0.61-0.84× B200",
    "  (x86 host) at six of the page's ten length pairs (0.96-1.09× at the other four), while the same page's",
    "  Llama-3.3-70B and 3.1-405B run 1.02-1.18× faster on GB200 at every pair; the same checkpoint reaches",
    "  0.57-0.71 of its ceiling on RTX PRO 6000 but 0.12-0.50 on Blackwell.  Not the batch cap: trtllm-bench",
    "  sets its own (tensorrt_llm/bench/build/tuning.py finetune_setting, for the quantisations it tunes: min(KV-",
    "  cache requests, 4096), rounded up; else its defaults or a predefined per-model config, by release), not",
    "  necessarily the LLM API's 2048 that registry/engines/trtllm-pytorch.yaml assumes, but at 4096 only the two",
    "  host-bound rows move, and worse (+220 → +257 %).  Missing: a citable TensorRT-LLM host time per step or",
    "  request (none found), so it stays unpredicted held out.  Checked (speed10), a host cost per sequence per",
    "  step (sampling, request bookkeeping in Python, ∝ B: step = greatest(GPU step, c·B), i.e. at most 1 ÷ c output",
    "  tok/s per replica): only this page shows its signature (output tok/s flat while the ceiling halves: B200",
    "  128/128 and 128/2,048 at 39,827 and 37,844 tok/s, ceilings 196k and 98k); no other source's row at a batch of",
    "  1,000 or more does.  The fastest of them on DGX B200 (0.20's Llama-3.3-70B TP 8 128/2,048, 31,174 tok/s at",
    "  2,048 requests, 0.33 of its ceiling, inside its TP-8 scatter 0.33-0.36) only bounds c below 32 µs; the page",
    "  itself implies 25 µs (B200) and 32-41 µs (GB200, Grace): a bound, not a figure, so no held-out prediction",
    "  can rest on it.  Not the backend either: the 0.20 and 1.0 pages both ran trtllm-bench on the PyTorch",
    "  backend (\"Starting with v0.19, testing was performed using the PyTorch backend\", perf-overview.md at",
    "  00f37686, \"Command Overview\"; 0.17 used the TensorRT engine flow), and on H200, where all three pages ran",
    "  the same models, the backends imply the same efficiencies (memory-bound 0.60, 0.60, 0.64, compute-bound 0.58,",
    "  0.55, 0.57 for 0.17, 0.20, 1.0): no split of the engine family by backend is called for.",
    "- *vLLM 0.8.4 × DeepSeek-R1 FP8 on 8× H200* (llm-ie; 2 rows, +73 %).  The 30,000/100 prefill-bound runs",
    "  (in_fit false; the entry's notes: implied compute 0.24), predicted at H200 × TensorRT-LLM's compute figure",
    "  (hardware_any 0.56) because vLLM has no fitted compute-bound Hopper row; their own ratio (0.32) is vLLM's",
    "  CDNA3 compute figure (0.33), which one architecture's rows may not carry (the engine level needs two).",
    "  SGLang's 30,000/100 and 10,000/500 rows came under 40 % with the prompt steps apart (speed10).  Missing:",
    "  a kernel-class efficiency per",
    "  engine release × precision — vLLM 0.8.4 runs DeepSeek-R1's block-FP8 linears on the Triton W8A8 block-FP8",
    "  GEMM and its experts on the Triton fused MoE (the run's log, the entry's notes), not the CUTLASS GEMMs of",
    "  the fitted rows — which needs measurements of those kernels the registry does not hold.",
    "- *TensorRT-LLM × Llama-3.3-70B / 3.1-405B FP8 on H100 at TP 2-8, memory-bound* (perf-overview 0.20, 1.0; 4",
    "  rows, +41 to +64 %).  H100 × TensorRT-LLM's bandwidth figure (0.66) is a median over 40 memory-bound TP 1",
    "  rows (implied median 0.70, 0.63-0.79) and 29 at TP 2-8 (median 0.53 at TP 2, 20 rows; 0.50 at TP 4; 0.46 at",
    "  TP 8): the shortfall grows with TP (H200 0.64 → 0.48, B200 0.43 → 0.33 the same way), which the all-reduce",
    "  bytes term does not carry, while compute-bound rows stay flat with TP (H200 0.57 at TP 1-8).  Ruled out: an",
    "  all-reduce latency (2 per layer × 80-126 layers × 10-20 µs = 1.6-5.0 ms of the 46-66 ms steps of these TP",
    "  rows), and GEMMs near their ridge (within one band of GEMM FLOP ÷ weight-read time, TP > 1 rows sit 0.12-0.23",
    "  below TP 1 rows on H100).  The TP mechanism is open.  (The 20,000/2,000 rows of this group came under 40 %",
    "  with the prompt steps apart, speed10.)",
    "- *TensorRT-LLM × Llama-2-70B nvfp4, GB200, MLPerf Interactive* (1 row, +46 %): 0.28 of its ceiling where",
    "  the same system's Server and Offline runs reach 0.47-0.53.  Its batch is Little's law over requests in",
    "  flight, prefills included, under TPOT p99 ≤ 40 ms; what the harness does to meet the bound (smaller",
    "  context chunks per step) is not modelled.  Not resolved.",
    "- *vLLM × Llama-2-70B FP8 on MI325X* (AMD's MLPerf v5.1, in_fit false; 2 rows, −40 %, −45 %), predicted at",
    "  CDNA3 × vLLM (0.30/0.31, AMD's TP-8 pages and Krai).  The same submission's MI300X rows imply 0.41-0.46 and",
    "  its MI325X rows 0.52-0.56 with the same peak FLOP/s in both hardware entries: the harness (AMD's MLPerf",
    "  scheduler) and a sustained clock under the board power (1,000 W against 750 W, the entries' tdp_w) are the",
    "  candidates; a sustained-clock figure with a source is missing.",
    "- *vLLM 0.19 × Llama-3.1-8B bf16 on H100* (the vLLM FP8-KV blog, 20,000/2,000 at 8 requests; −43 %): vLLM's",
    "  Hopper bandwidth figure (0.37) rests on MLA/MoE and hybrid models; this dense row implies 0.64.",
    "",
    "So the leave-one-source-out worst is 105.7 % (220.7 % before speed11) and 13 rows stay over 40 % (16): the",
    "largest are the GB200's host time, which only its own page shows, and kernel-class efficiencies kvreg has no",
    "cited figure for; no constant was typed in to reach the bar.",
    "",
    "**Leave-one-architecture-out: does a figure carry to a generation kvreg has not seen?**  Every row of one",
    "architecture family is left out and predicted as an unmeasured device is: the hardware entry's stated bandwidth",
    "efficiency (0.45 on every NVIDIA and AMD GPU entry), compute from the engine level or the pool.  Median 27.0 %,",
    "p90 42.6 %, worst 224 % (leaving one source out: 10.5 / 31.7 / 106 %).  With the carried bandwidth figure (the",
    "engine level, measured on two architectures or more, else the pool) in place of the stated one: 25.5 / 59.1 /",
    "321 % — better on Ada, Ampere, Blackwell GDDR and Hopper × TensorRT-LLM, worse on Blackwell (23.0 → 41.2 %) and",
    "CDNA3 (53.6 → 65.9 %) (table below).  The carried figure does not predict an unseen generation better than the stated",
    "one, so a device without measurements keeps its entry's stated figure (MI355X: 0.45 estimated; B300 and GB300",
    "take Blackwell's measured figure through their architecture, derived).",
    "",
    "**A fixed per-step term, fitted and checked (`speed_step_fit`, kvreg/sql/256_speed_step_fit.sql).**  Achieved",
    "bandwidth falls as bandwidth rises, the signature of a time per step that faster memory does not shrink.  Fitted",
    "in SQL as 1 ÷ measured = step at efficiency 1 ÷ efficiency + t · layers ÷ batch (efficiency per architecture, t",
    "shared by an engine family's architectures).  TensorRT-LLM's rows ask for t = 42 µs (memory-bound rows) and",
    "166 µs (compute-bound) per layer per step (51 and 169 µs before the prompt steps were costed apart, speed10; 104",
    "and 189 µs before its batch was sized on its own pool, speed7),",
    "which the runs with a stated batch allow (fixed time plus roofline at efficiency 1 at most 0.68 and 0.92 of a",
    "measured step), but the generations stay apart with it: bandwidth efficiency Blackwell 0.41 → 0.43 against",
    "Hopper 0.63 → 0.67.",
    "vLLM's and SGLang's rows ask for none (t = 0) since speed12's batch; their 214 / 208 µs before were the median",
    "batch's 1/batch, and the vLLM FP8-KV blog's Llama-3.1-8B at 8 requests on H100 refuted them (6.8 + 13.0 ms for",
    "a step measured at 17.8 ms, 1.11×).  Leave-one-architecture-out with the",
    "family's pooled figure at the binding roof the term takes the median error 18.7 → 16.8 %, the worst 446 → 374 %",
    "(table below):",
    "less than the spread between generations, and it would put tens of launches' time (a launch costs microseconds;",
    "vLLM replays one CUDA graph per decode batch up to 512 sequences, vllm 0.19.0 config/compilation.py:571-573,",
    ":640-646) on every small-batch plan.  So the decode step (`expected_step_s`, `expected_class_step_s`,",
    "`decode_step_s`), roofline and plans carry no fixed term per layer per step; they do carry the host's time per",
    "sequence per step (above: B·t per step, a time per output token the data identify per device).",
    "",
]


def render_speed(con, fmt: str = "table", heading: bool = True, progress=None) -> str:
    """The speed calibration report as a terminal table, Markdown (docs/calibration.md's section) or JSON;
    ``progress`` as for :func:`speed_report`."""
    rep = speed_report(con, progress)
    if fmt == "json":
        return json.dumps(rep, indent=2, default=float)
    if fmt == "markdown":
        out = list(MD_INTRO) if heading else []
        for title, header, rows in _tables(rep, with_rows=True):
            out += [f"### {title}", "", _md(header, rows), ""]
        return "\n".join(out)
    return "\n\n".join(f"{title}\n{_text(header, rows)}" for title, header, rows in _tables(rep, with_rows=False))
