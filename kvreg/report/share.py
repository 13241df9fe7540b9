"""The report's connection answering its own repeated calls from rows it already computed (issue 12 item 7).

DuckDB binds the names in a view's or macro's body when a query uses it, temp schema first: a temp table or temp
table macro of a registry view's or macro's name shadows it on this connection only.  The report (kvreg/report/
context.py) uses that to evaluate each heavy view and the engine's admission chain once per report: the view
``speed_efficiency`` as a temp table (:func:`share_views`), ``capacity_at`` and ``engine_capacity_at`` as temp macros
answering from the report's own rows (:func:`_serve_from_table`), each raising an error for any call those rows
cannot answer.  ``kvreg diff`` has its own (kvreg/diff/scenarios.py ``share_engine_capacity``).
"""

from __future__ import annotations

def _sql_literal(value) -> str:
    """A knob value or id list as a SQL literal (numbers, booleans, NULL, lists of registry ids)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_sql_literal(v) for v in value) + "]"
    return "'" + str(value).replace("'", "''") + "'"


def _serve_from_table(con, macro: str, table: str, axis_column: str, scope: dict, knobs: dict,
                      extra_params: str = "", extra_guard: str = "", axis: list | None = None,
                      extra_filter: str = "") -> None:
    """Create the temp table macro ``macro`` (the registry's signature) answering from the temp table ``table``.

    The one pattern of :func:`_share_capacity` and :func:`_share_engine_capacity`: DuckDB binds a macro's names when
    it is used, temp schema first, so every view and macro calling ``macro`` on this connection reads ``table``'s rows
    instead of evaluating the chain again.  The macro takes the registry macro's parameters (``context_list``, the
    engine knobs of :data:`kvreg.plan.KNOBS`, ``extra_params``, the id lists) and raises an error for any call the
    table cannot answer — other knob values, no or other model or hardware lists than ``scope``'s, contexts outside
    ``axis`` (default: the distinct ``axis_column`` values of ``table``), or ``extra_guard`` (a SQL condition on the
    extra parameters) false — never a subset.  ``only_engines`` filters the rows (NULL = all), and so does
    ``extra_filter`` (a SQL condition on the extra parameters and the row ``t``) when given.  Dropped by
    :func:`unshare_capacity`.
    """
    from kvreg.plan import KNOBS

    if axis is None:
        axis = [c for (c,) in con.execute(f"SELECT DISTINCT {axis_column} FROM {table} ORDER BY 1").fetchall()]
    same = " AND ".join(f"{k} IS NOT DISTINCT FROM {_sql_literal(knobs.get(k))}" for k in KNOBS)
    params = ", ".join(f"{k} := NULL" for k in KNOBS)
    guard = f"{same} AND {extra_guard}" if extra_guard else same
    con.execute(f"""CREATE OR REPLACE TEMP MACRO {macro}(context_list, {params},{extra_params}
                       only_models := NULL, only_hardware := NULL, only_engines := NULL) AS TABLE
SELECT t.* FROM {table} t
-- the guard is the semi-join's build side, evaluated before any row is read (a guard beside the row filters is
-- skipped once they leave no row).  A NULL list must not fold the filter to a constant false, which would drop the
-- guard with the rows: its stand-in list depends on t (and matches no id), so it is evaluated per row
WHERE t.{axis_column} IN (
          SELECT unnest(CASE WHEN {guard} AND list_has_all({_sql_literal(scope["models"])}, only_models)
                                  AND list_has_all({_sql_literal(scope["hardware"])}, only_hardware)
                                  AND list_has_all({_sql_literal(axis)}, context_list)
                             THEN context_list
                             ELSE error('kvreg report: {macro} is served from {table} for the '
                                        || 'report''s models, hardware, engine settings and contexts only '
                                        || '(kvreg/report/share.py _serve_from_table)') END))
  AND list_contains(coalesce(only_models, [t.model_id || ' ']), t.model_id)
  AND list_contains(coalesce(only_hardware, [t.hardware_id || ' ']), t.hardware_id)
  AND (only_engines IS NULL OR list_contains(only_engines, t.engine_id))   -- plans' only_engines (NULL = all)
  {f"AND {extra_filter}" if extra_filter else ""}""")


def _share_capacity(con, scope: dict, knobs: dict, table: str = "report_capacity_all",
                    contexts: list | None = None) -> None:
    """Serve the report's own ``capacity_at`` calls from ``report_capacity_all``, once it is materialised.

    ``plans`` (275, through ``ranked_plans``) and ``roofline_at`` (260) each call ``capacity_at`` for the report's
    models and hardware at the workload context with the report's engine settings: the very rows of
    ``report_capacity_all`` (the same macro over the whole contexts axis, the report's lists, the same knobs).  A
    temp macro of that name shadows the registry's for this connection (DuckDB binds a macro's names when it is
    used, temp schema first), so each evaluates the admission chain once instead of three times — planning it
    costs ~0.3 s CPU per query and running it ~0.4 s (benchmarks/README.md).  The same pattern as ``kvreg diff``'s
    ``share_engine_capacity`` (kvreg/diff/scenarios.py).  Any call it cannot answer from those rows — other knob
    values, no or other model or hardware lists, a context off the axis — raises an error instead of returning a
    subset (the ``capacity`` view included); the engines, precisions and TP sizes outside the report's lists are
    absent, and every report query filters to those lists.  :func:`unshare_capacity` drops it.
    ``table``, ``contexts``: another table of scope_capacity.sql's rows and the contexts it holds (``rank_options``
    without the axis: ``report_capacity`` at the report's contexts, its workload context among them, which is where
    plans calls ``capacity_at``; a call at any other context raises the error).
    """
    _serve_from_table(con, "capacity_at", table, "context_tokens", scope, knobs, axis=contexts)


def _share_engine_capacity(con, scope: dict, knobs: dict) -> None:
    """Serve ``capacity_at``'s engine side from ``report_engine_capacity_all`` while the report's capacity is made.

    ``capacity_at`` (245) takes its engine rows from ``engine_capacity_at`` (220, the release's admission chain
    kvreg/sql 200–220) for the report's models and hardware, with the report's engine settings, at the contexts
    axis; ``report_engine_capacity_all`` (scope_engine_capacity.sql) holds that macro's rows for the same lists and
    settings over the contexts and max_model_lens axes, computed once for the engine columns the report reads.  A
    temp macro of that name shadows the registry's (DuckDB binds a macro's names when it is used, temp schema
    first), so the chain is evaluated once per report instead of twice (benchmarks/README.md, reportfast4: the
    two statements 4.6 → 2.3 s CPU at load ~8, rows identical).  As :func:`_share_capacity`: a call it cannot answer
    from those rows — other knob values, a given memory or batched axis, no or other model or hardware lists,
    contexts off the axes — raises an error instead of returning a subset; engines, precisions and TP sizes outside
    the report's lists are absent (``capacity_at`` passes no engine list; scope_capacity.sql keeps the report's).
    :func:`rank_options` drops it once ``report_capacity`` is materialised.
    """
    axis = [c for (c,) in con.execute(
        "SELECT DISTINCT max_model_len FROM report_engine_capacity_all ORDER BY 1").fetchall()]
    if not axis:   # no engine row for the report's lists: the registry's macro answers (it has nothing to serve)
        return
    _serve_from_table(con, "engine_capacity_at", "report_engine_capacity_all", "max_model_len", scope, knobs,
                      extra_params=" available_kv_bytes := NULL, batched_axis := NULL,",
                      extra_guard="available_kv_bytes IS NULL AND batched_axis IS NULL", axis=axis)


def _share_engine_batched(con, scope: dict, knobs: dict) -> None:
    """Serve ``engine_capacity_at`` over the batched_tokens axis at the workload context from ``report_engine_batched``.

    ``plan_levers_admission`` (kvreg/sql/284, through ``plan_levers``: the report's levers) re-admits each model's
    recommended engine configuration at every setting of the batched_tokens axis (and its own), at the workload
    context and the report's other engine settings: ``engine_capacity_at([context], batched_axis := …)``.
    ``report_engine_batched`` holds those rows for every listed configuration (scope_engine_capacity.sql, the same one
    evaluation of the admission chain as ``report_engine_capacity_all``), so the levers bind this temp macro instead
    of planning the chain a second time (~0.65 s CPU of DuckDB binding and optimising; benchmarks/README.md, html10).
    As :func:`_share_engine_capacity`: any call these rows cannot answer — no batched axis or a setting off it, a
    given max_num_batched_tokens or memory, other knob values, no or other model or hardware lists, another context —
    raises an error instead of returning a subset; the rows are cut to the call's batched axis and engines.
    ``knobs``: the report's settings (max_num_batched_tokens is the axis here, so it must not be set).
    :func:`unshare_capacity` drops it.
    """
    settings = [b for (b,) in con.execute(
        "SELECT DISTINCT max_num_batched_tokens FROM report_engine_batched ORDER BY 1").fetchall()]
    _serve_from_table(con, "engine_capacity_at", "report_engine_batched", "max_model_len", scope,
                      dict(knobs, max_num_batched_tokens=None),
                      extra_params=" available_kv_bytes := NULL, batched_axis := NULL,",
                      extra_guard=f"available_kv_bytes IS NULL AND batched_axis IS NOT NULL"
                                  f" AND list_has_all({_sql_literal(settings)}, batched_axis)",
                      # a stand-in that depends on t, as _serve_from_table's lists (a NULL axis must reach the guard)
                      extra_filter="list_contains(coalesce(batched_axis, [-t.max_num_batched_tokens]),"
                                   " t.max_num_batched_tokens)")


def unshare_capacity(con) -> None:
    """Drop the temp ``capacity_at`` of :func:`_share_capacity` and any ``engine_capacity_at`` of
    :func:`_share_engine_capacity` (the registry's macros answer again)."""
    con.execute("DROP MACRO TABLE IF EXISTS temp.capacity_at")
    con.execute("DROP MACRO TABLE IF EXISTS temp.engine_capacity_at")


# Views several report queries read through other views and macros, each evaluated anew by every query that reads
# it (DuckDB does not cache a view's rows between statements).  ``speed_efficiency`` (254, fitted from the speed
# measurements; no parameters) is read by ``plans`` (275, via throughput_ceilings 251 and plan_options), the
# ``roofline_at`` macro (260) and efficiency.sql: ~0.5 s CPU each for the Q4 2026 report.
SHARED_VIEWS = ("speed_efficiency",)


def share_views(con) -> None:
    """Materialise each of :data:`SHARED_VIEWS` once into a temp table of the same name.

    DuckDB binds the names in a view's or macro's body when a query uses it, temp schema first, so every view and
    macro that reads ``speed_efficiency`` then reads the temp table: the same rows (it is the view's own result,
    and the view takes no parameters), computed once per report instead of once per query (benchmarks/README.md,
    "reportfast3": the Q4 2026 HTML's queries 6.9 → 5.0 s CPU).  A view missing from the database is skipped.
    :func:`unshare_views` drops the tables.
    """
    present = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary"
                                         ).fetchall()}
    for name in SHARED_VIEWS:
        if name in present:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM main.{name}")


def unshare_views(con) -> None:
    """Drop the temp tables of :func:`share_views` (the registry's views answer again)."""
    for name in SHARED_VIEWS:
        con.execute(f"DROP TABLE IF EXISTS temp.{name}")
