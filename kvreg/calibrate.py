"""``kvreg calibrate``: every observation beside the prediction, and the error per engine release and overall.

The arithmetic is in the ``calibration`` and ``calibration_summary`` views (kvreg/sql/230, 231);
this module only renders them: a terminal table, Markdown (docs/calibration.md is
``kvreg calibrate --format markdown``) or JSON (shape in :data:`JSON_SHAPE`, stable: keys are only
ever added).  Views hold bytes; the table and Markdown print GiB (2^30 bytes) by name.
"""

from __future__ import annotations

import json
import math

GIB = 2 ** 30

COLUMNS = [  # (view column, header, format)
    ("observation_id", "observation", "s"), ("engine_id", "engine", "s"), ("served_id", "model", "s"),
    ("hardware_id", "hardware", "s"), ("tp", "tp", "d"), ("max_model_len", "max_model_len", "d"),
    ("logged_tokens", "logged tokens", "d"), ("block_tokens", "(a) from logged memory", "d"),
    ("block_error_pct", "(a) error %", "p"), ("block_within_rounding", "(a) within print rounding", "b"),
    ("implied_concurrency", "concurrency at implied blocks", "f"), ("logged_concurrency", "logged concurrency", "f"),
    ("e2e_tokens", "(b) end to end", "d"), ("e2e_error_pct", "(b) error %", "p"),
    ("e2e_concurrency_error_pct", "(b) concurrency error %", "p"),
    ("e2e_available_error_bytes", "(b) available error GiB", "g"), ("missing", "not reproduced: why", "s"),
]
BUDGET = [  # per observation: each budget line the log prints, predicted − logged
    ("observation_id", "observation", "s"), ("logged_weights_bytes", "weights GiB (log)", "G"),
    ("weights_error_bytes", "weights error", "g"), ("logged_activation_bytes", "activation peak GiB (log)", "G"),
    ("activation_error_bytes", "activation error", "g"), ("logged_non_torch_bytes", "non-torch GiB (log)", "G"),
    ("non_torch_error_bytes", "non-torch error", "g"), ("logged_cuda_graph_bytes", "CUDA graph GiB (log)", "G"),
    ("cuda_graph_error_bytes", "CUDA graph error", "g"),
    ("logged_cuda_graph_estimated_bytes", "CUDA graph estimate GiB (log)", "G"),
    ("cuda_graph_estimate_error_bytes", "CUDA graph estimate error", "g"), ("logged_non_kv_bytes", "non-KV GiB (log)", "G"),
    ("non_kv_error_bytes", "non-KV error", "g"), ("e2e_available_error_bytes", "available error", "g"),
]
SUMMARY = [("engine_id", "engine", "s"), ("observations", "observations", "d"),
           ("not_reproducible", "not reproducible", "d"), ("block_checked", "(a) checked", "d"),
           ("block_within_rounding", "(a) within rounding", "d"),
           ("block_median_abs_error_pct", "(a) tokens median abs error %", "a"),
           ("block_worst_abs_error_pct", "(a) tokens worst abs error %", "a"),
           ("block_concurrency_median_abs_error_pct", "(a) concurrency median abs error %", "a"),
           ("block_concurrency_worst_abs_error_pct", "(a) concurrency worst abs error %", "a"),
           ("e2e_checked", "(b) checked", "d"),
           ("e2e_median_abs_error_pct", "(b) tokens median abs error %", "a"),
           ("e2e_worst_abs_error_pct", "(b) tokens worst abs error %", "a"),
           ("e2e_concurrency_median_abs_error_pct", "(b) concurrency median abs error %", "a"),
           ("e2e_concurrency_worst_abs_error_pct", "(b) concurrency worst abs error %", "a"),
           ("available_median_abs_error_bytes", "(b) available median abs error GiB", "G"),
           ("available_worst_abs_error_bytes", "(b) available worst abs error GiB", "G")]
SUMMARY_BUDGET = [("engine_id", "engine", "s"), ("requested_median_abs_error_bytes", "requested median", "G"),
                  ("weights_median_abs_error_bytes", "weights median", "G"),
                  ("weights_worst_abs_error_bytes", "weights worst", "G"),
                  ("activation_median_abs_error_bytes", "activation median", "G"),
                  ("activation_worst_abs_error_bytes", "activation worst", "G"),
                  ("non_torch_median_abs_error_bytes", "non-torch median", "G"),
                  ("non_torch_worst_abs_error_bytes", "non-torch worst", "G"),
                  ("cuda_graph_median_abs_error_bytes", "CUDA graph median", "G"),
                  ("cuda_graph_worst_abs_error_bytes", "CUDA graph worst", "G"),
                  ("cuda_graph_estimate_median_abs_error_bytes", "CUDA graph estimate median", "G"),
                  ("cuda_graph_estimate_worst_abs_error_bytes", "CUDA graph estimate worst", "G"),
                  ("non_kv_median_abs_error_bytes", "non-KV median", "G"),
                  ("non_kv_worst_abs_error_bytes", "non-KV worst", "G")]

JSON_OBSERVATION_KEYS = [
    "observation_id", "engine_id", "engine_version", "model_id", "served_id", "hardware_id", "tp", "pp", "kv_dtype",
    "weights_dtype", "max_model_len", "reproducible", "missing", "logged_tokens", "logged_concurrency",
    "logged_available_kv_bytes", "block_tokens", "block_tokens_low", "block_tokens_high", "block_within_rounding",
    "block_error_pct", "block_concurrency", "block_concurrency_error_pct", "usable_bytes", "gpu_memory_utilization",
    "weights_bytes", "reserve_bytes", "e2e_activation_bytes", "e2e_non_torch_bytes", "e2e_cuda_graph_bytes",
    "e2e_available_kv_bytes",
    "e2e_available_error_bytes", "e2e_tokens", "e2e_error_pct", "e2e_concurrency", "e2e_concurrency_error_pct",
    "logged_requested_bytes", "requested_error_bytes", "logged_weights_bytes", "weights_error_bytes",
    "logged_activation_bytes", "activation_error_bytes", "logged_non_torch_bytes", "non_torch_error_bytes",
    "logged_cuda_graph_bytes", "cuda_graph_error_bytes", "logged_non_kv_bytes", "non_kv_error_bytes",
    "e2e_cuda_graph_estimate_bytes", "logged_cuda_graph_estimated_bytes", "cuda_graph_estimate_error_bytes"]
JSON_SHAPE = """\
`kvreg calibrate --format json` prints one object (keys are only ever added, never renamed):

```
{"format": "kvreg-calibration", "version": 1,
 "units": {"*_pct": "% of the logged figure", "*_bytes": "bytes", "*_tokens": "tokens"},
 "summary": [{"engine_id": str | null, "overall": bool, "observations": int, ... every column of the
              calibration_summary view (docs/sql.md)}],
 "observations": [{"observation_id": str, ... the calibration columns listed below}]}
```

`summary` has one row per release (`overall: false`; `engine_id: null` is "release not determined") and
one row with `overall: true` over every observation.  Observation keys: """ + ", ".join(
    f"`{k}`" for k in JSON_OBSERVATION_KEYS) + ". A figure kvreg cannot compute is `null`."


def _cell(v, kind: str) -> str:
    if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
        return ""
    if kind == "d":
        return f"{int(v):,}"
    if kind == "f":
        return f"{v:,.2f}"
    if kind == "p":
        return f"{v:+.2f}"
    if kind == "a":
        return f"{v:.2f}"
    if kind == "G":
        return f"{v / GIB:.2f}"
    if kind == "g":
        return f"{v / GIB:+.2f}"
    if kind == "b":
        return "yes" if v else "no"
    return str(v)


def _query(con, sql: str, cols) -> list[list[str]]:
    rows = con.execute(sql).fetchall()
    return [[_cell(v, kind) for v, (_, _, kind) in zip(r, cols)] for r in rows]


_SUMMARY_ORDER = " FROM calibration_summary ORDER BY overall, engine_id NULLS LAST"
_ENGINE_LABEL = ("CASE WHEN overall THEN '(all releases)' ELSE coalesce(engine_id, '(release not determined)') END")


def calibration_tables(con, progress=None) -> dict[str, list[list[str]]]:
    """Formatted cells: ``summary`` and ``budget_summary`` (per release, then all releases),
    ``observations`` and ``budget`` (per observation, sorted by id; budget only where the log has a line).

    ``progress`` (optional): called with a short message before the prediction of every observation (the
    ``calibration`` view's engine grid, the slow step: about a minute of CPU on the shipped registry)."""
    if progress:
        progress("predicting every observation's startup (the calibration view)")
    obs = _query(con, "SELECT " + ", ".join(c for c, _, _ in COLUMNS) + " FROM calibration ORDER BY observation_id",
                 COLUMNS)
    budget = _query(con, "SELECT " + ", ".join(c for c, _, _ in BUDGET) + " FROM calibration WHERE "
                    "coalesce(logged_weights_bytes, logged_activation_bytes, logged_non_torch_bytes, "
                    "logged_cuda_graph_bytes, logged_cuda_graph_estimated_bytes, logged_non_kv_bytes) IS NOT NULL "
                    "ORDER BY observation_id", BUDGET)
    summ = _query(con, f"SELECT {_ENGINE_LABEL}, " + ", ".join(c for c, _, _ in SUMMARY[1:]) + _SUMMARY_ORDER,
                  SUMMARY)
    bsumm = _query(con, f"SELECT {_ENGINE_LABEL}, " + ", ".join(c for c, _, _ in SUMMARY_BUDGET[1:])
                   + _SUMMARY_ORDER, SUMMARY_BUDGET)
    return {"summary": summ, "budget_summary": bsumm, "observations": obs, "budget": budget}


def _jsonable(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item"):  # numpy / decimal scalars
        return v.item()
    return v


def calibration_json(con, progress=None) -> dict:
    """The calibration as plain data (shape: :data:`JSON_SHAPE`; bytes, tokens, %); ``progress`` as for
    :func:`calibration_tables`."""
    if progress:
        progress("predicting every observation's startup (the calibration view)")
    def rows(sql):
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [{k: _jsonable(v) for k, v in zip(names, r)} for r in cur.fetchall()]

    return {"format": "kvreg-calibration", "version": 1,
            "units": {"*_pct": "% of the logged figure", "*_bytes": "bytes", "*_tokens": "tokens"},
            "summary": rows("SELECT *" + _SUMMARY_ORDER),
            "observations": rows("SELECT " + ", ".join(JSON_OBSERVATION_KEYS)
                                 + " FROM calibration ORDER BY observation_id")}


def _text(header, rows) -> str:
    table = [header] + rows
    widths = [max(len(t[i]) for t in table) for i in range(len(header))]
    out = []
    for i, t in enumerate(table):
        out.append("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(t, widths))).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def _md(header, rows) -> str:
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render(con, fmt: str = "table", progress=None) -> str:
    """The calibration report: summaries per release and overall, then every observation.

    Args:
        con: a DuckDB connection to a built kvreg database.
        fmt: ``table`` (terminal), ``markdown`` (docs/calibration.md) or ``json`` (:data:`JSON_SHAPE`).
        progress: optional callable given a short message before each slow step (the CLI's
            :func:`kvreg.cli.progress`: stderr only, never in the output).
    """
    if fmt == "json":
        return json.dumps(calibration_json(con, progress), indent=1)
    t = calibration_tables(con, progress)
    heads = {k: [h for _, h, _ in cols] for k, cols in
             (("summary", SUMMARY), ("budget_summary", SUMMARY_BUDGET), ("observations", COLUMNS), ("budget", BUDGET))}
    if fmt == "markdown":
        return "\n".join([
            "# Calibration: kvreg's engine predictions against real vLLM startup logs", "",
            "Generated by `kvreg calibrate --format markdown > docs/calibration.md`; do not edit by hand.", "",
            "(a) block arithmetic given the logged \"Available KV cache memory\" (printed with two decimals, so",
            "exact only up to that rounding); (b) end to end from the hardware entry, registry weights, the",
            "release's util default (or the logged setting) and its reserve model.  Errors are predicted − logged:",
            "tokens and concurrency in % of the logged \"GPU KV cache size\" and \"Maximum concurrency\", memory in",
            "GiB (2^30 bytes).  Sources: registry/observations/*.yaml.", "",
            "## Per engine release", "", _md(heads["summary"], t["summary"]), "",
            "## Budget lines per engine release", "",
            "Median and worst |predicted − logged| in GiB of each line of the memory budget the logs print",
            "(`worker requested memory`, weights, `torch peak memory increase`, `non-torch forward increase",
            "memory`, CUDA graph memory taken, `Total non KV cache memory`), so a reader sees which term misses.",
            "kvreg's CUDA-graph term is what the release subtracts before sizing the pool: vLLM 0.19 subtracts",
            "none by default (vllm/v1/worker/gpu_worker.py:395-420 applies the estimate only with",
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, as the logs' own hint says), so there the error is minus",
            "the graphs taken, and the non-KV line (weights + activation + non-torch) is the one that sizes the pool.",
            "",
            _md(heads["budget_summary"], t["budget_summary"]), "",
            "## Observations", "", _md(heads["observations"], t["observations"]), "",
            "## Budget lines per observation (GiB; errors predicted − logged)", "",
            _md(heads["budget"], t["budget"]), "",
            "## JSON", "", JSON_SHAPE, ""])
    return ("Per engine release\n" + _text(heads["summary"], t["summary"])
            + "\n\nBudget lines per engine release (|predicted − logged|, GiB)\n"
            + _text(heads["budget_summary"], t["budget_summary"])
            + "\n\nObservations\n" + _text(heads["observations"], t["observations"])
            + "\n\nBudget lines per observation (GiB; errors predicted − logged)\n"
            + _text(heads["budget"], t["budget"]))
