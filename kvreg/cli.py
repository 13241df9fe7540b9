"""The ``kvreg`` command line: thin commands, each calling one library function.

Heavy libraries (DuckDB, pandas, pandera, WeasyPrint, matplotlib) are imported
inside the commands so that ``kvreg --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kvreg.problems import KvregError

project_option = click.option("--project", "project", type=click.Path(file_okay=False, path_type=Path),
                              default=Path("."), show_default=True, help="The kvreg project directory.")
db_option = click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         help="Database file (default PROJECT/.kvreg/kvreg.duckdb).")


def _fail(exc: KvregError, fmt: str = "text") -> None:
    click.echo(exc.render(fmt), err=fmt == "text")
    sys.exit(1)


def _size(value: str | None) -> float | None:
    from kvreg.units import UnitError, parse_quantity

    if value is None:
        return None
    try:
        return parse_quantity(value, "bytes")
    except UnitError as exc:
        raise click.BadParameter(f"{exc} ({exc.hint})")


def _tokens(values: tuple[str, ...]) -> list[int] | None:
    from kvreg.units import UnitError, parse_quantity

    try:
        return [int(parse_quantity(v, "tokens")) for v in values] or None
    except UnitError as exc:
        raise click.BadParameter(f"{exc} ({exc.hint})")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kvreg")
def main():
    """kvreg: how many concurrent sequences fit, at which context, on which accelerator.

    Registry entries (YAML) are validated, loaded into DuckDB and turned into one
    row per scenario by SQL views: naive, first-principles and engine capacity.
    """


@main.command()
@project_option
@click.option("--format", "fmt", type=click.Choice(["text", "github", "json"]), default="text", show_default=True)
def validate(project: Path, fmt: str):
    """Check every registry entry; print all problems with file:line (exit 1 on problems)."""
    from kvreg.registry import load_registry

    try:
        reg = load_registry(project)
    except KvregError as exc:
        _fail(exc, fmt)
    n = sum(len(v) for v in reg.entries.values())
    if fmt == "json":
        click.echo("[]")
    elif fmt == "text":
        click.echo(f"{n} entries valid.")


@main.command()
@project_option
@db_option
def build(project: Path, db: Path | None):
    """Validate, then write the DuckDB database (atomically: temp file, then rename)."""
    from kvreg.build import build as build_db

    try:
        path = build_db(project, db)
    except KvregError as exc:
        _fail(exc)
    click.echo(f"wrote {path}")


@main.command()
@click.argument("query")
@project_option
@db_option
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def sql(query: str, project: Path, db: Path | None, fmt: str):
    """Run a read-only SQL QUERY against the views (builds the database if needed)."""
    import duckdb

    from kvreg.build import connect
    from kvreg.sqlout import render

    try:
        con = connect(project, db)
    except KvregError as exc:
        _fail(exc)
    try:
        cur = con.execute(query)
    except duckdb.Error as exc:
        raise click.UsageError(str(exc).splitlines()[0])
    click.echo(render(cur, fmt))


@main.command()
@click.argument("model")
@click.argument("hardware", required=False)
@click.option("--context", "contexts", multiple=True, help="Context length(s) in tokens (8Ki, 32768); repeatable.")
@click.option("--kv-dtype", default="bf16", show_default=True)
@click.option("--weights-dtype", default=None, help="Default: the model's own dtype.")
@click.option("--tp", default=1, show_default=True, type=int, help="Tensor-parallel size.")
@click.option("--engine", default="first-principles", show_default=True)
@click.option("--kv-pool", default=None, help="Given KV pool per device (e.g. 40GiB): how many fit?")
@project_option
@db_option
def fit(model, hardware, contexts, kv_dtype, weights_dtype, tp, engine, kv_pool, project, db):
    """Max concurrent sequences of MODEL on HARDWARE: naive vs first principles, with units."""
    from kvreg.build import connect
    from kvreg.fit import UsageError, fit as run_fit, render_fit

    try:
        con = connect(project, db)
    except KvregError as exc:
        _fail(exc)
    try:
        result = run_fit(con, model, hardware, engine=engine, weights_dtype=weights_dtype, kv_dtype=kv_dtype,
                         tp=tp, contexts=_tokens(contexts), kv_pool_bytes=_size(kv_pool))
    except UsageError as exc:
        raise click.UsageError(str(exc))
    click.echo(render_fit(result))


@main.command()
@click.argument("report_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default PROJECT/out).")
@click.option("--format", "formats", default="html,pdf", show_default=True,
              help="Comma-separated: html, pdf.")
@click.option("--project", "project", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The kvreg project directory (default: the parent of the report's reports/ folder).")
def report(report_file: Path, out_dir: Path | None, formats: str, project: Path | None):
    """Render REPORT_FILE (reports/X.yaml) to OUT/X.html and OUT/X.pdf; print the paths written."""
    from kvreg.report.make import FORMATS, ReportUsageError, make_report

    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise click.BadParameter(f"unknown format(s) {', '.join(bad) or '(none)'}; choose from {', '.join(FORMATS)}",
                                 param_hint="--format")
    try:
        written = make_report(report_file, out_dir, chosen, project=project,
                              progress=lambda msg: click.echo(f"… {msg}", err=True))
    except KvregError as exc:
        _fail(exc)
    except ReportUsageError as exc:
        raise click.UsageError(str(exc))
    for path in written:
        click.echo(f"wrote {path}")


if __name__ == "__main__":  # pragma: no cover
    main()
