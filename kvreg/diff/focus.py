"""The default (focused) comparison: the figures reports use, on scenarios a reviewer cares about.

Each :class:`FocusSpec` is one SELECT over a view of one side (``{db}`` is the
attached database, an identifier chosen by the diff, never a value) that keeps
only meaningful scenarios:

* contexts within the model's native context (``within_native`` /
  ``max_model_len ≤ native_context_tokens``);
* weights dtypes the accelerator runs natively (``hardware_precisions``), or,
  for an accelerator that lists none, the dtypes the model is published in
  (``checkpoints``), bf16 for a model that lists no checkpoint;
* engine_capacity at the release's default ``max_num_batched_tokens``;
* roofline decode rate at batch 1 and at the capacity limit (the largest batch
  on the ``batch_sizes`` axis that fits, ``batch_fits``; batch 0 and no rate when
  none fits), not all 11 batches.

Two kinds of scenario row are computed but left out of the moves shown, with the count said (column
``__left_out``, :data:`LEFT_OUT`): a speculative-decoding draft head alone (``models.draft_for``: ``kvreg plan``
and ``kvreg fit`` refuse it, kvreg/fit.py ``check_servable``), and a TP size the planner refuses whatever the
workload (the ``tp_planned`` macro, kvreg/sql/117, the one ``plans`` uses: heads that do not split, or a group
wider than the interconnect domain), both read from the side's ``plan_scope`` view (kvreg/sql/118).  Their one-layer heads and 16-device groups were the largest moves.

The entity filter (``{entity}``: ``v.model_id IN (?, …)`` etc.) sits inside
each SELECT so DuckDB filters the base tables before the views' joins; one
SELECT runs per touched entry group and the results are UNIONed.  The column
``__fit`` is what says the weights fit (> 0); a scenario is compared only when
it is > 0 on at least one side, so the −898 % of a pool that was already
negative never shows.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class FocusSpec:
    """One view's focused SELECT: its key columns, figures, and the SQL template."""

    view: str
    keys: tuple[str, ...]
    figures: tuple[str, ...]
    sql: str  # placeholders {db} (attached database) and {entity} (the touched-entry predicate)


_WEIGHTS_DEFAULT = (
    "(v.weights_dtype IN (SELECT p.dtype FROM {db}.hardware_precisions p WHERE p.hardware_id = v.hardware_id) "
    "OR (NOT EXISTS (SELECT 1 FROM {db}.hardware_precisions p WHERE p.hardware_id = v.hardware_id) "
    "AND (v.weights_dtype IN (SELECT c.weights_dtype FROM {db}.checkpoints c WHERE c.model_id = v.model_id "
    "AND c.listed) OR (v.weights_dtype = 'bf16' AND NOT EXISTS (SELECT 1 FROM {db}.checkpoints c "
    "WHERE c.model_id = v.model_id AND c.listed)))))"
)

# The scenarios the focus keeps, on any view with the capacity grid's axes (capacity, roofline): the
# definition.  The templates below apply it as a semi join on `__focus_weights` (_NATIVE_WEIGHTS, the same
# set as a small per-side table) instead: DuckDB unnests these correlated subqueries with a delim join that
# buffers the whole unfiltered view (benchmarks/README.md, "kvreg diff"); tests/test_diff_views.py checks
# both give the same rows.
_KEPT = "v.within_native AND " + _WEIGHTS_DEFAULT

# (hardware_id, model_id, weights_dtype) that _WEIGHTS_DEFAULT accepts, for every accelerator and every model
# or served-set id of the side: the accelerator's native dtypes for any model, else the model's listed
# checkpoint dtypes, else bf16.  A few thousand rows, built once per side (native_weights_table).
_NATIVE_WEIGHTS = (
    "CREATE OR REPLACE TABLE {db}.__focus_weights AS "
    "WITH ids AS (SELECT model_id FROM {db}.models UNION SELECT served_id FROM {db}.served_models), "
    "listed AS (SELECT i.model_id, c.weights_dtype, c.weights_dtype IS NOT NULL AS has FROM ids i "
    "JOIN {db}.checkpoints c ON c.model_id = i.model_id AND c.listed) "
    "SELECT DISTINCT p.hardware_id, i.model_id, p.dtype AS weights_dtype FROM {db}.hardware_precisions p CROSS JOIN ids i "
    "UNION SELECT h.hardware_id, i.model_id, CASE WHEN l.model_id IS NULL THEN 'bf16' ELSE l.weights_dtype END "
    "FROM {db}.hardware h CROSS JOIN ids i LEFT JOIN listed l ON l.model_id = i.model_id "
    "WHERE h.hardware_id NOT IN (SELECT p.hardware_id FROM {db}.hardware_precisions p WHERE p.hardware_id IS NOT NULL) "
    "AND (l.model_id IS NULL OR l.has)"
)

# The same test as _WEIGHTS_DEFAULT, as a semi join (the template's FROM clause, after the view as `v`).
_NATIVE_JOIN = ("SEMI JOIN {db}.__focus_weights w ON w.hardware_id = v.hardware_id AND w.model_id = v.model_id "
                "AND w.weights_dtype = v.weights_dtype")

# Why a focused row is left out of the moves shown (NULL: shown), written once for every template below: the
# side's plan_scope view (kvreg/sql/118: draft heads, and the tp_planned macro plans refuses TP sizes with), joined
# after the view as `v` (a view binds its macros inside its own database; a macro called across databases would
# not).  LEFT: a scenario plan_scope has no row for is shown.
LEFT_OUT = {"draft_head": "on draft heads (speculative-decoding drafts, which kvreg plan refuses alone)",
            "tp_refused": "at TP sizes kvreg plan refuses (heads that do not split, or wider than the interconnect"
                          " domain)"}
_LEFT_OUT_JOIN = (" LEFT JOIN {db}.plan_scope lo ON lo.model_id = v.model_id AND lo.hardware_id = v.hardware_id"
                  " AND lo.tp = v.tp ")
_LEFT_OUT = ("CASE WHEN lo.draft_head THEN 'draft_head' WHEN NOT lo.tp_planned THEN 'tp_refused' END AS __left_out")

# The largest batch of the axis that fits (≤ max_seqs), 1 when none does or max_seqs is NULL.
_CAPACITY_BATCH = "coalesce(list_max(list_filter({batches}, lambda x: x <= v.max_seqs)), 1)"

_SCENARIO = ("model_id", "hardware_id", "engine_id", "weights_dtype", "kv_dtype", "tp", "context_tokens")

FOCUS: dict[str, FocusSpec] = {
    "capacity": FocusSpec(
        "capacity", _SCENARIO, ("max_seqs", "naive_max_seqs"),
        "SELECT v.model_id, v.hardware_id, v.engine_id, v.weights_dtype, v.kv_dtype, v.tp, v.context_tokens, "
        "v.max_seqs, v.naive_max_seqs, v.pool_bytes AS __fit, " + _LEFT_OUT + " FROM {db}.capacity v " +
        _NATIVE_JOIN + _LEFT_OUT_JOIN + " WHERE {entity} AND v.within_native"),
    "engine_capacity": FocusSpec(
        "engine_capacity", ("model_id", "hardware_id", "engine_id", "weights_dtype", "kv_dtype", "tp",
                            "max_model_len"), ("admitted_seqs", "logged_kv_tokens"),
        "SELECT v.model_id, v.hardware_id, v.engine_id, v.weights_dtype, v.kv_dtype, v.tp, v.max_model_len, "
        "v.admitted_seqs, v.logged_kv_tokens, v.available_kv_bytes AS __fit, " + _LEFT_OUT +
        " FROM {db}.engine_capacity v "
        "LEFT JOIN {db}.models m ON m.model_id = v.model_id " + _NATIVE_JOIN + _LEFT_OUT_JOIN +
        " WHERE {entity} AND v.default_batched "
        "AND v.max_model_len <= coalesce(m.native_context_tokens, v.max_model_len)"),
    # The decode rate at batch 1 and at the largest batch that fits (labelled by `at`; `batch` says which).
    # When no batch fits, the capacity row is kept with batch 0 and no rate, so "no longer fits" shows
    # as a change rather than as a removed scenario.
    # The capacity row is the largest batch of the axis ≤ max_seqs (batch_fits is batch ≤ max_seqs, 260),
    # else batch 1; `{batches}` is the side's batch_sizes axis as a literal list, so that test reads only
    # the row's own batch and max_seqs and DuckDB filters the batch axis before the view's arithmetic
    # (a subquery there would compute all 11 batches first: 3× the time).
    "roofline": FocusSpec(
        "roofline", _SCENARIO + ("at",), ("batch", "decode_tok_per_s"),
        "SELECT v.model_id, v.hardware_id, v.engine_id, v.weights_dtype, v.kv_dtype, v.tp, v.context_tokens, "
        "CASE WHEN r.which = 1 THEN 'batch 1' ELSE 'capacity' END AS \"at\", "
        "CASE WHEN r.which = 1 OR v.batch_fits THEN v.batch ELSE 0 END AS batch, "
        "CASE WHEN r.which = 1 OR v.batch_fits THEN v.decode_tok_per_s END AS decode_tok_per_s, "
        "v.max_seqs AS __fit, v.__left_out "
        "FROM (SELECT v.*, " + _LEFT_OUT + " FROM {db}.roofline v " + _NATIVE_JOIN + _LEFT_OUT_JOIN +
        " WHERE {entity} AND v.within_native"
        " AND (v.batch = 1 OR v.batch = " + _CAPACITY_BATCH + ")) v "
        "JOIN (VALUES (1), (2)) r(which) "
        "ON CASE WHEN r.which = 1 THEN v.batch = 1 ELSE v.batch = " + _CAPACITY_BATCH + " END"),
    # What the same two roofline rows cost (270: a costs row is its roofline row priced by hardware_peaks), so a
    # price edit shows the cost figures it moves.  costs carries no within_native: the model's native context
    # is read as 015 defines within_native (context ≤ native_context_tokens; no native context: not kept).
    "costs": FocusSpec(
        "costs", _SCENARIO + ("at",), ("usd_per_million_output_tokens", "usd_per_concurrent_seq_month"),
        "SELECT v.model_id, v.hardware_id, v.engine_id, v.weights_dtype, v.kv_dtype, v.tp, v.context_tokens, "
        "CASE WHEN r.which = 1 THEN 'batch 1' ELSE 'capacity' END AS \"at\", "
        "CASE WHEN r.which = 1 OR v.batch_fits THEN v.usd_per_million_output_tokens END "
        "AS usd_per_million_output_tokens, "
        "CASE WHEN r.which = 1 OR v.batch_fits THEN v.usd_per_concurrent_seq_month END "
        "AS usd_per_concurrent_seq_month, "
        "v.max_seqs AS __fit, v.__left_out "
        "FROM (SELECT v.*, " + _LEFT_OUT + " FROM {db}.costs v JOIN {db}.models m ON m.model_id = v.model_id " +
        _NATIVE_JOIN + _LEFT_OUT_JOIN +
        " WHERE {entity} AND v.context_tokens <= m.native_context_tokens"
        " AND (v.batch = 1 OR v.batch = " + _CAPACITY_BATCH + ")) v "
        "JOIN (VALUES (1), (2)) r(which) "
        "ON CASE WHEN r.which = 1 THEN v.batch = 1 ELSE v.batch = " + _CAPACITY_BATCH + " END"),
}


def focus_sql(con, spec: FocusSpec, alias: str, entity: str) -> str:
    """``spec``'s SELECT on side ``alias`` (an attached database) with the touched-entry predicate ``entity``.

    Fills ``{batches}`` with the side's ``batch_sizes`` axis as a literal list of integers, and builds the
    side's ``__focus_weights`` table the templates join (:func:`native_weights_table`).
    """
    db = '"' + alias.replace('"', '""') + '"'
    native_weights_table(con, alias)
    batches = batches_literal(con, alias) if "{batches}" in spec.sql else ""
    return spec.sql.format(db=db, entity=entity, batches=batches)


def batches_literal(con, alias: str) -> str:
    """Side ``alias``'s ``batch_sizes`` axis as a SQL literal list of integers (``[1, 2, …]::BIGINT[]``)."""
    db = '"' + alias.replace('"', '""') + '"'
    values = con.execute(f"SELECT list(batch ORDER BY batch) FROM {db}.batch_sizes").fetchone()[0] or []
    return "[" + ", ".join(str(int(b)) for b in values) + "]::BIGINT[]"


def native_weights_table(con, alias: str) -> None:
    """(Re)build side ``alias``'s ``__focus_weights``: the (hardware, model, weights dtype) the focus keeps.

    The rows ``_WEIGHTS_DEFAULT`` accepts, for every accelerator and model or served-set id of the side (a few
    thousand); the focus templates semi-join on it.  Rebuilt on every call (cheap), so it follows a side that
    was cut (``cut_to_touched``) after an earlier call.
    """
    db = '"' + alias.replace('"', '""') + '"'
    con.execute(_NATIVE_WEIGHTS.format(db=db))

# Views whose focused rows are computed once per side and shared: the view is replaced in that side by a
# table of its focused rows (every column), so the views built on it (roofline reads capacity) and its own
# comparison read the table instead of recomputing the grid.  Exact because the focus of each reader keeps
# only rows whose key and `within_native` columns come straight from the shared view's row and pass the
# same filter (`_KEPT`): roofline's model, hardware, engine, weights dtype and within_native are capacity's.
# The roofline columns read after it is shared: by its focus and by the costs view (270).  Only these are kept: every
# column of an engine release's roofline rows raised the diff's peak RSS 6.7 → 9.5 GB.  A column costs starts to read
# and this list lacks is a binder error, never a wrong number (tests/test_diff_cut.py compares costs).
_ROOFLINE_READ = ("model_id", "hardware_id", "engine_id", "weights_dtype", "kv_dtype", "tp", "context_tokens",
                  "within_native", "batch", "max_seqs", "batch_fits", "decode_tok_per_s", "expected_decode_tok_per_s")

# roofline is shared the same way (after capacity, which it reads: in this order), at the two batches its focus
# keeps, so `costs` (270, every row a roofline row priced) is computed from those rows only.  Exact for both
# foci: each keeps a subset of those rows by the same key, within_native, weights and batch tests.
SHARED: dict[str, str] = {
    "capacity": "SELECT v.* FROM {db}.capacity v " + _NATIVE_JOIN + " WHERE ({entity}) AND v.within_native",
    "roofline": "SELECT " + ", ".join("v." + c for c in _ROOFLINE_READ) + " FROM {db}.roofline v " + _NATIVE_JOIN +
                " WHERE ({entity}) AND v.within_native AND (v.batch = 1 OR v.batch = " + _CAPACITY_BATCH + ")",
}
