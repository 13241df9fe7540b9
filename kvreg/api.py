"""The Python API: kvreg's commands as functions returning dataclasses or DuckDB relations.

``import kvreg`` exposes these functions lazily (``kvreg.fit``, ``kvreg.plan``, ...), so importing
the package stays cheap.  They take the same ids and units as the CLI (contexts as ``8K`` /
``32Ki`` / ``20000``, sizes as ``40GiB``) and return the same numbers, in base units (bytes,
tokens, seconds).  Documented with examples in docs/api.md.

Errors:
    KvregError: the registry (or a report definition) has problems; ``exc.problems`` lists them
        with file, line, key, code, message and hint — the same as ``kvreg validate``.
    UsageError: an argument names something that does not exist or is out of range (``unknown
        hardware 'h100'; did you mean h100-nvl-94gb, h100-sxm-80gb, h100-pcie-80gb?``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from kvreg.fit import FitResult, UsageError
from kvreg.plan import PlanResult
from kvreg.problems import KvregError, Problem

__all__ = ["FitResult", "KvregError", "PlanResult", "Problem", "UsageError", "capacity", "connect", "diff", "fit",
           "plan", "query", "report", "validate"]


def _project(project: Path | str) -> Path:
    """``project`` as a Path, refused (UsageError) unless it is a kvreg project directory, as the CLI's
    ``--project`` is: a wrong path must not validate as an empty registry."""
    from kvreg.registry import is_project, project_folders

    root = Path(project)
    if not root.is_dir():
        raise UsageError(f"project {str(root)!r} is not a directory")
    if not is_project(root):
        raise UsageError(f"{str(root)!r} is not a kvreg project: none of {project_folders()} exists"
                         " there (pass project= the folder holding registry/)")
    return root


def _ids(name: str, value: Any) -> list[str]:
    """A list argument given as one id (``hardware="h100-sxm-80gb"``) as a one-element list, not its letters."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise UsageError(f"{name} must be an id or a list of ids, got {value!r}") from None


def _contexts(context: Any) -> list[int] | None:
    """``context`` (one value or several; int or ``8K``-style text) → tokens, or None when not given."""
    from kvreg.units import UnitError, parse_context_tokens

    if context is None:
        return None
    values = [context] if isinstance(context, (str, int, float)) else list(context)
    try:
        return [parse_context_tokens(v) for v in values]
    except UnitError as exc:
        raise UsageError(f"context: {exc} ({exc.hint})") from None


def connect(project: Path | str = ".", db: Path | str | None = None):
    """A read-only DuckDB connection to the project's database, rebuilt first when stale.

    Returns:
        ``duckdb.DuckDBPyConnection`` over every table and view of docs/sql.md.

    Raises:
        KvregError: the registry has problems (nothing is built), or the database cannot be written.
    """
    from kvreg.build import connect as _connect

    return _connect(_project(project), db)


def validate(project: Path | str = "."):
    """Validate every entry of ``project``.

    Returns:
        :class:`kvreg.registry.Registry` (``.of("model")`` → ``{id: ModelEntry}``).

    Raises:
        KvregError: with every problem found.
        UsageError: ``project`` is not a kvreg project directory.
    """
    from kvreg.registry import load_registry

    return load_registry(_project(project))


FIT_OPTIONS = {"engine", "weights_dtype", "kv_dtype", "tp", "knobs"}
"""The keywords :func:`fit` passes on to :func:`kvreg.fit.fit`; another is a UsageError, not a TypeError."""


def fit(model: str, hardware: str | None = None, *, context: Any = None, kv_pool: Any = None,
        project: Path | str = ".", db: Path | str | None = None, **options) -> FitResult:
    """How many concurrent sequences of ``model`` fit on ``hardware`` (``kvreg fit``).

    Args:
        model, hardware: registry ids (hardware may be None when ``kv_pool`` is given).
        context: a context (``8192``, ``"8K"`` = 8,000, ``"8Ki"`` = 8,192) or a list of them;
            default the contexts axis.
        kv_pool: a KV pool per device with its unit (``"40GiB"``, ``"40GB"``, ``"42949672960 B"``): how many
            fit in it; a bare number (``40``) is a UsageError, as on the command line.
        options: ``engine``, ``weights_dtype``, ``kv_dtype``, ``tp`` and any other keyword
            :func:`kvreg.fit.fit` takes.

    Returns:
        :class:`FitResult`; ``rows`` has one dict per context with the ``capacity`` columns
        (``max_seqs``, ``seq_bytes``, ``pool_bytes``, ``naive_max_seqs`` ...).

    Example:
        >>> r = kvreg.fit("llama-3.1-8b", "h100-sxm-80gb", context="8Ki")
        >>> r.rows[0]["max_seqs"]
        58
    """
    from kvreg.fit import fit as _fit
    from kvreg.units import UnitError, parse_pool_bytes

    pool = None
    if kv_pool is not None:
        try:
            pool = parse_pool_bytes(kv_pool)  # the CLI's parser: a bare 40 is refused, never 40 bytes
        except UnitError as exc:
            raise UsageError(f"kv_pool: {exc} ({exc.hint})") from None
    unknown = sorted(set(options) - FIT_OPTIONS)
    if unknown:
        raise UsageError(f"fit() has no option {', '.join(unknown)} (options: {', '.join(sorted(FIT_OPTIONS))})")
    contexts = _contexts(context)
    con = connect(project, db)
    try:
        return _fit(con, model, hardware, contexts=contexts, kv_pool_bytes=pool, **options)
    finally:
        con.close()


def plan(model: str, *, users: int | None, context: Any, tpot_ms: float, ttft_ms: float | None = None,
         weights_dtypes: Iterable[str] = (), kv_dtypes: Iterable[str] = (), hardware: Iterable[str] = (),
         engine: str = "first-principles", project: Path | str = ".", db: Path | str | None = None,
         **options) -> PlanResult:
    """The accelerators a workload needs, cheapest first (``kvreg plan``).

    Args:
        model: registry model id.
        users: concurrent requests to serve (≥ 1), or None with ``workload={"request_rate_per_s": …}``.
        context: tokens each sequence holds at its end (``"8K"``, ``8192``), or None with the input and
            output lengths in ``workload`` (:data:`kvreg.plan.WORKLOAD_FIELDS`; see :func:`kvreg.plan.resolve_workload`).
        tpot_ms, ttft_ms: time per output token each sequence needs, and optionally the
            time-to-first-token target, in milliseconds.
        weights_dtypes, kv_dtypes, hardware: restrict the comparison (default: all).
        options: any other keyword :func:`kvreg.plan.plan` takes.

    Returns:
        :class:`PlanResult`: ``feasible`` (ranked), ``unranked``, ``infeasible``; one dict per
        configuration with the ``plans`` columns (``replicas``, ``gpus``, ``usd_per_hour`` ...).

    Example:
        >>> p = kvreg.plan("llama-3.1-8b", users=64, context="8K", tpot_ms=50)
        >>> p.feasible[0]["hardware_id"]
    """
    import math

    from kvreg.plan import plan as _plan

    if not (users is None or (isinstance(users, int) and 1 <= users <= 10**9)):
        raise UsageError(f"users must be a whole number from 1 to 10^9, got {users!r}")
    for name, v in (("tpot_ms", tpot_ms), ("ttft_ms", ttft_ms)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and 1e-3 <= v <= 1e7):
            raise UsageError(f"{name} must be a finite number of milliseconds from 0.001 to 10^7, got {v!r}")
    (tokens,) = _contexts(context) or [None]
    con = connect(project, db)
    try:
        return _plan(con, model, users=users, context_tokens=tokens, tpot_s=tpot_ms / 1e3,
                     ttft_s=None if ttft_ms is None else ttft_ms / 1e3,
                     weights_dtypes=_ids("weights_dtypes", weights_dtypes), kv_dtypes=_ids("kv_dtypes", kv_dtypes),
                     engine=engine, hardware=_ids("hardware", hardware), **options)
    finally:
        con.close()


def capacity(project: Path | str = ".", db: Path | str | None = None, **where):
    """The ``capacity`` view (one row per scenario) as a DuckDB relation, filtered by column values.

    Args:
        where: ``column=value`` equalities (``model_id="llama-3.1-8b", tp=1``); a list or tuple
            value means "one of".  Columns are those of docs/sql.md; an unknown one is a UsageError, and so
            is an id (``model_id``, ``hardware_id``, ``engine_id``) the registry does not have.

    Returns:
        ``duckdb.DuckDBPyRelation`` (lazy: ``.df()``, ``.fetchall()``, ``.filter("...")``, ``.aggregate``).

    Example:
        >>> kvreg.capacity(model_id="llama-3.1-8b", hardware_id="h100-sxm-80gb", tp=1,
        ...                context_tokens=8192, kv_dtype="bf16", weights_dtype="bf16").fetchall()
    """
    return _relation("capacity", project, db, where)


def query(sql: str, project: Path | str = ".", db: Path | str | None = None):
    """Run one SQL statement on a locked connection, as ``kvreg sql`` does (nothing can be written,
    attached, installed or fetched; see kvreg/sandbox.py).  Named ``query``, not ``sql``: the
    package ``kvreg.sql`` holds the view files.

    Returns:
        ``duckdb.DuckDBPyRelation`` of the query's rows (its connection stays open with it).

    Raises:
        UsageError: the query failed or was refused (DuckDB's first error line).
    """
    import duckdb

    from kvreg.build import connect_path
    from kvreg.sandbox import SandboxError, query_connection
    from kvreg.sqlout import query_error_text

    try:
        con = query_connection(connect_path(_project(project), db))
        return con.sql(sql)
    except SandboxError as exc:
        raise UsageError(str(exc)) from None
    except duckdb.Error as exc:
        raise UsageError(query_error_text(exc)) from None


# id columns a filter is checked against (an unknown id would return no rows, silently)
_ID_TABLES = {"model_id": "models", "hardware_id": "hardware", "engine_id": "engines"}


def _relation(view: str, project, db, where: dict):
    con = connect(project, db)
    rel = con.table(view)
    clauses, params = [], []
    for column, value in where.items():
        if column not in rel.columns:
            from kvreg.suggest import near_ids

            near = near_ids(column, list(rel.columns))
            raise UsageError(f"{view} has no column {column!r}" + (f"; did you mean {', '.join(near)}?" if near else ""))
        if column in _ID_TABLES:
            from kvreg.fit import check_known

            table = _ID_TABLES[column]
            for v in (list(value) if isinstance(value, (list, tuple, set)) else [value]):
                check_known(con, table, column, v, column.removesuffix("_id"))
        if isinstance(value, (list, tuple, set)):
            values = list(value)
            clauses.append(f'"{column}" IN ({", ".join("?" for _ in values)})')
            params.extend(values)
        else:
            clauses.append(f'"{column}" = ?')
            params.append(value)
    query = f'SELECT * FROM "{view}"' + (" WHERE " + " AND ".join(clauses) if clauses else "")
    return con.sql(query, params=params) if params else con.sql(query)


def report(report_file: Path | str, out: Path | str | None = None, formats: Iterable[str] = ("html", "pdf"),
           project: Path | str | None = None) -> list[Path]:
    """Render a report definition (``reports/X.yaml``) to HTML and/or PDF (``kvreg report``).

    Returns:
        The paths written (``OUT/X.html``, ``OUT/X.pdf``).

    Raises:
        KvregError: the registry or the report definition has problems.
        UsageError: an unknown format.
    """
    from kvreg.formats import noun_for
    from kvreg.report.make import FORMATS, ReportUsageError, make_report

    chosen = list(formats)
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise UsageError(f"unknown {noun_for(len(bad), 'format')} {', '.join(bad) or '(none)'}; choose from {', '.join(FORMATS)}")
    try:
        return make_report(Path(report_file), None if out is None else Path(out), chosen,
                           project=None if project is None else Path(project))
    except ReportUsageError as exc:
        raise UsageError(str(exc)) from None


def diff(base: str, head: str | None = None, project: Path | str = ".", **options):
    """What a registry change moves, BASE → HEAD (``kvreg diff``).

    Args:
        base, head: git revisions of the project's repository or directories; head None is the
            working tree.
        options: ``threshold_pct``, ``all_scenarios``, ``progress`` (see :func:`kvreg.diff.diff_projects`).

    Returns:
        :class:`kvreg.diff.DiffResult` (entries changed key by key, moved figures, flipped
        recommendations); ``kvreg.diff.render.render(result, "json")`` gives the CLI's JSON.

    Raises:
        UsageError: ``base`` or ``head`` is neither a directory nor a revision.
        KvregError: either side has problems (``exc.side`` says which).
    """
    from kvreg.diff import RevisionError, diff_projects

    try:
        return diff_projects(base, head, _project(project), **options)
    except RevisionError as exc:
        raise UsageError(str(exc)) from None
