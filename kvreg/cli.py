"""The ``kvreg`` command line: thin commands, each calling one library function.

Heavy libraries (DuckDB, pandas, pandera, WeasyPrint, matplotlib) are imported
inside the commands so that ``kvreg --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kvreg.cli_types import Bounded
from kvreg.problems import KvregError
from kvreg.units import CONTEXT_HELP, MAX_CONTEXT_TOKENS

# Upper bounds of the count options: a count of requests or sequences as large as plan's --users (10^9), a
# count of tokens as large as a context may be (kvreg.units.MAX_CONTEXT_TOKENS, 2^34: 64-bit sums).
MAX_SEQUENCES = 10**9

def _is_project(ctx, param, value: Path) -> Path:
    """Refuse a directory with none of the registry folders (running in the wrong folder must not pass)."""
    from kvreg.folders import is_project, project_folders   # no pydantic: every command passes here

    if not is_project(value):
        raise click.BadParameter(f"{value} is not a kvreg project: none of {project_folders()}"
                                 " exists there (cd into the project or pass --project DIR)")
    return value


project_option = click.option("--project", "project", type=click.Path(exists=True, file_okay=False, path_type=Path),
                              default=Path("."), show_default=True, callback=_is_project,
                              help="The kvreg project directory.")
db_option = click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         help="Database file (default PROJECT/.kvreg/kvreg.duckdb).")


def progress_shown() -> bool:
    """The one progress rule of every command (docs/json.md "Progress"): progress lines go to stderr when stderr
    is a terminal, or with ``KVREG_PROGRESS=1`` (CI logs) whatever stderr is; ``KVREG_PROGRESS=0`` or the
    command's ``--quiet`` silences them.  They never go to stdout, so ``--format json`` stays one document."""
    import os

    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.find_root().meta.get("kvreg.quiet"):
        return False
    env = os.environ.get("KVREG_PROGRESS")
    return env not in ("", "0") if env is not None else sys.stderr.isatty()


def progress(message: str) -> None:
    """One progress line on stderr (``… message``) before a step that can take seconds, by :func:`progress_shown`."""
    if progress_shown():
        click.echo(f"… {message}", err=True)


def _set_quiet(ctx, param, value: bool) -> None:
    if value:
        ctx.find_root().meta["kvreg.quiet"] = True


# Shared by every command that reports progress (build, sql, export, fit, plan, calibrate, diff, report).
quiet_option = click.option("--quiet", "-q", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
                            help="No progress lines on stderr (as KVREG_PROGRESS=0).")


def engine_knob_options(f):
    """The engine settings a user sets, shared by ``fit`` and ``plan`` (None = the release default)."""
    opts = [
        click.option("--gpu-memory-utilization", type=Bounded(float, 0, 1, low_open=True, what="a fraction"),
                     default=None, help="Fraction of device memory the engine claims (default: the release's)."),
        click.option("--max-num-seqs", type=Bounded(int, 1, MAX_SEQUENCES, what="sequences"), default=None,
                     help="Most sequences the engine schedules at once (default: the release's, per device)."),
        click.option("--max-num-batched-tokens", type=Bounded(int, 1, MAX_CONTEXT_TOKENS, what="tokens"), default=None,
                     help="Tokens per scheduler step (default: the release's, per device)."),
        click.option("--enforce-eager/--no-enforce-eager", default=None,
                     help="No CUDA graphs (default: off, graphs captured)."),
        click.option("--num-speculative-tokens", type=Bounded(int, 0, MAX_CONTEXT_TOKENS, what="tokens"), default=None,
                     help="Draft tokens per step (default: the served model's own; plumbed, no effect yet)."),
        # plain int: kvreg.plan.check_block_size names the option and the release's allowed values
        click.option("--block-size", type=int, default=None,
                     help="KV-cache block size in tokens (default: the release's; vLLM: 16, 32, 64, 128 from 0.17)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _knobs(kw: dict) -> dict:
    """The engine settings from a command's keyword arguments (only those given)."""
    from kvreg.plan import KNOBS

    return {k: kw.get(k) for k in KNOBS}


def _fail(exc: KvregError, fmt: str = "text") -> None:
    click.echo(exc.render(fmt if fmt in ("json", "github") else "text"), err=fmt not in ("json", "github"))
    sys.exit(1)


def _dumps(obj) -> str:
    from kvreg.sqlout import dumps

    return dumps(obj)


def _size(value: str | None, option: str = "--kv-pool") -> float | None:
    """A size option (``--kv-pool 40GiB``) in bytes, read by kvreg.units.parse_pool_bytes (the API's parser too);
    None when not given; a usage error naming ``option`` and the accepted range (a positive size with its unit,
    below 2^63 bytes: kvreg.units.MAX_QUANTITY) otherwise."""
    from kvreg.units import UnitError, parse_pool_bytes

    if value is None:
        return None
    accepted = "it takes a positive size with its unit, below 2^63 bytes (8 EiB)"
    try:
        return parse_pool_bytes(value)
    except UnitError as exc:
        raise click.BadParameter(f"{exc}; {accepted} ({exc.hint})", param_hint=f"'{option}'")


def _listed(ctx, param, values: tuple[str, ...]) -> tuple[str, ...]:
    """click callback: a repeatable option also takes comma-separated values (``--weights-dtype bf16,fp8`` is
    ``--weights-dtype bf16 --weights-dtype fp8``); empty items are a usage error naming the option."""
    out = []
    for v in values:
        items = [x.strip() for x in v.split(",")]
        if any(not x for x in items):
            raise click.BadParameter(f"{v!r} has an empty item (separate values by commas with none empty,"
                                     " e.g. bf16,fp8 or h100-sxm-80gb,h200)")
        out.extend(items)
    return tuple(out)


# The range every token-count option takes, said in its usage error (kvreg.units.parse_context_tokens).
TOKENS_ACCEPTED = f"it takes a whole number of tokens from 1 to {MAX_CONTEXT_TOKENS:,} (2^34)"


def _tokens(values: tuple[str, ...]) -> list[int] | None:
    """Contexts as fit and plan both read them (kvreg.units.parse_context_tokens); None when none given."""
    from kvreg.units import UnitError, parse_context_tokens

    try:
        return [parse_context_tokens(v) for v in values] or None
    except UnitError as exc:
        raise click.BadParameter(f"{exc}; {TOKENS_ACCEPTED} ({exc.hint})", param_hint="'--context'")


def _length(name: str, value: str | None) -> int | None:
    """A workload length option (``--input-tokens`` …) in tokens, read like a context; ``0`` is no shared prefix."""
    from kvreg.units import UnitError, parse_context_tokens

    if value is None or (name == "shared_prefix_tokens" and value.strip() == "0"):
        return None
    try:
        return parse_context_tokens(value)
    except UnitError as exc:
        raise click.BadParameter(f"{exc}; {TOKENS_ACCEPTED} ({exc.hint})".replace("context", "length", 1),
                                 param_hint=f"'--{name.replace('_', '-')}'")


class _Guarded(click.Group):
    """The command group with a last guard: a bug shows one line (exit 3), not a Python traceback.

    Every input mistake is caught earlier and reported as a problem (exit 1) or a usage error
    (exit 2); what reaches this guard is kvreg's fault, so it says so and how to see the
    traceback (``KVREG_DEBUG=1``).  The fuzz tests (tests/test_fuzz_*.py) fail on exit 3.
    """

    def invoke(self, ctx):
        import os

        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit,
                KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into a message
            if os.environ.get("KVREG_DEBUG"):
                raise
            import duckdb

            if isinstance(exc, duckdb.OutOfMemoryException):
                limit = os.environ.get("KVREG_MEMORY_LIMIT") or "unset: DuckDB's default, 80 % of RAM"
                click.echo(f"kvreg: DuckDB ran out of memory (KVREG_MEMORY_LIMIT {limit})\n  raise KVREG_MEMORY_LIMIT, "
                           "or filter the query (a model, hardware or engine)", err=True)
                sys.exit(1)
            click.echo(f"kvreg: internal error ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
                       "\n  this is a bug in kvreg, not in your input; rerun with KVREG_DEBUG=1 for the traceback "
                       "and report it", err=True)
            sys.exit(3)


@click.group(cls=_Guarded, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kvreg")
def main():
    """kvreg: how many concurrent sequences fit, at which context, on which accelerator.

    Registry entries (YAML) are validated, loaded into DuckDB and turned into one
    row per scenario by SQL views: naive, first-principles and engine capacity.
    """


@main.command()
@project_option
@click.option("--format", "fmt", type=click.Choice(["text", "github", "json"]), default="text", show_default=True)
@click.option("--stats", is_flag=True, help="also print the provenance count: numbers with a source and a confidence")
def validate(project: Path, fmt: str, stats: bool):
    """Check every registry entry; print all problems with file:line (exit 1 on problems)."""
    from kvreg.formats import counted
    from kvreg.registry import load_registry

    try:
        reg = load_registry(project)
    except KvregError as exc:
        _fail(exc, fmt)
    n = sum(len(v) for v in reg.entries.values())
    if stats:
        from kvreg.provenance import provenance_stats, render_stats

        rows = provenance_stats(reg)
    if fmt == "json":
        # the problem list (empty); with --stats an object holding it and the provenance rows (docs/json.md)
        click.echo(_dumps({"problems": [], "entries": n, "provenance": rows}) if stats else "[]")
    elif fmt == "text":
        click.echo(f"{counted(n, 'entry', 'entries')} valid.")
    if stats and fmt != "json":
        click.echo(render_stats(rows))


@main.command()
@quiet_option
@project_option
@db_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def build(project: Path, db: Path | None, fmt: str):
    """Validate, then write the DuckDB database (atomically: temp file, then rename)."""
    from kvreg.build import build as build_db

    try:
        path = build_db(project, db, progress)
    except KvregError as exc:
        _fail(exc, fmt)
    click.echo(_dumps({"path": str(path)}) if fmt == "json" else f"wrote {path}")


@main.command()
@quiet_option
@click.argument("query")
@project_option
@db_option
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--table", "tables", multiple=True, metavar="NAME=FILE",
              help="Load a local .csv/.parquet/.json FILE as temporary table NAME before the query runs "
                   "(the query itself can read no file); repeatable.")
def sql(query: str, project: Path, db: Path | None, fmt: str, tables: tuple[str, ...]):
    """Run one read-only SQL QUERY against the views (builds the database if needed).

    The connection cannot change anything: it is read-only, with file, network and extension
    access disabled and its configuration locked (kvreg/sandbox.py); write files with kvreg export.
    """
    import duckdb

    from kvreg.build import connect_path
    from kvreg.sandbox import QueryInterrupted, SandboxError, interruptible, parse_table_option, query_connection
    from kvreg.sqlout import query_error_text, render

    if not query.strip():
        raise click.UsageError("QUERY is empty: give a SQL statement, e.g. \"SELECT * FROM capacity LIMIT 5\"")
    try:
        loaded = [parse_table_option(t) for t in tables]
        path = connect_path(project, db, progress)
        con = query_connection(path, loaded)
    except KvregError as exc:
        _fail(exc)
    except SandboxError as exc:
        raise click.UsageError(str(exc))
    try:
        statements = con.extract_statements(query)
        if len(statements) > 1:
            raise click.UsageError(f"QUERY holds {len(statements)} statements; kvreg sql runs one at a time "
                                   "(only the last one's rows would show): run each on its own")
        def work():
            cur = con.execute(query)
            return render(cur, fmt) if cur.description else "(statement ran; it returned no rows)"

        text = interruptible(con, work)
    except QueryInterrupted as exc:
        # one line, and 128 + the signal as a shell reports it (130 for Ctrl-C); the spill folder goes at exit
        click.echo(f"kvreg sql: interrupted ({'SIGINT' if exc.signum == 2 else 'SIGTERM'}); the query was stopped",
                   err=True)
        sys.exit(128 + exc.signum)
    except duckdb.Error as exc:
        _query_failed(query_error_text(exc), "sql")
    finally:
        con.close()  # frees the locked DuckDB instance (the next query in this process opens its own)
    click.echo(text)


def _query_failed(message: str, command: str) -> None:
    """Print a failed query's error on stderr, one ``Error:`` line and its hint, without click's usage banner
    (the command line was right; the query was not), and exit: 2 when the sandbox refused the statement (a
    write, a file read, a setting), 1 when the query itself failed (``SELECT 'a'::INT``: a conversion, an unknown
    column).  docs/sql.md "Exit codes"."""
    refusal = _sql_refusal(message, command)
    click.echo(f"Error: {refusal}", err=True)
    sys.exit(2 if refusal != message else 1)


def _sql_refusal(message: str, command: str = "sql") -> str:
    """DuckDB's first error line, with what to do instead when it is the sandbox refusing ``kvreg COMMAND``
    (``sql`` or ``export``: the hint names the command the user ran)."""
    if any(w in message for w in ("disabled by configuration", "disabled through configuration", "has been locked")):
        if command == "export":
            return (f"{message}\n  kvreg export cannot read other files, attach databases, install or load "
                    "extensions, fetch URLs or change settings: it writes the rows of a view or a SELECT over "
                    "the registry's views to the --to file only")
        return (f"{message}\n  kvreg sql cannot write files, attach databases, install or load extensions, fetch "
                "URLs or change settings; to save rows use: kvreg export VIEW --to FILE.parquet [--where ...]; "
                "to join a local file use --table NAME=FILE")
    if "read-only mode" in message:
        return f"{message}\n  kvreg {command} is read-only: change the registry's YAML entries instead"
    return message


@main.command("export")
@quiet_option
@click.argument("what", metavar="VIEW|QUERY")
@click.option("--to", "target", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Output FILE.parquet or FILE.csv (written to a temp file, then renamed).")
@click.option("--where", default=None, help="SQL condition on the rows, e.g. \"tp = 1 AND context_tokens = 8192\".")
@project_option
@db_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def export_cmd(what: str, target: Path, where: str | None, project: Path, db: Path | None, fmt: str):
    """Write a view (or one SELECT) to a Parquet or CSV file, by DuckDB, atomically."""
    import json

    from kvreg.build import connect_path
    from kvreg.formats import counted
    from kvreg.sandbox import QueryError, QueryInterrupted, SandboxError, export

    try:
        rows = export(connect_path(project, db, progress), what, target, where)
    except KvregError as exc:
        _fail(exc, fmt)
    except QueryInterrupted as exc:  # the temporary file is removed by export; nothing is written
        click.echo(f"kvreg export: interrupted ({'SIGINT' if exc.signum == 2 else 'SIGTERM'}); nothing was written",
                   err=True)
        sys.exit(128 + exc.signum)
    except QueryError as exc:
        _query_failed(str(exc), "export")
    except SandboxError as exc:
        raise click.UsageError(str(exc))
    if fmt == "json":
        click.echo(json.dumps({"path": str(target), "rows": rows, "format": target.suffix.lower().lstrip(".")}))
    else:
        click.echo(f"wrote {target} ({counted(rows, 'row')})")


@main.command()
@quiet_option
@click.argument("model")
@click.argument("hardware", required=False)
@click.option("--context", "contexts", multiple=True,
              help=f"{CONTEXT_HELP}; any positive count, beyond the model's native context with a warning;"
                   " repeatable.")
@click.option("--kv-dtype", default="bf16", show_default=True)
@click.option("--weights-dtype", default=None, help="Default: the model's own dtype.")
@click.option("--tp", default=1, show_default=True, type=int, help="Tensor-parallel size.")
@click.option("--engine", default="first-principles", show_default=True)
@click.option("--kv-pool", default=None, help="Given KV pool per device (e.g. 40GiB): how many fit?")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: the fit's settings, one object per context (capacity columns), warnings (docs/json.md).")
@engine_knob_options
@project_option
@db_option
def fit(model, hardware, contexts, kv_dtype, weights_dtype, tp, engine, kv_pool, fmt, project, db, **knobs):
    """Max concurrent sequences of MODEL on HARDWARE: naive vs first principles, with units."""
    from kvreg.build import connect
    from kvreg.fit import UsageError, fit as run_fit, render_fit

    try:
        con = connect(project, db, progress=progress)
    except KvregError as exc:
        _fail(exc)
    try:
        result = run_fit(con, model, hardware, engine=engine, weights_dtype=weights_dtype, kv_dtype=kv_dtype,
                         tp=tp, contexts=_tokens(contexts), kv_pool_bytes=_size(kv_pool), knobs=_knobs(knobs))
    except UsageError as exc:
        raise click.UsageError(str(exc))
    if fmt == "json":
        import dataclasses

        from kvreg.fit import fit_warnings

        out = dataclasses.asdict(result)
        # capacity_at's per-device weights are weights_bytes_per_rank (one meaning per name: model_weights'
        # weights_bytes is the whole model); each row keeps the first key as well (docs/json.md: never renamed)
        for row in out["rows"]:
            row["weights_bytes"] = row.get("weights_bytes_per_rank")
        click.echo(_dumps({**out, "warnings": fit_warnings(result)}))
        return
    click.echo(render_fit(result))
    _engine_section(con, result, engine)


def _engine_section(con, result, engine: str) -> None:
    """``kvreg fit --engine <release>``: append what the release logs and admits, and why (issue #4)."""
    from kvreg.engine_fit import engine_fit, has_accounting, render_engine

    if result.kv_pool_bytes is not None or not has_accounting(con, engine) or result.tp_refusal:
        return   # a TP whose heads do not split: the release refuses at load, no figures (render_fit said why)
    rows, quirks = engine_fit(con, result.model_id, result.hardware_id, engine, result.weights_dtype,
                              result.kv_dtype, result.tp, [r["context_tokens"] for r in result.rows], result.knobs)
    click.echo("")
    click.echo(render_engine(engine, rows, quirks, result.rows))


@main.command("ingest-log")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id", "obs_id", default=None, help="Observation id (default: the file name).")
@click.option("--source", default=None, help="Where the log was published: a URL or a title.")
@click.option("--model", default=None, help="Registry model id (the log rarely names it).")
@click.option("--hardware", default=None, help="Registry hardware id (the log does not name the GPU).")
@click.option("--engine", default=None, help="Engine release id (default: from the version banner).")
@click.option("--force", is_flag=True, help="Replace an existing observation (its curated fields are kept); keep a "
              "log whose own figures disagree, recording figures_disagree.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: {\"path\": the file written, \"notes\": what the log did not say} (docs/json.md).")
@project_option
def ingest_log(file, obs_id, source, model, hardware, engine, force, fmt, project):
    """Parse a vLLM startup log FILE into registry/observations/<id>.yaml (says what it could not tell)."""
    from kvreg.ingest import IngestUsageError, ingest_file
    from kvreg.logparse import LogError

    try:
        path, msgs = ingest_file(project, file, obs_id=obs_id, source=source, model=model, hardware=hardware,
                                 engine=engine, force=force)
    except IngestUsageError as exc:
        raise click.UsageError(str(exc))
    except KvregError as exc:
        _fail(exc)
    except LogError as exc:
        if str(exc).startswith("unknown engine release"):
            raise click.UsageError(str(exc))
        click.echo(f"error: {file}: {exc}", err=True)
        sys.exit(1)
    shown = path.relative_to(project) if path.is_relative_to(project) else path
    if fmt == "json":
        click.echo(_dumps({"path": str(shown), "notes": list(msgs)}))
        return
    click.echo(f"wrote {shown}")
    for m in msgs:
        click.echo(f"note: {m}")


@main.command()
@quiet_option
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table", show_default=True)
@click.option("--speed", is_flag=True, help="Published throughput measurements beside kvreg's speed predictions.")
@project_option
@db_option
def calibrate(fmt, speed, project, db):
    """Observed engine startups beside kvreg's predictions; median and worst error per release.

    With --speed: measured throughput beside predicted, error per hardware and engine, in-sample and
    leave-one-source-out (kvreg/speed_calibrate.py).  The Markdown form carries both (docs/calibration.md).
    """
    from kvreg.build import connect
    from kvreg.calibrate import render
    from kvreg.speed_calibrate import render_speed

    try:
        con = connect(project, db, progress=progress)
    except KvregError as exc:
        _fail(exc)
    if speed:
        click.echo(render_speed(con, fmt, progress=progress))
    elif fmt == "markdown":
        click.echo(render(con, fmt, progress) + "\n" + render_speed(con, fmt, progress=progress))
    else:
        click.echo(render(con, fmt, progress))


@main.command()
@quiet_option
@click.option("--model", required=True, help="Registry model id.")
@click.option("--users", type=Bounded(int, 1, MAX_SEQUENCES, what="concurrent requests"), default=None,
              help="Concurrent requests to serve (or --request-rate).")
@click.option("--context", "context", default=None,
              help=f"{CONTEXT_HELP}; each sequence holds at its end (= input + output; or --input/--output-tokens).")
@click.option("--input-tokens", default=None, help="Prompt length of each request (e.g. 7192, 7Ki).")
@click.option("--output-tokens", default=None, help="Tokens each sequence generates.")
@click.option("--shared-prefix-tokens", default=None,
              help="System prompt every request starts with, held once per replica (prefix caching).")
@click.option("--n", "parallel_samples", type=Bounded(int, 1, 1024, what="samples per request"), default=None,
              help="Parallel samples (or beams) per request, sharing its prompt: sequences = users × n.")
@click.option("--request-rate", "request_rate", default=None,
              type=Bounded(float, 0, 1e9, low_open=True, what="requests per second"),
              help="Requests per second instead of --users (Little's law; needs --output-tokens).")
@click.option("--tpot-ms", required=True, type=Bounded(float, 1e-3, 1e6, what="ms"),
              help="Time per output token each sequence needs, ms.")
@click.option("--ttft-ms", type=Bounded(float, 1e-3, 1e7, what="ms"), default=None,
              help="Optional time-to-first-token target, ms (checked against the prefill floor).")
@click.option("--weights-dtype", "weights_dtypes", multiple=True, callback=_listed,
              help="Weight precisions, repeated or comma-separated; default the model's own.")
@click.option("--kv-dtype", "kv_dtypes", multiple=True, callback=_listed,
              help="KV precisions, repeated or comma-separated; default bf16.")
@click.option("--hardware", "hardware", multiple=True, callback=_listed,
              help="Hardware ids to compare, repeated or comma-separated; default all.")
@click.option("--engine", default="first-principles", show_default=True)
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=1), help="Feasible rows shown.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: every option in rank order (columns of ranked_plans), with the settings given.")
@click.option("--efficiency-basis", "efficiency_basis", type=click.Choice(["fitted", "vendor_measured"]),
              default="fitted", show_default=True,
              help="fitted: the measured efficiency fits (a device with none at its entry's stated figure);"
                   " vendor_measured: a stated figure replaced by the same vendor's lowest measured one (the"
                   " report's second plan of a † call).")
@engine_knob_options
@project_option
@db_option
def plan(model, users, context, input_tokens, output_tokens, shared_prefix_tokens, parallel_samples, request_rate,
         tpot_ms, ttft_ms, weights_dtypes, kv_dtypes, hardware, engine, top, fmt, efficiency_basis, project, db,
         **knobs):
    """Accelerators a workload needs: replicas, devices, $/hour and the binding constraint, cheapest first."""
    from kvreg.build import connect
    from kvreg.fit import UsageError
    from kvreg.plan import plan as run_plan, plan_json, render_plan

    context_tokens = _tokens((context,))[0] if context is not None else None
    lengths = {name: _length(name, v) for name, v in (("input_tokens", input_tokens), ("output_tokens", output_tokens),
                                                      ("shared_prefix_tokens", shared_prefix_tokens))}
    workload = dict(lengths, parallel_samples=parallel_samples, request_rate_per_s=request_rate)
    try:
        con = connect(project, db, progress=progress)
    except KvregError as exc:
        _fail(exc)
    try:
        result = run_plan(con, model, users=users, context_tokens=context_tokens, tpot_s=tpot_ms / 1e3,
                          ttft_s=None if ttft_ms is None else ttft_ms / 1e3, weights_dtypes=list(weights_dtypes),
                          kv_dtypes=list(kv_dtypes), engine=engine,
                          hardware=list(hardware), knobs=_knobs(knobs), workload=workload,
                          efficiency_basis=efficiency_basis)
    except UsageError as exc:
        raise click.UsageError(str(exc))
    if fmt == "json":
        import json

        click.echo(json.dumps(plan_json(result), indent=1, default=str))
    else:
        click.echo(render_plan(result, top=top))


@main.command("import-hf")
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--id", "entry_id", default=None, help="Registry id (default: from --hf-id or the config's folder).")
@click.option("--hf-id", default=None, help="ORG/NAME on the Hugging Face hub, recorded as the source.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write ID.yaml into (default registry/models, inside a kvreg project).")
@click.option("--stdout", "to_stdout", is_flag=True, help="Print the entry instead of writing it.")
@click.option("--weights-index", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="model.safetensors.index.json: metadata.total_size gives the checkpoint's measured bytes; "
                   "tensor names flag towers and MTP layers.")
@click.option("--params-total", type=float, default=None,
              help="Parameter count to use when the config lacks the dimensions to count it.")
@click.option("--force", is_flag=True, help="Overwrite an existing entry.")
@click.option("--explain", is_flag=True, help="List derived fields and config keys read but not used (stderr).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: {written, entry, derived, unused, notes} (docs/json.md); problems as a JSON list.")
def import_hf(config, entry_id, hf_id, out_dir, to_stdout, weights_index, params_total, force, explain, fmt):
    """Turn a Hugging Face CONFIG.json into a validated model entry (exit 1 if unsupported)."""
    from kvreg.importhf import import_config
    from kvreg.importhf.writer import write_entry
    from kvreg.schema.common import ID_RE

    if entry_id is not None and not ID_RE.match(entry_id):   # a usage error, as ingest-log's --id (not the config's)
        raise click.UsageError(f"--id {entry_id!r} is not a valid id: lower-case letters, digits, '.' and '-',"
                               " starting with a letter or digit (e.g. 'llama-3.1-8b')")
    if out_dir is None and not to_stdout:
        from kvreg.registry import is_project, project_folders

        if not is_project("."):
            raise click.UsageError("the current folder is not a kvreg project (none of "
                                   f"{project_folders()} exists): cd into the project, "
                                   "or pass --out DIR or --stdout")
        out_dir = Path("registry/models")

    try:
        result = import_config(config, entry_id=entry_id, hf_id=hf_id, weights_index=weights_index,
                               params_total=params_total)
        if explain:
            click.echo(result.explain(), err=True)
        path = None
        if to_stdout and fmt == "text":
            click.echo(result.text, nl=False)
        elif not to_stdout:
            path = write_entry(result.text, out_dir, result.entry["id"], force=force, hf_id=hf_id)
            if fmt == "text":
                click.echo(f"wrote {path.as_posix()}")
        if fmt == "json":
            click.echo(_dumps({"written": None if path is None else path.as_posix(), "entry": result.entry,
                               "derived": result.derived, "unused": result.unused, "notes": result.notes}))
    except KvregError as exc:
        _fail(exc, fmt)
    except OSError as exc:
        raise click.UsageError(f"cannot write into {out_dir}: {exc.strerror or exc} (pass --out DIR, a writable folder)")


@main.command()
@quiet_option
@click.argument("base")
@click.argument("head", required=False)
@project_option
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=0),
              help="Figure changes shown per entry (Markdown collapses the rest; 0 = all).")
@click.option("--threshold", "threshold_pct", default=0.0, show_default=True, type=click.FloatRange(min=0),
              metavar="PCT", help="Hide figure changes smaller than PCT percent.")
@click.option("--all-scenarios", is_flag=True,
              help="Compare every scenario row and figure (bytes, every context, dtype and batch), not only "
                   "the report figures of meaningful scenarios touching changed entries.")
def diff(base, head, project, fmt, top, threshold_pct, all_scenarios):
    """What a registry change moves: entries and scenario figures, BASE → HEAD.

    BASE and HEAD are git revisions of the project or directories; HEAD defaults
    to the working tree.  Exit 0 with or without changes; 1 when either side is
    invalid; 2 on a bad revision.
    """
    from kvreg.diff import RevisionError, diff_projects
    from kvreg.diff.render import render as render_diff
    from kvreg.diff.render import rows_needed

    try:
        result = diff_projects(base, head, project, threshold_pct=threshold_pct, all_scenarios=all_scenarios,
                               progress=progress, figure_rows=rows_needed(fmt, top))
    except RevisionError as exc:
        raise click.UsageError(str(exc))
    except KvregError as exc:
        click.echo(f"{getattr(exc, 'side', 'registry')} has problems:", err=True)
        _fail(exc, "json" if fmt == "json" else "text")
    click.echo(render_diff(result, fmt, top), nl=fmt != "markdown")


@main.command()
@click.argument("kind", required=False)
@project_option
@click.option("--write", "write", is_flag=True, help="Write stale schema files and missing entry headers.")
@click.option("--check", "check", is_flag=True, help="Exit 1 when a schema file is stale or an entry lacks its header.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: {kinds, stale, missing_headers, written} (docs/json.md).")
def schema(kind, project, write, check, fmt):
    """JSON Schemas of the entry kinds, for editors (kvreg/schemas/<kind>.schema.json).

    With KIND, print that kind's schema.  --write regenerates the schema files from the
    entry models and adds the `# yaml-language-server: $schema=...` line to every entry;
    --check says what --write would change.
    """
    import os

    from kvreg import jsonschemas as js
    from kvreg.registry import KINDS

    names = [k.name for k in KINDS]
    if kind:
        if kind not in names:
            raise click.UsageError(f"unknown kind {kind!r}; kinds: {', '.join(names)}")
        click.echo(js.schema_text(next(k for k in KINDS if k.name == kind)), nl=False)
        return
    if write:
        written = [os.path.relpath(p) for p in js.write_schemas() + js.write_headers(project)]
        if fmt == "json":
            click.echo(_dumps({"kinds": names, "stale": [], "missing_headers": [], "written": written}))
        for path in written if fmt == "text" else []:
            click.echo(f"wrote {path}")
        return
    stale, headers = js.stale_schemas(), js.missing_headers(project)
    if fmt == "json":
        click.echo(_dumps({"kinds": names, "stale": [os.path.relpath(p) for p in stale],
                           "missing_headers": [os.path.relpath(p) for p in headers], "written": []}))
        if check and (stale or headers):
            sys.exit(1)
        return
    for path in stale:
        click.echo(f"stale schema: {os.path.relpath(path)} (run kvreg schema --write)")
    for path in headers:
        click.echo(f"missing header: {os.path.relpath(path)} (run kvreg schema --write)")
    if check and (stale or headers):
        sys.exit(1)
    if not (stale or headers):
        click.echo(f"{len(names)} schemas up to date: {', '.join(names)}.")


@main.command()
@quiet_option
@click.argument("report_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default PROJECT/out).")
@click.option("--format", "formats", default="html,pdf", show_default=True,
              help="Comma-separated: html, pdf.")
@click.option("--project", "project", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The kvreg project directory (default: the parent of the report's reports/ folder).")
def report(report_file: Path, out_dir: Path | None, formats: str, project: Path | None):
    """Render REPORT_FILE (reports/X.yaml) to OUT/X.html and OUT/X.pdf; print the paths written."""
    from kvreg.formats import noun_for
    from kvreg.report.make import FORMATS, ReportUsageError, make_report

    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise click.BadParameter(f"unknown {noun_for(len(bad), 'format')} {', '.join(bad) or '(none)'}; choose from {', '.join(FORMATS)}",
                                 param_hint="--format")
    try:
        written = make_report(report_file, out_dir, chosen, project=project, progress=progress)
    except KvregError as exc:
        _fail(exc)
    except ReportUsageError as exc:
        raise click.UsageError(str(exc))
    except OSError as exc:  # --out under /proc, a read-only folder, a file in the way
        raise click.UsageError(f"cannot write the report: {exc.strerror or exc}: {exc.filename or out_dir} "
                               "(pass --out DIR, a writable folder)")
    for path in written:
        click.echo(f"wrote {path}")


if __name__ == "__main__":  # pragma: no cover
    main()
