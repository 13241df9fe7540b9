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
    import duckdb

    from kvreg.build import duckdb_config, populate
    from kvreg.registry import load_registry
    from kvreg.report.context import build_context
    from kvreg.report.render import render_html

    say = progress or (lambda msg: None)
    project = Path(project)
    registry = load_registry(project)
    if report_id not in registry.entries.get("report", {}):
        known = ", ".join(sorted(registry.entries.get("report", {}))) or "none"
        raise KvregError([Problem(f"reports/{report_id}.yaml", 0, 0, "", "unknown-report",
                                  f"no report {report_id!r} in the project", f"known reports: {known}")])
    con = duckdb.connect(":memory:", config=duckdb_config())
    try:
        populate(con, registry)
        say("querying views")
        ctx = build_context(con, registry, report_id, charts=charts)
    finally:
        con.close()
    out = {}
    if "html" in formats:
        out["html"] = render_html(ctx, project).encode("utf-8")
    if "pdf" in formats:
        from kvreg.report.pdf import html_to_pdf

        say("rendering PDF (WeasyPrint)")
        t = time.perf_counter()
        out["pdf"] = html_to_pdf(render_html(ctx, project, for_print=True), refused)
        say(f"PDF rendered in {time.perf_counter() - t:.1f} s")
    return out


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
        ReportUsageError: the report file is not inside a project's ``reports/`` folder.
    """
    report_file = Path(report_file)
    project = Path(project) if project is not None else project_of(report_file)
    if report_file.resolve().parent != (project / "reports").resolve():
        raise ReportUsageError(f"{report_file} is not in {project / 'reports'}")
    files = render(project, report_file.stem, formats, progress=progress)
    out = Path(out_dir) if out_dir is not None else project / "out"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in FORMATS:
        if fmt in files:
            path = out / f"{report_file.stem}.{fmt}"
            _write_atomic(path, files[fmt])
            written.append(path)
    return written
