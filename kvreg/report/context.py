"""The report's template context: a dataclass filled from SQL queries over the views.

Every number in a report comes from a query in ``kvreg/report/queries/`` (one
file each, parameters passed, never formatted in); this module only runs them
and groups their rows for the templates.  Templates do no arithmetic.

Sections depend on views other issues add; a view that is not in the database
leaves its section out with a one-line note (:data:`OPTIONAL`).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import os
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

from kvreg.engine_fit import tp_heads_quirk
from kvreg.report.share import (_share_capacity, _share_engine_batched, _share_engine_capacity, share_views,
                                unshare_capacity, unshare_views)

# Optional views/macros and the columns the report reads from each (kvreg/sql/220_engine_capacity.sql,
# 260_roofline.sql, 275_plans.sql; docs/report.md "Views the report reads").
ENGINE_COLUMNS = ("model_id", "hardware_id", "engine_id", "weights_dtype", "kv_dtype", "tp", "max_model_len",
                  "default_batched", "logged_kv_tokens", "admitted_seqs", "starts", "sliding_stored_as_full",
                  "chunked_stored_as_full", "grouped_min_block_report", "padding_layers_wasted",
                  "recurrent_page_alignment", "recurrent_outside_pool", "k_eq_v_stored_twice", "mla_block_size",
                  "swa_pool_ratio", "does_not_start", "request_len_capped", "sliding_prefill_reserve", "refusal")
ROOFLINE_COLUMNS = ("model_id", "hardware_id", "engine_id", "weights_dtype", "kv_dtype", "tp", "context_tokens",
                    "batch", "batch_fits", "decode_tok_per_s", "tok_per_s_per_seq", "expected_decode_tok_per_s")
PLANS_COLUMNS = ("model_id", "hardware_id", "engine_id", "weights_dtype", "kv_dtype", "tp", "feasible", "reason",
                 "max_seqs_per_replica", "rate_max_batch", "replicas", "batch_per_replica", "gpus", "usd_per_hour",
                 "binding_constraint", "tpot_at_batch_s", "prefill_floor_s", "max_context_tokens")

# Empty, typed stand-in for engine_capacity, so the queries can always LEFT JOIN it.
_NO_ENGINE = """CREATE OR REPLACE TEMP TABLE report_engine_admission AS
SELECT NULL::VARCHAR AS model_id, NULL::VARCHAR AS hardware_id, NULL::VARCHAR AS engine_id,
       NULL::VARCHAR AS weights_dtype, NULL::VARCHAR AS kv_dtype, NULL::BIGINT AS tp,
       NULL::BIGINT AS context_tokens, NULL::BIGINT AS admitted_seqs, NULL::BOOLEAN AS starts,
       NULL::BOOLEAN AS request_len_capped, NULL::BIGINT AS logged_kv_tokens
WHERE false"""
# Empty stand-in for the engine_capacity columns naive_gap.sql reads.
_NO_ENGINE_CAPACITY = """CREATE OR REPLACE TEMP TABLE report_engine_capacity AS
SELECT NULL::VARCHAR AS model_id, NULL::VARCHAR AS hardware_id, NULL::VARCHAR AS engine_id,
       NULL::VARCHAR AS weights_dtype, NULL::VARCHAR AS kv_dtype, NULL::BIGINT AS tp, NULL::BIGINT AS max_model_len,
       NULL::BOOLEAN AS default_batched, NULL::BIGINT AS blocks_per_request, NULL::BIGINT AS block_size_tokens,
       NULL::BIGINT AS num_groups
WHERE false"""
# engine_capacity has one row per max_num_batched_tokens; the report uses the release's default for
# the device (default_batched, as `kvreg fit --engine` does).  The aggregate is defensive: should a
# scenario still carry several rows, plan on the least admitted and count any refusal.
# Read from report_engine_capacity (scope_engine_capacity.sql), engine_capacity for the report's lists only.
_ENGINE = """CREATE OR REPLACE TEMP TABLE report_engine_admission AS
SELECT model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp, max_model_len AS context_tokens,
       min(admitted_seqs)::BIGINT AS admitted_seqs, bool_and(starts) AS starts,
       bool_or(request_len_capped) AS request_len_capped, min(logged_kv_tokens)::BIGINT AS logged_kv_tokens
FROM report_engine_capacity
GROUP BY ALL"""


def query_text(name: str) -> str:
    """The SQL of ``kvreg/report/queries/NAME.sql``."""
    return resources.files("kvreg.report").joinpath("queries", f"{name}.sql").read_text()


def rows(con, name: str, params: dict | None = None) -> list:
    """Run query NAME with named ``params``; rows as namedtuples (attribute access, strict in Jinja)."""
    cur = con.execute(query_text(name), params or {})
    Row = collections.namedtuple(f"{name}_row", [d[0] for d in cur.description])  # noqa: PYI024
    return [Row(*r) for r in cur.fetchall()]


def materialise(con, table: str, query: str, params: dict, tables=None) -> None:
    """Create temp table TABLE from query QUERY (queries/QUERY.sql) with named ``params``, once per report.

    The heavy views (capacity, engine_capacity, roofline, plans) are read by several report queries;
    each is evaluated once, for the report's lists only, and the queries join the temp table.
    ``tables`` (a :class:`kvreg.report.table_cache.TableCache`, or None): read the table from the rows an earlier
    report computed on the same database, or keep them for the next one.
    """
    sql = query_text(query)
    key = tables.key(table, sql, params) if tables is not None else None
    if key is not None and tables.load(con, table, key):
        return
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {sql}", params)
    if key is not None:
        tables.save(con, table, key)


def knob_params(workload) -> dict:
    """The report's engine_settings (columns of its workload row) as SQL parameters, None = the release default."""
    from kvreg.plan import KNOBS

    return {k: getattr(workload, k, None) for k in KNOBS}


def _objects(con) -> tuple[set[str], set[str]]:
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    macros = {r[0] for r in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_type = 'table_macro'").fetchall()}
    return views, macros


def _columns(con, sql: str, params: list | None = None) -> set[str]:
    """Column names of ``sql``; a plain ``SELECT * FROM view`` is read from the catalog (DESCRIBE plans the view's
    whole chain: ~0.13 s CPU each for roofline and engine_capacity).  With namesakes in several attached databases
    (``kvreg diff``'s sides and their ranking copies) the name resolves, with no temp namesake, to the current
    database's current schema (``USE``), so that one's columns are read."""
    words = sql.split()
    if not params and len(words) == 4 and words[:3] == ["SELECT", "*", "FROM"]:
        got = con.execute("SELECT DISTINCT database_name, schema_name, column_name FROM duckdb_columns() "
                          "WHERE table_name = ?", [words[3]]).fetchall()
        places = {(d, sch) for d, sch, _ in got}
        if len(places) > 1 and not any(d == "temp" for d, _ in places):
            here = con.execute("SELECT current_database(), current_schema()").fetchone()
            places &= {here}
        if len(places) == 1:   # else a temp namesake, or none here: let DuckDB resolve it
            return {c for d, sch, c in got if (d, sch) in places}
    return {r[0] for r in con.execute(f"DESCRIBE {sql}", params or []).fetchall()}


@dataclasses.dataclass(frozen=True)
class Availability:
    """Which optional views the database has, and the one-line notes for sections left out."""

    engine: bool
    roofline: bool
    plans: bool
    notes: tuple[str, ...]
    # the database's table macros (:func:`_objects`), for :func:`with_plans` later (listing them costs ~0.02 s CPU)
    macros: frozenset = dataclasses.field(default=frozenset(), compare=False, repr=False)


def _check(con, notes: list, name: str, present: bool, needed, sql: str, params=None, what: str = "view") -> bool:
    """Whether view or macro ``name`` is present with the ``needed`` columns (of ``sql``); else a note in ``notes``."""
    if not present:
        notes.append(f"The {name} {what} is not in this database: {SECTION_OF[name]} left out.")
        return False
    missing = sorted(set(needed) - _columns(con, sql, params))
    if missing:
        notes.append(f"The {name} {what} lacks columns {', '.join(missing)}: {SECTION_OF[name]} left out.")
        return False
    return True


def availability(con, workload, scope: dict, *, check_plans: bool = True, batched: bool = False,
                 tables=None) -> Availability:
    """Detect ``engine_capacity``, ``roofline`` and the ``plans`` macro, with the columns the report needs.

    Also creates ``report_engine_capacity`` (when the view exists: a temp view over the one evaluation of the
    admission chain, ``report_engine_capacity_axis``, as ``report_engine_capacity_all``) and the temp table
    ``report_engine_admission`` (engine_capacity per scenario of the report, or empty); ``scope`` holds
    the report's lists (:func:`scope_from_items`).  ``check_plans=False`` leaves ``plans`` False for the caller to
    check later with :func:`with_plans` (:func:`rank_options`: once its capacity is shared, the ``DESCRIBE`` of
    ``plans`` binds the temp ``capacity_at`` instead of planning the admission chain, 0.15 → 0.05 s CPU).
    ``batched=True`` (the report) also keeps ``report_engine_batched``: every setting of the batched_tokens axis at
    the workload context, from the same one evaluation of the admission chain (scope_engine_capacity.sql), for the
    levers (:func:`levers`).  ``tables``: the report's table cache (:func:`materialise`), for the admission rows.
    """
    views, macros = _objects(con)
    notes: list[str] = []

    def check(name: str, present: bool, needed, sql: str, params=None, what: str = "view") -> bool:
        return _check(con, notes, name, present, needed, sql, params, what)

    engine = check("engine_capacity", "engine_capacity" in views, ENGINE_COLUMNS, "SELECT * FROM engine_capacity")
    if engine:   # the admission once, over both length axes (capacity_at's engine side reads it too:
        # _share_engine_capacity) and, with ``batched``, the batched_tokens axis at the workload context (the levers:
        # _share_engine_batched)
        knobs = knob_params(workload)
        axis = rows(con, "batched_axis", {"max_num_batched_tokens": knobs["max_num_batched_tokens"]})[0].batched_axis \
            if batched else None
        materialise(con, "report_engine_capacity_axis", "scope_engine_capacity",
                    dict(scope, **knobs, context_tokens=workload.context_tokens, batched_axis=axis), tables)
        # views over that one table: copying its wide rows into three more tables cost ~0.15 s CPU, scanning it
        # where they are read a few ms each
        con.execute("CREATE OR REPLACE TEMP VIEW report_engine_capacity_all AS SELECT * EXCLUDE (at_report_setting)"
                    " FROM report_engine_capacity_axis WHERE at_report_setting")
        if batched:
            con.execute("CREATE OR REPLACE TEMP VIEW report_engine_batched AS SELECT * EXCLUDE (at_report_setting)"
                        f" FROM report_engine_capacity_axis WHERE max_model_len = {int(workload.context_tokens)}")
        con.execute("CREATE OR REPLACE TEMP VIEW report_engine_capacity AS SELECT * FROM report_engine_capacity_all"
                    " WHERE max_model_len IN (SELECT max_model_len FROM max_model_lens)")
        con.execute(_ENGINE)
    else:
        con.execute(_NO_ENGINE)
        con.execute(_NO_ENGINE_CAPACITY)
    roofline = check("roofline", "roofline" in views, ROOFLINE_COLUMNS, "SELECT * FROM roofline")
    avail = Availability(engine, roofline, False, tuple(notes), frozenset(macros))
    return with_plans(con, avail, workload) if check_plans else avail


def with_plans(con, avail: Availability, workload, macros: set[str] | None = None) -> Availability:
    """``avail`` with ``plans`` detected (the macro, with the columns the report needs; a note otherwise); the macros
    are ``macros``, else those :func:`availability` listed, else listed now."""
    if macros is None:
        macros = avail.macros or _objects(con)[1]
    notes = list(avail.notes)
    plans = _check(con, notes, "plans", "plans" in macros, PLANS_COLUMNS, "SELECT * FROM plans(?, ?, ?, ttft_s := ?)",
                   [workload.users, workload.context_tokens, workload.tpot_s, workload.ttft_s], what="macro")
    return dataclasses.replace(avail, plans=plans, notes=tuple(notes))


SECTION_OF = {
    "engine_capacity": "engine-admitted concurrency and start-up checks",
    "roofline": "decode speed (roofline chart)",
    "plans": "speed-aware sizing (the recommendation is sized from memory alone)",
}


@dataclasses.dataclass(frozen=True)
class CapacityRow:
    """One configuration (hardware × weights × KV × TP × engine) of a model, one grid row per context."""

    config: Any
    cells: list


@dataclasses.dataclass
class DeadLine:
    """One printed line for every configuration of a hardware × weights × TP whose weights do not fit.

    Those rows read 0 in every cell (naive, first principles, engine) at every context; printing one
    line per KV dtype and engine only repeated zeros (a quarter of the Q4 2026 report's table rows).
    """

    config: Any  # the first folded grid row (hardware, weights, TP; pool_bytes ≤ 0)
    kv_dtypes: list[str]  # folded KV dtypes, report order
    engines: list[str]  # folded engines, report order
    engine_refuses: bool  # some folded engine release refuses to start


@dataclasses.dataclass(frozen=True)
class CapacityTable:
    """A model's concurrency table: configurations down, contexts across."""

    contexts: list  # [(context_label, context_tokens)] in report order
    rows: list[CapacityRow]
    lines: list  # what the table prints: CapacityRow, or a DeadLine for folded configurations
    # what the PDF prints: the lines of the rows at the model's shown precisions (grid.sql ``printed``)
    print_lines: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class ModelSection:
    """Everything the report shows for one model."""

    model_id: str
    name: str
    recommended: Any | None
    options: list
    sensitivity: Any | None
    capacity: CapacityTable
    per_sequence: list
    pools: list
    quirks: list
    charts: dict[str, str]
    naive_gap: list = dataclasses.field(default_factory=list)  # naive_gap.sql rows, term_rank order
    dropouts: list = dataclasses.field(default_factory=list)  # dropouts.sql rows: devices that cannot serve it, why
    unpriced: list = dataclasses.field(default_factory=list)  # unpriced_options.sql rows, fewest devices first
    shown: Any | None = None  # shown_precisions.sql row: the precisions and engine the charts and the PDF appendix show
    guess: Any | None = None  # guess_plans.sql row: a † call sized again at the same vendor's measured efficiency
    levers: Any | None = None  # levers.sql row (plan_levers, kvreg/sql/284): what would change the answer


@dataclasses.dataclass(frozen=True)
class ReportContext:
    """The whole template context (templates read nothing else)."""

    report: Any
    workload: Any
    workload_context_label: str
    generated_at: str
    kvreg_version: str
    registry_commit: str | None
    registry_commit_date: str | None
    available: Availability
    recommended: list
    models: list[ModelSection]
    engines: list
    hardware: list
    efficiency: list
    efficiency_levels: list  # efficiency_levels.sql: what each evidence level the efficiency rows use means
    warnings: list
    sources: list
    summary_charts: dict = dataclasses.field(default_factory=dict)  # report-level charts (cost per M tokens)
    changes: Any | None = None  # kvreg.report.changes.Changes when the definition names `previous:`


def rank_options(con, report_id: str, scope: dict, *, axis: bool = False, tables=None):
    """Create the temp table ``report_options``: every option the report compares, ranked per model.

    The recommendation is ``rank_in_model = 1 AND meets`` (plan_options.sql, or options.sql when the
    plans macro is absent).  Also leaves ``report_capacity`` (every listed configuration at the report's contexts
    and its workload context, report_contexts.sql) and ``report_plans`` for other queries.
    Used by the report and by ``kvreg diff`` (recommendation flips), so both rank the same way.
    ``axis``: evaluate ``capacity_at`` once over the whole contexts axis into ``report_capacity_all`` and take
    ``report_capacity`` from it, for a caller that reads the axis too (the report's charts: one evaluation instead
    of two, 0.48 + 0.99 → 1.1 s CPU for the Q4 2026 report, the engine side's fixed cost paid once).
    With ``axis`` the connection's ``capacity_at`` is then served from ``report_capacity_all`` (:func:`_share_capacity`:
    the plans and the roofline read the rows already computed) until :func:`unshare_capacity`; ``build_context`` does
    both.  ``axis`` also keeps ``report_engine_batched`` for :func:`report_levers` (:func:`availability`).
    Without ``axis`` the plans' ``capacity_at`` is served from ``report_capacity`` (the workload context is one of the
    report's contexts) while the ranking is made and the registry's macro answers again when this returns
    (``kvreg diff``'s recommendation check: one evaluation of the admission chain per ranking, not two).
    ``tables``: the report's table cache (:func:`materialise`) for the admission rows, the capacity and the plans.

    Returns:
        (workload row, :class:`Availability`).
    """
    p = {"report": report_id}
    workload = _workload(con, p)
    avail = availability(con, workload, scope, check_plans=False, batched=axis, tables=tables)
    knobs = knob_params(workload)
    # the report's cost basis (rental or TCO), one rate per device, read by every priced query
    materialise(con, "report_rates", "scope_rates",
                dict(cost_basis=workload.cost_basis, tco_years=workload.tco_years,
                     tco_usd_per_kwh=workload.tco_usd_per_kwh, tco_pue=workload.tco_pue))
    (contexts,) = rows(con, "report_contexts", p)
    if avail.engine:   # capacity_at's engine side from report_engine_capacity_all: the admission chain once
        _share_engine_capacity(con, scope, knobs)
    try:
        if axis:   # the report's contexts are on the axis (kvreg/tables.py adds them)
            materialise(con, "report_capacity_all", "scope_capacity",
                        dict(scope, contexts=[c for (c,) in con.execute(
                            "SELECT context_tokens FROM contexts ORDER BY 1").fetchall()], **knobs), tables)
            con.execute("CREATE OR REPLACE TEMP TABLE report_capacity AS SELECT * FROM report_capacity_all"
                        " WHERE list_contains($contexts, context_tokens)", {"contexts": contexts.contexts})
        else:
            materialise(con, "report_capacity", "scope_capacity", dict(scope, contexts=contexts.contexts, **knobs))
    finally:
        con.execute("DROP MACRO TABLE IF EXISTS temp.engine_capacity_at")
    # plans (275, through ranked_plans) calls capacity_at for the report's lists at the workload context, one of the
    # report's contexts: those rows are report_capacity's, so it is served from them (share.py) instead of planning
    # and running the admission chain again; without ``axis`` only for the ranking (dropped below), as before.
    if axis:
        _share_capacity(con, scope, knobs)
    else:
        _share_capacity(con, scope, knobs, table="report_capacity", contexts=contexts.contexts)
    try:
        avail = with_plans(con, avail, workload)   # DESCRIBE plans now binds the shared capacity_at
        materialise(con, "report_binding_names", "binding_names", {})
        if avail.plans:
            materialise(con, "report_plans", "scope_plans", plans_params(scope, workload, knobs, "fitted"), tables)
            con.execute(f"CREATE OR REPLACE TEMP TABLE report_options AS {query_text('plan_options')}", p)
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE report_options AS {query_text('options')}", p)
    finally:
        if not axis:   # the caller's capacity_at is the registry's again (axis: build_context unshares it)
            unshare_capacity(con)
    return workload, avail


def plans_params(scope: dict, workload, knobs: dict, efficiency_basis: str) -> dict:
    """The parameters of scope_plans.sql: the report's lists (``scope``), its workload row, engine settings and
    the plans' ``efficiency_basis`` ('fitted', or 'vendor_measured' for the second plan of a † call)."""
    return dict(scope, users=workload.given_users, context_tokens=workload.context_tokens,
                tpot_s=workload.tpot_s, ttft_s=workload.ttft_s, cost_basis=workload.cost_basis,
                tco_years=workload.tco_years, tco_usd_per_kwh=workload.tco_usd_per_kwh,
                tco_pue=workload.tco_pue, input_tokens=workload.input_tokens,
                output_tokens=workload.output_tokens, shared_prefix_tokens=workload.shared_prefix_tokens,
                parallel_samples=workload.parallel_samples,
                request_rate_per_s=workload.request_rate_per_s, efficiency_basis=efficiency_basis, **knobs)


def vendor_plans(con, scope: dict, workload, tables=None) -> list:
    """The second plan of each call resting on a guessed efficiency (guess_plans.sql rows, one per such model).

    A recommendation marked † (TPOT-bound, its bandwidth efficiency only the hardware entry's stated figure:
    plan_options.sql ``speed_estimated``) is sized again with ``ranked_plans(efficiency_basis :=
    'vendor_measured')`` (kvreg/sql/274_plan_efficiency.sql: the same vendor's lowest measured figure), for those
    models only, into the temp table ``report_plans_vendor``: the same macro and ranking, so the count on the
    guessed device and whether the recommendation flips come from one formula.  Empty when no call is marked.
    ``tables``: the report's table cache (:func:`materialise`).
    """
    (guessed,) = con.execute("SELECT list(model_id ORDER BY model_idx) FROM report_options WHERE rank_in_model = 1"
                             " AND meets AND binding_key = 'tpot' AND speed_estimated").fetchone()
    if not guessed:
        return []
    materialise(con, "report_plans_vendor", "scope_plans",
                plans_params(dict(scope, models=guessed), workload, knob_params(workload), "vendor_measured"), tables)
    return rows(con, "guess_plans")


def report_levers(con, scope: dict, workload, avail: Availability) -> list:
    """levers.sql rows (plan_levers, kvreg/sql/284, at the report's engine settings) for the models of report_plans.

    With no engine row recommended there is nothing to re-admit: ``plan_levers_core`` without admission rows, the
    same rows (284; as `kvreg plan` does, kvreg/plan_levers.py).  Otherwise the admission over the batched_tokens
    axis is served from ``report_engine_batched`` (:func:`_share_engine_batched`) while levers.sql runs.
    """
    if not avail.plans:
        return []
    knobs = knob_params(workload)
    lever_knobs = {k: v for k, v in knobs.items() if k != "max_num_batched_tokens"}
    (engine_rec,) = con.execute("SELECT count(*) > 0 FROM report_plans WHERE rank_in_model = 1"
                                " AND pool_basis = 'engine'").fetchone()
    if not engine_rec:
        return rows(con, "levers_core")
    served = avail.engine and con.execute("SELECT count(*) FROM duckdb_views() WHERE temporary"
                                          " AND view_name = 'report_engine_batched'").fetchone()[0] > 0
    if served:
        _share_engine_batched(con, scope, knobs)
    try:
        return rows(con, "levers", lever_knobs)
    finally:
        if served:
            con.execute("DROP MACRO TABLE IF EXISTS temp.engine_capacity_at")


def _workload(con, p: dict):
    """The report's workload row (workload.sql, kept as the temp table ``report_workload``); a request rate must
    come to 1 to 10^9 concurrent requests.

    Raises:
        KvregError: ``workload-rate`` at the definition's ``workload.request_rate_per_s`` line when Little's law
            (``workload_requests``, 272) gives fewer than 1 or more than 10^9 concurrent requests.
    """
    import duckdb

    from kvreg.problems import KvregError, Problem

    try:   # the temp table report_workload: options, plan_options and chart_roofline read its users
        materialise(con, "report_workload", "workload", p)
        (workload,) = rows(con, "report_workload_row")
        problem = None
    except duckdb.Error:   # ⌈rate × time in flight⌉ beyond BIGINT
        workload, problem = None, "more than 10^18"
    if workload is not None and workload.given_users is None and not 1 <= (workload.users or 0) <= 10**9:
        problem = f"{workload.users}"
    if problem is None:
        return workload
    (file, line, rate), = con.execute("SELECT file, request_rate_line, request_rate_per_s FROM report_workloads"
                                      " WHERE report_id = $report", p).fetchall()
    raise KvregError([Problem(file, line or 0, 1, "workload.request_rate_per_s", "workload-rate",
                              f"request rate {rate:g}/s comes to {problem} concurrent requests (Little's law: rate × "
                              "(TTFT + (output − 1) × TPOT)); kvreg sizes 1 to 10^9",
                              "check the rate (requests per second), the mean output length and tpot_ms")])


def scope_from_items(con, report_id: str) -> dict[str, list]:
    """The report's lists as SQL parameters for the scope_*.sql queries, read from ``report_items`` and
    ``report_weights`` (kvreg/sql/031: the listed weights_dtypes and each model's own published precisions).

    Returns:
        ``models``, ``hardware``, ``engines``, ``kv_dtypes`` (VARCHAR[] ids), ``tp`` (BIGINT[] TP sizes);
        ``weights_dtypes``: every precision some model is sized at (the list, then the models' own), a coarse filter
        the views push into their scans; ``weights_pairs``: the (model_id, weights_dtype) pairs themselves
        (STRUCT[]), the filter each scope query and ranked_plans apply per model.
    """
    got: dict[str, list] = {"model": [], "hardware": [], "engine": [], "weights_dtype": [], "kv_dtype": [], "tp": []}
    for kind, item_id, value in con.execute(
            "SELECT item_kind, item_id, item_value FROM report_items WHERE report_id = ? ORDER BY item_idx",
            [report_id]).fetchall():
        if kind in got:
            got[kind].append(int(value) if kind == "tp" else item_id)
    pairs = con.execute("SELECT model_id, weights_dtype FROM report_weights WHERE report_id = ?"
                        " ORDER BY weights_idx, model_id", [report_id]).fetchall()
    weights = list(dict.fromkeys([*got["weights_dtype"], *(w for _, w in pairs)]))
    return {"models": got["model"], "hardware": got["hardware"], "engines": got["engine"],
            "weights_dtypes": weights, "kv_dtypes": got["kv_dtype"], "tp": got["tp"],
            "weights_pairs": [{"model_id": m, "weights_dtype": w} for m, w in pairs]}


def generated_at() -> str:
    """Now in UTC to the minute, or SOURCE_DATE_EPOCH when set (reproducible-builds convention)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc) if epoch else dt.datetime.now(dt.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M UTC")


def commit_date(root: Path, commit: str | None) -> str | None:
    """The committer date (YYYY-MM-DD) of ``commit`` in the checkout at ``root``, or None."""
    if not commit:
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%cs", commit.removesuffix("-dirty")],
                             capture_output=True, text=True, check=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def build_context(con, registry, report_id: str, *, charts: bool = True, progress=None,
                  tables=None) -> ReportContext:
    """Query everything report ``report_id`` shows, over an open (writable) connection.

    Args:
        con: a DuckDB connection with the registry's tables and views (temp views are created on it).
        registry: the loaded :class:`kvreg.registry.Registry` the database was built from.
        report_id: id of a report entry (file stem under ``reports/``).
        charts: render the matplotlib charts (SVG strings); False leaves them empty (faster tests).
        progress: optional callable given a short message before the slow steps (the charts).
        tables: a :class:`kvreg.report.table_cache.TableCache` for the database ``con`` reads (kvreg/report/make.py
            passes the project's), or None: every query runs.

    Returns:
        The :class:`ReportContext`; all numbers in base units (bytes, tokens, seconds, USD).
    """
    try:
        share_views(con)
        return _build_context(con, registry, report_id, charts=charts, progress=progress, tables=tables)
    finally:
        unshare_capacity(con)
        unshare_views(con)


def _build_context(con, registry, report_id: str, *, charts: bool, progress, tables=None) -> ReportContext:
    from importlib.metadata import PackageNotFoundError, version

    report = registry.entries["report"][report_id].entry
    p = {"report": report_id}
    scope = scope_from_items(con, report_id)
    if charts:   # worker processes import matplotlib while the queries run (kvreg/report/chart_workers.py)
        from kvreg.report import chart_workers
        from kvreg.report.chart_cache import ChartCache

        chart_workers.start_workers(ChartCache.for_project(registry.root))   # charts kept in .kvreg/charts
    workload, avail = rank_options(con, report_id, scope, axis=True, tables=tables)
    # each model's shown precisions (the recommendation's, else the report's first): charts, printed appendix
    con.execute(f"CREATE OR REPLACE TEMP TABLE report_shown_precisions AS {query_text('shown_precisions')}", p)
    # the whole contexts axis only for what the charts and the sensitivity read (chart_scope.sql), cut from the one
    # capacity_at evaluation rank_options made (report_capacity_all)
    (cs,) = rows(con, "chart_scope")
    con.execute("CREATE OR REPLACE TEMP TABLE report_capacity_axis AS SELECT * FROM report_capacity_all"
                " WHERE list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype)"
                " AND list_contains($engines, engine_id) AND list_contains($contexts, context_tokens)",
                dict(weights_dtypes=cs.weights_dtypes, kv_dtypes=cs.kv_dtypes, engines=cs.engines,
                     contexts=cs.axis_contexts))
    # each configuration's pool, from the capacity rows (the report's engine settings): the chart's TP pick
    materialise(con, "report_memory_pools", "scope_memory_pools", {})
    if avail.roofline:   # read by the roofline chart only: its precisions and engines, as the capacity axis
        materialise(con, "report_roofline", "scope_roofline",
                    dict(scope, weights_dtypes=cs.weights_dtypes, kv_dtypes=cs.kv_dtypes, engines=cs.engines,
                         context_tokens=workload.context_tokens, **knob_params(workload)), tables)
    con.execute(f"CREATE OR REPLACE TEMP TABLE report_grid AS {query_text('grid')}", p)
    con.execute(f"CREATE OR REPLACE TEMP TABLE report_chart_capacity AS {query_text('chart_capacity')}", p)

    # the charts' rows first: the charts are drawn (in worker processes) while the other queries run
    chart_cap = _by_model(rows(con, "report_chart_capacity_ordered", p))
    roof = _by_model(rows(con, "chart_roofline", p) if avail.roofline else [])
    pending: dict[str, dict] = {}
    summary_pending = None
    styles = {}
    if charts:
        from kvreg.report import charts as ch
        from kvreg.report.chart_workers import submit

        if progress:
            progress(f"drawing {len(report.models) * (3 if avail.roofline else 2) + 1} charts")
        styles = ch.report_styles(report.hardware)   # one colour and marker per device, every chart
        for mid in report.models:
            m_cap = chart_cap.get(mid, [])
            pending[mid] = {
                "capacity": submit("capacity_vs_context", m_cap, workload.context_tokens, styles),
                "compare": submit("naive_vs_engine",
                                     [r for r in m_cap if r.context_tokens == workload.context_tokens],
                                     workload.context_label)}
            if avail.roofline:
                pending[mid]["roofline"] = submit("roofline", roof.get(mid, []), workload.context_label, styles)
        summary_pending = submit("cost_per_million", rows(con, "chart_cost"), styles)
    if tables is not None:   # the kept tables written while the worker draws (TableCache.save: not before the rows)
        tables.flush(con)

    # the rest of the queries run while the workers draw; the charts are collected last (_collect_charts)
    # a call resting on a guessed efficiency, sized again at the same vendor's measured one (while capacity is shared)
    guesses = {r.model_id: r for r in vendor_plans(con, scope, workload, tables)} if avail.plans else {}
    # each query's rows grouped by model once (order kept): a large report has ~10^5 grid rows
    grid = _by_model(rows(con, "report_grid_ordered"))
    options = _by_model(rows(con, "report_options_ordered"))
    sens = {r.model_id: r for r in rows(con, "sensitivity")}
    levers = {r.model_id: r for r in report_levers(con, scope, workload, avail)}
    per_seq = _by_model(rows(con, "per_sequence", p))
    pools = _by_model(rows(con, "pools"))
    quirks = _by_model([tp_heads_quirk(con, q) for q in rows(con, "engine_quirks", p)] if avail.engine else [])
    gaps = _by_model(rows(con, "naive_gap"))
    drops = _by_model(rows(con, "dropouts"))
    unpriced = _by_model(rows(con, "unpriced_options"))
    cur = con.execute("SELECT * FROM report_shown_precisions")
    Shown = collections.namedtuple("shown_row", [d[0] for d in cur.description])  # noqa: PYI024
    shown = {r[0]: Shown(*r) for r in cur.fetchall()}

    sections = []
    for mid in report.models:
        m_grid = grid.get(mid, [])
        table = _pivot(m_grid)
        m_opts = options.get(mid, [])
        sections.append(ModelSection(
            model_id=mid, name=m_grid[0].model_name if m_grid else mid,
            recommended=next((o for o in m_opts if o.rank_in_model == 1 and o.meets), None),
            options=m_opts, sensitivity=sens.get(mid), capacity=table,
            per_sequence=per_seq.get(mid, []), pools=pools.get(mid, []), quirks=quirks.get(mid, []),
            charts={}, naive_gap=gaps.get(mid, []),
            dropouts=drops.get(mid, []), unpriced=unpriced.get(mid, []), shown=shown.get(mid),
            guess=guesses.get(mid), levers=levers.get(mid)))

    changes = None
    if report.previous is not None:
        from kvreg.report.changes import changes_since

        loaded = registry.entries["report"][report_id]
        changes = changes_since(registry.root, report, report_id, file=loaded.doc.file,
                                line=loaded.doc.where(("previous",))[0])
    # the efficiencies (and the glossary of the evidence levels they use, efficiency_levels.sql)
    materialise(con, "report_efficiency", "efficiency", p)
    cur = con.execute("SELECT * FROM report_efficiency")   # efficiency.sql's order (insertion order is kept)
    Eff = collections.namedtuple("efficiency_row", [d[0] for d in cur.description])  # noqa: PYI024
    efficiency = [Eff(*r) for r in cur.fetchall()]
    # the checkout's commit now, not the build's: a reused database (kvreg/report/make.py) may predate a commit
    # that changed no file
    from kvreg.build import registry_commit

    info = (registry_commit(registry.root),)
    try:
        kv_version = version("kvreg")
    except PackageNotFoundError:  # running from a checkout that was never installed
        kv_version = "unknown"
    ctx = ReportContext(
        report=report, workload=workload, workload_context_label=workload.context_label,
        generated_at=generated_at(), kvreg_version=kv_version,
        registry_commit=info[0], registry_commit_date=commit_date(registry.root, info[0]),
        available=avail, recommended=[s.recommended for s in sections if s.recommended is not None],
        models=sections, engines=rows(con, "engines", p), hardware=rows(con, "hardware", p),
        efficiency=efficiency, efficiency_levels=rows(con, "efficiency_levels"),
        warnings=rows(con, "warnings", p), sources=_group_sources(rows(con, "sources", p)), changes=changes)
    if tables is not None:   # what was computed after the charts' rows (the vendor-measured plans)
        tables.flush(con)
    return _collect_charts(ctx, pending, summary_pending)


def _collect_charts(ctx: ReportContext, pending: dict, summary_pending) -> ReportContext:
    """``ctx`` with the charts the workers drew (:func:`kvreg.report.chart_workers.submit` futures), waited for last
    so that every query runs while they draw; a chart that came back empty (None) is left out."""
    for section in ctx.models:
        section.charts.update((k, v) for k, v in ((k, f.result()) for k, f in pending.get(section.model_id, {}).items())
                              if v)
    cost_svg = summary_pending.result() if summary_pending is not None else None
    if cost_svg:
        ctx.summary_charts["cost"] = cost_svg
    return ctx


def _by_model(rows_: list) -> dict[str, list]:
    """Rows grouped by their ``model_id``, each group in query order."""
    out: dict[str, list] = {}
    for r in rows_:
        out.setdefault(r.model_id, []).append(r)
    return out


def _pivot(grid_rows: list) -> CapacityTable:
    """Lay grid rows out with configurations down and contexts across (report order kept).

    Configurations whose weights do not fit and that show 0 in every cell are folded into one
    :class:`DeadLine` per hardware × weights × TP (``lines``); ``rows`` keeps every configuration;
    ``print_lines`` folds only the rows the PDF prints (grid.sql ``printed``: the shown precisions).
    """
    contexts = list(dict.fromkeys((r.context_label, r.context_tokens) for r in grid_rows))
    configs: dict[tuple, list] = {}
    for r in grid_rows:
        configs.setdefault((r.hardware_idx, r.weights_idx, r.kv_idx, r.tp_idx, r.engine_idx), []).append(r)
    rows = [CapacityRow(cells[0], cells) for _, cells in sorted(configs.items())]
    return CapacityTable(contexts, rows, _fold(rows), _fold([r for r in rows if r.config.printed]))


def _fold(rows: list) -> list:
    """The printed lines of ``rows``: each row, except that the rows of one hardware × weights × TP whose weights
    do not fit and that read 0 everywhere become one :class:`DeadLine` (at the first such row's place)."""
    lines: list = []
    dead: dict[tuple, DeadLine] = {}
    for row in rows:
        c = row.config
        if c.weights_fit or any(r.max_seqs or r.naive_max_seqs or r.engine_seqs for r in row.cells):
            lines.append(row)
            continue
        key = (c.hardware_idx, c.weights_idx, c.tp_idx)
        if key not in dead:
            dead[key] = DeadLine(c, [], [], False)
            lines.append(dead[key])
        d = dead[key]
        for items, v in ((d.kv_dtypes, c.kv_dtype), (d.engines, c.engine_id)):
            if v not in items:
                items.append(v)
        d.engine_refuses = d.engine_refuses or any(r.engine_starts is False for r in row.cells)
    return lines


def _group_sources(source_rows: list) -> list:
    """Sources grouped per entry: ``[(kind, entry_id, file, [source rows])]`` in query order (sources.sql:
    the sources the entry's numbers cite, from the provenance view)."""
    grouped: dict[tuple, list] = {}
    for r in source_rows:
        grouped.setdefault((r.kind, r.entry_id, r.file), []).append(r)
    return [(k[0], k[1], k[2], [s for s in v if s.source_id is not None]) for k, v in grouped.items()]
