"""How ``kvreg plan`` evaluates its queries, the rows unchanged: DuckDB optimizer passes switched off and the schemas
of stand-ins put first on the search path (kvreg/sql/276 ``first_principles``, 277 ``release_blocks``, 278
``plan_admission``), and the one admission table of an engine-release plan (:func:`plan_admission`).

Only evaluation: every stand-in gives main's rows for the calls a plan makes (tests/test_plan_evaluation.py compares
plans with and without them; benchmarks/README.md "Speed commands" says what each saves).
"""

from __future__ import annotations

import contextlib


PLAN_OPTIMIZERS_OFF = ("projection_pullup",)
"""DuckDB optimizer passes switched off while ``plan`` runs its ``ranked_plans`` query.  An optimizer pass only
chooses how a query runs, never what it returns; DuckDB 2.0's projection pull-up spent more than half of the
optimising time of this one deep query (the engine-admission chain inlined through ``plans`` and ``capacity_at``):
``kvreg plan --engine vllm-0.33`` (llama-3.1-8b, 2 devices) 4.0 → 2.4 s CPU, the same rows (benchmarks/README.md,
"Speed commands")."""


@contextlib.contextmanager
def optimizers_off(con, names: tuple[str, ...]):
    """Switch DuckDB's optimizer passes ``names`` off on ``con`` for the ``with`` block, then restore the setting
    (``disabled_optimizers``) the connection had."""
    (before,) = con.execute("SELECT current_setting('disabled_optimizers')").fetchone()
    now = sorted({n.strip() for n in (before or "").split(",") if n.strip()} | set(names))
    con.execute(f"SET disabled_optimizers = '{','.join(now)}'")
    try:
        yield
    finally:
        if before:
            con.execute(f"SET disabled_optimizers = '{before}'")
        else:
            con.execute("RESET disabled_optimizers")


FIRST_PRINCIPLES_SCOPE = "first_principles"
"""The schema of stand-ins for the engine-release macros (kvreg/sql/276_first_principles_scope.sql): put first on
DuckDB's search path for a first-principles plan, so its ranking is bound without the engine admission chain."""

RELEASE_BLOCKS_SCOPE = "release_blocks"
"""The schema of stand-ins for the block-layout macros at the release default block size
(kvreg/sql/277_release_blocks_scope.sql: the rows of the persisted views engine_kv_buckets and engine_kv_layout):
put first on DuckDB's search path for an engine-release plan with no ``block_size`` knob, so its admission is
bound and run without the layout chain."""

PLAN_ADMISSION_SCOPE = "plan_admission"
"""The schema of the stand-in ``engine_capacity_at`` that reads the temp table ``plan_admission_rows``
(kvreg/sql/278_plan_admission_scope.sql): put first on DuckDB's search path for an engine-release plan's ranking,
after :func:`plan_admission` made that table, so the ranking and the levers read one admission table."""

ADMISSION_SQL = ("CREATE OR REPLACE TEMP TABLE plan_admission_rows AS SELECT * FROM engine_capacity_at([?],"
                 " batched_axis := ?, gpu_memory_utilization := ?, max_num_seqs := ?, enforce_eager := ?,"
                 " num_speculative_tokens := ?, block_size := ?, only_models := ?, only_hardware := ?,"
                 " only_engines := ?)")


def _has_schema(con, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_schemas() WHERE database_name = current_database()"
                            " AND schema_name = ?", [name]).fetchone()[0])


@contextlib.contextmanager
def search_first(con, schema: str | None):
    """``schema`` first on ``con``'s DuckDB search path for the ``with`` block (when the database has it; None or
    a missing schema: the path unchanged), then the connection's own path again."""
    if schema is None or not _has_schema(con, schema):
        yield
        return
    (before,) = con.execute("SELECT current_setting('search_path')").fetchone()
    con.execute(f"SET search_path = '{schema},{before or 'main'}'")
    try:
        yield
    finally:
        if before:
            con.execute(f"SET search_path = '{before}'")
        else:
            con.execute("RESET search_path")


@contextlib.contextmanager
def plan_settings(con, engine: str, block_size: int | None = None):
    """The settings ``plan`` runs its ``ranked_plans`` and ``plan_levers`` queries under, on ``con``, for the
    ``with`` block, then the connection's own again: :data:`PLAN_OPTIMIZERS_OFF` switched off, and first on the
    search path (when the database has the schema) for ``engine`` 'first-principles' the
    :data:`FIRST_PRINCIPLES_SCOPE`, for an engine release with ``block_size`` None (the release's) the
    :data:`RELEASE_BLOCKS_SCOPE`.  Both change how the query is evaluated, never its rows
    (tests/test_plan_evaluation.py compares them)."""
    scope = FIRST_PRINCIPLES_SCOPE if engine == "first-principles" else (
        RELEASE_BLOCKS_SCOPE if block_size is None else None)
    with optimizers_off(con, PLAN_OPTIMIZERS_OFF), search_first(con, scope):
        yield


def plan_admission(con, model: str, engine: str, context_tokens: int, hardware: list[str] | None,
                   knobs: dict | None) -> str | None:
    """Make the temp table ``plan_admission_rows``: ``engine_capacity_at`` (kvreg/sql/220) for ``model`` under the
    engine release ``engine`` on ``hardware`` (None = every device) at ``context_tokens`` and the ``knobs`` given, over
    ``plan_batched_axis`` (284: the batched_tokens axis and any ``max_num_batched_tokens`` given) — the one admission
    table the plan's ranking (through :data:`PLAN_ADMISSION_SCOPE`) and its levers' re-admission
    (``plan_levers_admission_of``) read.  Returns the scope to rank under, or None (first-principles, or a database
    without the schema: the ranking then binds the admission chain itself).  Run under :func:`plan_settings`.

    The axis goes in as a constant: a subquery there keeps DuckDB from folding engine_capacity_at's ``batched_axis
    IS NULL`` tests (kvreg/report/queries/batched_axis.sql says the same of the report's)."""
    if engine == "first-principles" or not _has_schema(con, PLAN_ADMISSION_SCOPE):
        return None
    k = knobs or {}
    (axis,) = con.execute("SELECT axis FROM plan_batched_axis(?::BIGINT[])",
                          [[k.get("max_num_batched_tokens")]]).fetchone()
    con.execute(ADMISSION_SQL, [context_tokens, axis, k.get("gpu_memory_utilization"), k.get("max_num_seqs"),
                                k.get("enforce_eager"), k.get("num_speculative_tokens"), k.get("block_size"),
                                [model], list(hardware) if hardware else None, [engine]])
    return PLAN_ADMISSION_SCOPE
