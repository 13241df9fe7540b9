"""Run a report end to end: validate the project, query, render, and write the files atomically.

Nothing is written unless everything succeeded: the registry (report included)
is validated first, HTML and PDF are rendered in memory, and each file is
written to a temporary name in the output folder and renamed into place.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kvreg.problems import KvregError, Problem

FORMATS = ("html", "pdf")


class ReportUsageError(ValueError):
    """The command line named a report file kvreg cannot place in a project (exit 2)."""


def project_of(report_file: Path) -> Path:
    """The project a report file belongs to: the parent of its ``reports/`` folder."""
    report_file = Path(report_file).resolve()
    if report_file.parent.name != "reports":
        raise ReportUsageError(f"{report_file} is not in a reports/ folder of a kvreg project")
    return report_file.parent.parent


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; reports are ordinary files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def render(project: Path | str, report_id: str, formats=FORMATS, *, charts: bool = True,
           progress: Callable[[str], None] | None = None, refused: list[str] | None = None) -> dict[str, bytes]:
    """Render report ``report_id`` of ``project`` in memory.

    Args:
        project: the kvreg project directory.
        report_id: the report's id (its file stem under ``reports/``).
        formats: any of ``html``, ``pdf``.
        charts: draw the charts (False: faster, for tests that only read numbers).
        progress: called with a short message before each slow step.
        refused: collects URLs the PDF renderer refused to fetch.

    Returns:
        ``{format: file bytes}``.

    Raises:
        KvregError: the registry or the report definition has problems, or the report does not exist.
    """
    from kvreg.report.context import build_context
    from kvreg.report.render import render_html

    say = progress or (lambda msg: None)
    project = Path(project)
    con, registry, tables = _database(project, say)
    try:
        if report_id not in registry.entries.get("report", {}):
            known = ", ".join(r for (r,) in con.execute(
                "SELECT report_id FROM report_workloads ORDER BY 1").fetchall()) or "none"
            raise KvregError([Problem(f"reports/{report_id}.yaml", 0, 0, "", "unknown-report",
                                      f"no report {report_id!r} in the project", f"known reports: {known}")])
        say("querying views")
        ctx = build_context(con, registry, report_id, charts=charts, progress=say, tables=tables)
    finally:
        con.close()
    if tables is not None:
        tables.prune()
    out = {}
    if "html" in formats:
        say("rendering HTML")
        out["html"] = render_html(ctx, project).encode("utf-8")
    if "pdf" in formats:
        from kvreg.report.pdf import html_to_pdf

        say("rendering PDF (WeasyPrint)")
        t = time.perf_counter()
        out["pdf"] = html_to_pdf(render_html(ctx, project, for_print=True), refused)
        say(f"PDF rendered in {time.perf_counter() - t:.1f} s")
    return out


def _database(project: Path, say: Callable[[str], None]):
    """``(connection, registry, tables)`` for a report of ``project``: the project's database, reused when up to date,
    and the report's table cache for it (:mod:`kvreg.report.table_cache`; None with the in-memory build).

    The project's ``.kvreg/kvreg.duckdb`` (the one ``kvreg build`` and ``kvreg sql`` use) is rebuilt — the
    registry validated and every table and view created — only when it is missing or older than any input
    (:func:`kvreg.build.is_stale`: every entry file and folder, the view SQL, kvreg's own code), so a second report
    of an unchanged registry skips the validation and the build (1.0 s + 0.7 s CPU for the Q4 2026 report).  It is
    opened read-only, with :func:`report_threads` DuckDB threads; the report's temp tables live in the connection.  A fresh database was built from this
    registry after it validated, so the registry object here holds the report definitions only (read again from
    their files: the templates show their fields).  When the database cannot be written (a read-only project),
    the registry is validated and built in memory instead, as before.  The table cache is keyed on the file's state
    as opened (read-only: no writer can change it while the report runs).

    Raises:
        KvregError: the registry has problems (nothing is written).
    """
    import duckdb

    from kvreg.build import connect_path, duckdb_config, populate
    from kvreg.registry import load_registry

    try:
        db = connect_path(project, progress=say)
    except KvregError as exc:
        if not any(p.code == "cannot-write-db" for p in exc.problems):
            raise
        say("the project's database cannot be written: validating and building in memory")
        registry = load_registry(project)
        con = duckdb.connect(":memory:", config=duckdb_config())
        populate(con, registry)
        return con, registry, None
    try:
        con = duckdb.connect(str(db), read_only=True, config=dict(duckdb_config(), threads=report_threads()))
    except duckdb.Error as exc:
        raise KvregError([Problem(str(db), 0, 0, "", "bad-database", f"{db} is not a kvreg DuckDB database: "
                                  f"{str(exc).splitlines()[0]}", "delete it and run the report again")]) from None
    from kvreg.report.table_cache import TableCache

    return con, _report_definitions(project), TableCache.for_database(project, db)


def report_threads() -> int:
    """DuckDB threads for a report's connection: the cores the chart worker leaves (at least one).

    A report's queries are small and planning-bound (DuckDB's binder and optimizer run on one thread: most of the
    admission chain's ~1 s, benchmarks/README.md "html10"), so a second DuckDB thread shortens little; while the
    charts are drawn the other core is the chart worker's (:data:`kvreg.report.chart_workers.WORKERS`), and DuckDB's
    threads beside it cost CPU both ways: on the 2-core machine the Q4 2026 report's queries took 0.4 s less CPU with
    one thread than with two (7 interleaved pairs, benchmarks/README.md "html12").
    """
    from kvreg.report.chart_workers import WORKERS

    return max(1, (os.cpu_count() or 1) - WORKERS)


def _report_definitions(project: Path):
    """A :class:`kvreg.registry.Registry` holding only the project's report definitions, validated per entry.

    Used with an up-to-date database, which was built after the whole registry (these files included) validated;
    should a definition fail here all the same, the whole registry is loaded so its problems are reported.
    """
    from kvreg.registry import KINDS, Loaded, Registry, _validate, load_registry
    from kvreg.yamlsrc import load_document

    (kind,) = [k for k in KINDS if k.name == "report"]
    entries: dict = {k.name: {} for k in KINDS}
    problems: list = []
    for path in sorted((project / kind.folder).glob("*.y*ml")):
        display = path.relative_to(project).as_posix()
        doc, probs = load_document(path, display)
        entry = _validate(kind, path, display, doc, problems)
        if probs or entry is None:
            return load_registry(project)
        entries["report"][entry.id] = Loaded("report", entry, doc)
    return Registry(project, entries, set())


def _check_out_outside_entries(out: Path, project: Path) -> None:
    """Refuse an output folder inside the project's entry folders (trial11: ``--out registry/models`` wrote the HTML
    and PDF beside the model entries, where the next review would meet them as strays).

    Raises:
        ReportUsageError: naming the folder and the entry folder it lies in.
    """
    from kvreg.folders import FOLDERS

    where = out.resolve()
    for folder in sorted({f.split("/")[0] for f in FOLDERS.values()}):
        top = (project / folder).resolve()
        if where == top or top in where.parents:
            raise ReportUsageError(f"--out {out} is inside the project's {folder}/ folder, which holds registry "
                                   "entries; write the report elsewhere (default: PROJECT/out)")


def make_report(report_file: Path | str, out_dir: Path | str | None = None, formats=FORMATS, *,
                project: Path | str | None = None, progress: Callable[[str], None] | None = None) -> list[Path]:
    """Render ``reports/X.yaml`` to ``OUT/X.html`` and ``OUT/X.pdf``; return the paths written.

    Args:
        report_file: path of the report definition (inside the project's ``reports/`` folder).
        out_dir: output folder (created when missing); default ``PROJECT/out``.
        formats: which of ``html``, ``pdf`` to write.
        project: the project directory; default the parent of the report's ``reports/`` folder.

    Raises:
        KvregError: validation problems; nothing is written.
        ReportUsageError: the report file is not inside a project's ``reports/`` folder, or ``out_dir`` lies in one
            of the project's entry folders (registry/, hardware/, reports/).
    """
    report_file = Path(report_file)
    project = Path(project) if project is not None else project_of(report_file)
    if report_file.resolve().parent != (project / "reports").resolve():
        raise ReportUsageError(f"{report_file} is not in {project / 'reports'}")
    out = Path(out_dir) if out_dir is not None else project / "out"
    _check_out_outside_entries(out, project)   # before the render: nothing is computed for a refused --out
    files = render(project, report_file.stem, formats, progress=progress)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in FORMATS:
        if fmt in files:
            path = out / f"{report_file.stem}.{fmt}"
            _write_atomic(path, files[fmt])
            written.append(path)
    return written
