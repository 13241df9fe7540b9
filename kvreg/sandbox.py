"""Locked DuckDB connections for ``kvreg sql`` and ``kvreg export``: a query cannot change anything.

The guarantee comes from DuckDB's own settings, not from reading the query:

- the database is opened read-only (no table, view or macro of it can change; ``TEMP``
  objects a query creates live in memory and die with it);
- ``enable_external_access = false``: no file is read or written (``COPY … TO``,
  ``EXPORT DATABASE``, ``read_csv``), no database attached, no extension installed,
  nothing fetched over the network;
- ``autoinstall_known_extensions`` / ``autoload_known_extensions`` /
  ``allow_community_extensions = false``: no extension appears behind the user's back;
- ``allowed_paths``: the only file a connection may touch, set before access is
  disabled (``kvreg export``'s own temporary output file);
- ``lock_configuration = true``, last: no ``SET``/``RESET``/``PRAGMA`` can undo the above.

Local files a user wants to join (``kvreg sql --table NAME=FILE``) are loaded into
temporary in-memory tables *before* access is disabled, so the query itself still
reads nothing from disk.  DuckDB documents these settings in "Securing DuckDB"
(duckdb.org/docs/stable/operations_manual/securing_duckdb/overview).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from kvreg.sqlout import query_error_text

EXTENSION_SETTINGS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                      "allow_community_extensions": False}
TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
READERS = {".csv": "read_csv", ".tsv": "read_csv", ".parquet": "read_parquet", ".json": "read_json",
           ".jsonl": "read_json", ".ndjson": "read_json"}
EXPORT_FORMATS = {".parquet": "(FORMAT parquet, USE_TMP_FILE false)", ".csv": "(FORMAT csv, HEADER true, USE_TMP_FILE false)"}


class SandboxError(ValueError):
    """A usage mistake (a bad ``--table`` or ``--to``); the message says what to write instead."""


class QueryError(SandboxError):
    """DuckDB refused or failed the query itself (its first error line): the CLI prints it without a usage
    banner (kvreg/cli.py ``_query_failed``)."""


def _lock(con, allowed_paths: list[str] = ()) -> None:
    """Disable external access except ``allowed_paths``, then lock the configuration."""
    if allowed_paths:
        con.execute("SET allowed_paths = ?", [list(allowed_paths)])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _open(db: Path):
    """``db`` opened read-only, in a DuckDB instance of its own, with extension loading off.

    DuckDB shares one instance per file within a process; when the caller (the Python API, a
    test) already holds one with other settings, the file is attached ``READ_ONLY`` as catalog
    ``kvreg`` to a fresh in-memory instance instead, so locking never reaches the caller's
    connections.  (That instance could ``ATTACH ':memory:'``: a scratch database in memory,
    no file.)

    Raises:
        SandboxError: ``db`` is missing or not a DuckDB file.
        KvregError: ``KVREG_MEMORY_LIMIT`` is set but not a size (:func:`kvreg.build.duckdb_config`).
    """
    import duckdb

    from kvreg.build import duckdb_config

    # KVREG_MEMORY_LIMIT bounds a user's query too (a join over the engine grid can take all of RAM)
    config = {**EXTENSION_SETTINGS, **duckdb_config()}
    try:
        con = duckdb.connect(str(db), read_only=True, config=config)
        if con.execute("SELECT current_setting('lock_configuration')").fetchone()[0] in (False, "false"):
            return con
        con.close()  # an instance locked by an earlier query in this process: use a fresh one
    except duckdb.Error as exc:
        if "different configuration" not in str(exc):
            raise SandboxError(f"{db} is not a kvreg DuckDB database: {str(exc).splitlines()[0]}"
                               " (rebuild it with kvreg build, or pass the right --db)") from None
    con = duckdb.connect(":memory:", config=config)
    try:
        con.execute("ATTACH ? AS kvreg (READ_ONLY)", [str(db)])
        con.execute("USE kvreg")
    except duckdb.Error as exc:
        con.close()
        raise SandboxError(f"{db} is not a kvreg DuckDB database: {str(exc).splitlines()[0]}"
                           " (rebuild it with kvreg build, or pass the right --db)") from None
    return con


def parse_table_option(value: str) -> tuple[str, Path]:
    """``NAME=FILE`` (``kvreg sql --table``) → (name, path); SandboxError when malformed or unreadable."""
    name, sep, file = value.partition("=")
    if not sep or not TABLE_NAME.match(name) or not file:
        raise SandboxError(f"--table {value!r} is not NAME=FILE; write e.g. --table prices=prices.csv")
    path = Path(file)
    if path.suffix.lower() not in READERS:
        raise SandboxError(f"--table {value!r}: cannot read {path.suffix or 'a file without suffix'}; "
                           f"use one of {', '.join(sorted(READERS))}")
    if not path.is_file():
        raise SandboxError(f"--table {value!r}: {file} is not a readable file")
    return name, path


def query_connection(db: Path, tables: list[tuple[str, Path]] = ()):
    """A connection to ``db`` on which no statement can write, attach, install, fetch or re-configure.

    Args:
        db: a kvreg DuckDB file (built by :func:`kvreg.build.build`).
        tables: (name, file) pairs loaded, before locking, into temporary tables the query may join.

    Raises:
        SandboxError: ``db`` is not a DuckDB file, a table file cannot be read, or a table's name is one of the
            database's tables or views.
    """
    import duckdb

    con = _open(db)
    # a temp table of a registry table's or view's name would hide it from the query without a word (temp
    # objects come first in DuckDB's search path): refuse the name instead
    taken = {r[0].lower() for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary UNION "
        "SELECT view_name FROM duckdb_views() WHERE NOT temporary AND NOT internal").fetchall()}
    for name, path in tables:
        if name.lower() in taken:
            con.close()
            raise SandboxError(f"--table {name}={path}: {name!r} is a table or view of the kvreg database, which"
                               f" the file would hide; choose another NAME, e.g. --table my_{name}={path}")
        reader = READERS[path.suffix.lower()]
        try:
            con.execute(f'CREATE TEMP TABLE "{name}" AS SELECT * FROM {reader}(?)', [str(path)])
        except duckdb.Error as exc:
            con.close()
            raise SandboxError(f"--table {name}={path}: {str(exc).splitlines()[0]}") from None
    _lock(con)
    return con


def single_statement(query: str) -> str:
    """``query`` when it is exactly one SQL statement; SandboxError otherwise (so ``--where`` wraps it)."""
    import duckdb

    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise QueryError(query_error_text(exc)) from None
    if len(statements) != 1:
        raise SandboxError(f"give exactly one SELECT statement, got {len(statements)}")
    return query.strip().rstrip(";")


def export(db: Path, what: str, target: Path, where: str | None = None) -> int:
    """Write a view (or one SELECT) to ``target`` (.parquet or .csv) with DuckDB's COPY, atomically.

    Args:
        db: the kvreg database.
        what: a table or view name, or a SELECT statement.
        target: output file; its suffix picks the format.  Written to a temporary file in the same
            folder (the only path the connection may touch), then renamed over ``target``.
        where: an optional SQL condition on the rows (``tp = 1 AND context_tokens >= 8192``).

    Returns:
        The number of rows written.

    Raises:
        SandboxError: unknown suffix, unknown view, bad SQL (the message is DuckDB's first line).
    """
    import duckdb

    fmt = EXPORT_FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise SandboxError(f"--to {target}: write a .parquet or .csv file")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise SandboxError(f"--to {target}: folder {folder} does not exist")
    con = _open(db)
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                       "WHERE table_catalog = current_database()").fetchall()}
    if TABLE_NAME.match(what):
        if what not in names:
            from kvreg.suggest import near_ids

            near = near_ids(what, sorted(names))
            con.close()
            raise SandboxError(f"no view or table {what!r}" + (f"; did you mean {', '.join(near)}?" if near else ""))
        source = f'SELECT * FROM "{what}"'
    else:
        source = single_statement(what)
    if where:
        single_statement(f"SELECT 1 WHERE {where}")
        source = f"SELECT * FROM ({source}) WHERE ({where})"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=folder)
    except OSError as exc:
        con.close()
        raise SandboxError(f"--to {target}: cannot write there: {exc.strerror}") from None
    os.close(fd)
    try:
        _lock(con, [str(Path(tmp).resolve())])
        try:
            n = interruptible(con, lambda: con.execute(f"COPY ({source}) TO ? {fmt}",
                                                        [str(Path(tmp).resolve())]).fetchone()[0])
        except duckdb.Error as exc:
            raise QueryError(query_error_text(exc)) from None
        finally:
            con.close()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temp file, not the user's export
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return int(n)


class QueryInterrupted(Exception):
    """A query stopped by SIGINT (Ctrl-C) or SIGTERM; ``signum`` says which (the CLI exits 128 + signum)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def interruptible(con, work):
    """``work()`` (which runs a query on ``con`` and reads its rows), stoppable by SIGINT and SIGTERM.

    DuckDB holds the main thread inside one C call for the whole query, so Python's signal handlers (and
    Ctrl-C) waited minutes for it to return (issue 15: a runaway recursive CTE).  The query runs on a worker
    thread instead; the main thread waits, and a signal calls ``con.interrupt()`` (DuckDB's own cancellation),
    which ends the query within its next vector.  Off the main thread (signal handlers cannot be installed there)
    ``work()`` simply runs.

    Returns:
        What ``work()`` returns.

    Raises:
        QueryInterrupted: a signal stopped the query (the process then exits, its spill folder removed at exit).
        Whatever ``work()`` raises.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return work()
    got: list[int] = []
    box: dict = {}

    def run():
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the main thread, re-raised there
            box["error"] = exc

    def stop(signum, frame):
        got.append(signum)
        con.interrupt()

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        t = threading.Thread(target=run, name="kvreg-query", daemon=True)
        t.start()
        while t.is_alive():
            t.join(0.1)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if got:
        raise QueryInterrupted(got[0])
    if "error" in box:
        raise box["error"]
    return box["value"]
