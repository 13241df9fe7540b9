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
    _engine_section(con, result, engine)


def _engine_section(con, result, engine: str) -> None:
    """``kvreg fit --engine <release>``: append what the release logs and admits, and why (issue #4)."""
    from kvreg.engine_fit import engine_fit, has_accounting, render_engine

    if result.kv_pool_bytes is not None or not has_accounting(con, engine):
        return
    rows, quirks = engine_fit(con, result.model_id, result.hardware_id, engine, result.weights_dtype,
                              result.kv_dtype, result.tp, [r["context_tokens"] for r in result.rows])
    click.echo("")
    click.echo(render_engine(engine, rows, quirks, result.rows))


@main.command("ingest-log")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id", "obs_id", default=None, help="Observation id (default: the file name).")
@click.option("--source", default=None, help="Where the log was published: a URL or a title.")
@click.option("--model", default=None, help="Registry model id (the log rarely names it).")
@click.option("--hardware", default=None, help="Registry hardware id (the log does not name the GPU).")
@click.option("--engine", default=None, help="Engine release id (default: from the version banner).")
@project_option
def ingest_log(file, obs_id, source, model, hardware, engine, project):
    """Parse a vLLM startup log FILE into registry/observations/<id>.yaml (says what it could not tell)."""
    from kvreg.ingest import ingest_file
    from kvreg.logparse import LogError

    try:
        path, msgs = ingest_file(project, file, obs_id=obs_id, source=source, model=model, hardware=hardware,
                                 engine=engine)
    except KvregError as exc:
        _fail(exc)
    except LogError as exc:
        if str(exc).startswith("unknown engine release"):
            raise click.UsageError(str(exc))
        click.echo(f"error: {file}: {exc}", err=True)
        sys.exit(1)
    click.echo(f"wrote {path.relative_to(project) if path.is_relative_to(project) else path}")
    for m in msgs:
        click.echo(f"note: {m}")


@main.command()
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@project_option
@db_option
def calibrate(fmt, project, db):
    """Observed engine startups beside kvreg's predictions; median and worst error per release."""
    from kvreg.build import connect
    from kvreg.calibrate import render

    try:
        con = connect(project, db)
    except KvregError as exc:
        _fail(exc)
    click.echo(render(con, fmt))


if __name__ == "__main__":  # pragma: no cover
    main()
