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
    "e2e_cuda_graph_estimate_bytes", "logged_cuda_graph_estimated_bytes", "cuda_graph_estimate_error_bytes",
    "weights_bytes_per_rank"]
# JSON keys kept under their first name (keys are never renamed, docs/json.md) whose view column was renamed:
# ``weights_bytes`` was the calibration's weights per rank; the view calls it weights_bytes_per_rank (one meaning
# per name: model_weights.weights_bytes is the whole model), and the JSON carries both keys, the same figure.
JSON_KEPT_KEYS = {"weights_bytes": "weights_bytes_per_rank"}
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
    f"`{k}`" for k in JSON_OBSERVATION_KEYS) + (". A figure kvreg cannot compute is `null`. `weights_bytes` is"
    " `weights_bytes_per_rank` under its first name (kept: keys are never renamed): the weights one rank holds.")


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


class _CalibrationOnce:
    """Evaluate the ``calibration`` view once for the queries of one render (a context manager).

    The view runs the engine grid for every observation (about 7 s of CPU on the shipped registry); the
    observations, the budget lines and ``calibration_summary`` (which reads ``calibration``) would each
    evaluate it again, four times in a text or Markdown render.  A TEMP table of the same name holds the rows
    once: DuckDB resolves a name to the temp catalog before ``main``, so the summary view reads the held rows
    and its SQL stays the one definition (kvreg/sql/231).  The table is dropped on exit, so the connection
    is as it was; a read-only connection can hold it (temp objects live in memory).
    """

    def __init__(self, con, progress=None):
        self.con, self.progress = con, progress

    def __enter__(self):
        if self.progress:
            self.progress("predicting every observation's startup (the calibration view)")
        self.con.execute("CREATE OR REPLACE TEMP TABLE calibration AS SELECT * FROM main.calibration")
        return self.con

    def __exit__(self, *exc):
        self.con.execute("DROP TABLE IF EXISTS temp.calibration")
        return False


def calibration_tables(con, progress=None) -> dict[str, list[list[str]]]:
    """Formatted cells: ``summary`` and ``budget_summary`` (per release, then all releases),
    ``observations`` and ``budget`` (per observation, sorted by id; budget only where the log has a line).

    ``progress`` (optional): called with a short message before the prediction of every observation (the
    ``calibration`` view's engine grid, the slow step: about a minute of CPU on the shipped registry)."""
    with _CalibrationOnce(con, progress):
        return _tables(con)


def _tables(con) -> dict[str, list[list[str]]]:
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
    def rows(sql):
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [{k: _jsonable(v) for k, v in zip(names, r)} for r in cur.fetchall()]

    with _CalibrationOnce(con, progress):
        return {"format": "kvreg-calibration", "version": 1,
                "units": {"*_pct": "% of the logged figure", "*_bytes": "bytes", "*_tokens": "tokens"},
                "summary": rows("SELECT *" + _SUMMARY_ORDER),
                "observations": rows("SELECT " + ", ".join(f"{JSON_KEPT_KEYS[k]} AS {k}" if k in JSON_KEPT_KEYS
                                                           else k for k in JSON_OBSERVATION_KEYS)
                                     + " FROM calibration ORDER BY observation_id")}


def _text(header, rows, wrap: int = 10) -> str:
    """A terminal table: the first column left-aligned, the rest right-aligned; a header longer than its
    column (and than ``wrap``) is wrapped over several lines, so long names do not widen the table."""
    import textwrap

    widths = [max([len(r[i]) for r in rows] + [min(len(h), wrap), max(map(len, h.split()), default=0)])
              for i, h in enumerate(header)]
    heads = [textwrap.wrap(h, w) or [""] for h, w in zip(header, widths)]
    depth = max(map(len, heads))
    heads = [[""] * (depth - len(h)) + h for h in heads]   # bottom-aligned over the rule

    def line(cells):
        return "  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line([h[k] for h in heads]) for k in range(depth)]
    out.append("  ".join("-" * w for w in widths))
    return "\n".join(out + [line(r) for r in rows])


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
    return _render_text(t)


# The terminal table keeps the columns a reader scans (every column: --format markdown or json).  Names are
# view columns of the lists above, so each header is written once; a pair is "logged (error)" in one cell.
TEXT_SUMMARY = ["engine_id", "observations", "block_checked", "block_worst_abs_error_pct", "e2e_checked",
                "e2e_median_abs_error_pct", "e2e_worst_abs_error_pct", "available_worst_abs_error_bytes"]
TEXT_BUDGET_SUMMARY = ["engine_id", "weights_worst_abs_error_bytes", "activation_worst_abs_error_bytes",
                       "non_torch_worst_abs_error_bytes", "cuda_graph_worst_abs_error_bytes",
                       "non_kv_median_abs_error_bytes", "non_kv_worst_abs_error_bytes"]
TEXT_COLUMNS = ["observation_id", "engine_id", "tp", "logged_tokens", "block_error_pct", "e2e_tokens",
                "e2e_error_pct", "e2e_available_error_bytes"]
TEXT_BUDGET = [("weights", "logged_weights_bytes", "weights_error_bytes"),
               ("activation peak", "logged_activation_bytes", "activation_error_bytes"),
               ("non-torch", "logged_non_torch_bytes", "non_torch_error_bytes"),
               ("CUDA graph", "logged_cuda_graph_bytes", "cuda_graph_error_bytes"),
               ("non-KV", "logged_non_kv_bytes", "non_kv_error_bytes")]
TEXT_WIDTH = 120   # the widest line the terminal table prints (tests/test_calibrate.py checks it)


def _pick(cols, rows, names):
    """The header and cells of ``names`` (view columns of ``cols``), in that order."""
    at = {c: i for i, (c, _, _) in enumerate(cols)}
    return [cols[at[n]][1] for n in names], [[r[at[n]] for n in names] for r in rows]


def _render_text(t) -> str:
    """The compact terminal form of :func:`render` (each line at most :data:`TEXT_WIDTH` characters but the
    wrapped reasons' long words): per-release summaries, then per observation the token figures and each
    budget line as ``logged (error)`` GiB, then why each observation not reproduced is not."""
    import textwrap

    at = {c: i for i, (c, _, _) in enumerate(BUDGET)}
    budget_head = ["observation"] + [f"{name} GiB: log (error)" for name, _, _ in TEXT_BUDGET] + ["available error"]
    budget = [[r[0]] + [" ".join([r[at[log]]] + [f"({r[at[err]]})"] * bool(r[at[err]])) if r[at[log]] else ""
                        for _, log, err in TEXT_BUDGET]
              + [r[at["e2e_available_error_bytes"]]] for r in t["budget"]]
    missing = [c for c, _, _ in COLUMNS].index("missing")
    why = [textwrap.fill(f"{r[0]}: {r[missing]}", TEXT_WIDTH, initial_indent="  ", subsequent_indent="    ")
           for r in t["observations"] if r[missing]]
    return "\n".join([
        "Per engine release (errors predicted − logged: tokens in %, memory in GiB (2^30 bytes))",
        _text(*_pick(SUMMARY, t["summary"], TEXT_SUMMARY)), "",
        "Budget lines per engine release (|predicted − logged|, GiB)",
        _text(*_pick(SUMMARY_BUDGET, t["budget_summary"], TEXT_BUDGET_SUMMARY)), "",
        "Observations ((a) from the logged memory, (b) end to end)",
        _text(*_pick(COLUMNS, t["observations"], TEXT_COLUMNS)), "",
        "Budget lines per observation (GiB as logged, and predicted − logged)",
        _text(budget_head, budget), "",
        "Not reproduced, and why", *why, "",
        "Every column (concurrency, print rounding, the CUDA graph estimate, each budget line's median):",
        "  --format markdown (docs/calibration.md) or --format json."])
