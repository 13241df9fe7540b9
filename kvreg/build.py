"""Build the DuckDB database: base tables from the registry, then the SQL views in order.

The database is written to a temporary file beside the target and renamed
into place only when everything succeeded, so a failed validation or build
never leaves a partial database and never touches an existing one.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

DEFAULT_DB = Path(".kvreg") / "kvreg.duckdb"


def view_files() -> list:
    """The view SQL files (``kvreg/sql/NNN_<view>.sql``) in the order they are applied."""
    files = [f for f in resources.files("kvreg.sql").iterdir() if f.name.endswith(".sql")]
    return sorted(files, key=lambda f: f.name)


def registry_commit(root: Path) -> str | None:
    """The git commit of the project checkout (with ``-dirty`` when it has changes), or None."""
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def populate(con, registry, progress=None) -> None:
    """Create every base table from ``registry`` and every view, on an open connection.

    ``progress`` (optional) is called with a short message before each step (tables, views).

    Raises:
        KvregError: a view's SQL failed (code ``view-failed``, file = the view's SQL file).
    """
    import duckdb

    from kvreg.problems import KvregError, Problem
    from kvreg.tables import frames

    if progress:
        progress("loading the base tables")
    for name, df in frames(registry).items():
        con.register("_frame", df)
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM _frame')
        con.unregister("_frame")
    commit = registry_commit(registry.root)
    con.execute("CREATE TABLE build_info AS SELECT ? AS registry_commit", [commit])
    if progress:
        progress(f"creating {len(view_files())} views")
    for f in view_files():
        try:
            con.execute(f.read_text())
        except duckdb.Error as exc:
            # A broken view is a bug in kvreg (or in a view added to it), not in the
            # registry; it is still reported as a problem so the build stops cleanly.
            raise KvregError([Problem(f"kvreg/sql/{f.name}", 1, 1, "", "view-failed",
                                      f"view {f.name.removesuffix('.sql')} failed to build: "
                                      f"{str(exc).splitlines()[0]}",
                                      "fix the SQL file; the existing database was left untouched")]) from exc


PERSISTED_VIEWS: tuple[str, ...] = (
    # the per-model, per-device and per-release inputs of every plan (capacity_at 245, plans 275)
    "checkpoint_tensors", "model_weights", "model_weights_per_rank", "kv_layer_costs", "decode_coefficients",
    "hardware_peaks", "engine_support", "tp_sharding", "served_tp_sharding", "engine_mla_backend",
    # the block layout at each release's default block size (201, 202): read by an engine-release plan through the
    # release_blocks scope (kvreg/sql/277) instead of the layout chain
    "engine_kv_buckets", "engine_kv_layout",
    # the speed fits (251-254) and the plans' efficiencies (274)
    "throughput_ceilings", "speed_efficiency_by_holdout", "speed_efficiency", "plan_efficiency")
"""Views a built database file holds as tables of their rows (:func:`persist_views`), in dependency order.

Each takes no parameters and reads only the registry's tables and other parameterless views, so its rows are
fixed by the build's inputs (:func:`is_stale` rebuilds when any input changes).  Every ``plans`` /
``ranked_plans`` / ``roofline`` query and ``kvreg calibrate --speed`` reads them; as views, DuckDB bound, optimised
and ran each one's whole definition again inside every such query: the speed chain (throughput ceilings over the
engine pools, the fits with every source and architecture held out) was ~60 % of ``kvreg plan``'s time and 95 % of
``kvreg calibrate --speed``'s; the weights, decode coefficients, peaks, platform support, sharding and efficiency
views a further ~45 % of what was left of the ``ranked_plans`` query (0.55 → 0.30 s CPU; benchmarks/README.md,
"Speed commands").  An in-memory database keeps every view, so the test suite checks the tables against them
(tests/test_persist.py).  Earlier names first, so a later view is computed from the tables (the same rows either
way)."""


def persist_views(con, names: tuple[str, ...] = PERSISTED_VIEWS, progress=None) -> None:
    """Replace each view of ``names`` on ``con`` by a table of the same name holding its rows.

    The view's SQL (kvreg/sql) is evaluated once; the views and macros that read the name read the table
    (DuckDB binds names when a query runs), with the same columns and rows.  Only :func:`build` calls this: an
    in-memory database (:func:`memory_connection`, ``kvreg diff``'s sides, which cut their tables after the
    build and read the views' SQL for their dependency graph) keeps the views.  A name that is not a view is
    skipped.
    """
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary"
                                       " AND schema_name = 'main'").fetchall()}
    if progress:
        progress(f"persisting {', '.join(n for n in names if n in views)}")
    for name in names:
        if name not in views:
            continue
        con.execute(f'CREATE TABLE "__persist_{name}" AS SELECT * FROM "{name}"')
        con.execute(f'DROP VIEW "{name}"')
        con.execute(f'ALTER TABLE "__persist_{name}" RENAME TO "{name}"')


def build(root: Path | str = ".", db: Path | str | None = None, progress=None) -> Path:
    """Validate the project at ``root`` and write its database atomically.

    Args:
        root: the project directory.
        db: target file; default ``ROOT/.kvreg/kvreg.duckdb``.
        progress: optional callable given a short message before each step (validate, tables,
            views); the CLI prints them on stderr (:func:`kvreg.cli.progress`).

    Returns:
        The path of the database written.

    Raises:
        KvregError: the registry has problems; nothing is written.
        duckdb.Error: a view failed to build; nothing is written.
    """
    import duckdb

    from kvreg.registry import load_registry

    root = Path(root)
    target = Path(db) if db else root / DEFAULT_DB
    check_replaceable(target)   # before any work: nothing is validated or written for a --db that names another file
    if progress:
        progress(f"validating {root.as_posix()}")
    registry = load_registry(root)
    if db and not target.parent.is_dir() and target.parent.absolute() != (root / DEFAULT_DB).parent.absolute():
        # a mistyped --db must not create folders (the trial's /nonexistent/x.duckdb made /nonexistent): only the
        # project's own .kvreg folder is created here
        raise _db_problem(target, "cannot-write-db", f"cannot write the database {target}: the folder "
                          f"{target.parent} does not exist", "create the folder first, or pass --db PATH in an"
                          " existing folder")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(target.parent)
        fd, tmp = tempfile.mkstemp(prefix=f"{LEFTOVER_PREFIX}{os.getpid()}-", suffix=".duckdb", dir=target.parent)
    except OSError as exc:
        raise _db_problem(target, "cannot-write-db", f"cannot write the database {target}: "
                          f"{exc.strerror or exc}", "pass --db PATH in a writable folder (and make sure "
                          f"{target.parent} is a folder, not a file)") from None
    os.close(fd)
    os.unlink(tmp)  # DuckDB wants to create the file itself
    try:
        con = duckdb.connect(tmp, config=duckdb_config())
        try:
            populate(con, registry, progress)
            persist_views(con, progress=progress)
        finally:
            con.close()
        os.replace(tmp, target)
    except OSError as exc:
        raise _db_problem(target, "cannot-write-db", f"cannot write the database {target}: {exc.strerror or exc}",
                          "pass --db PATH in a writable folder") from None
    finally:
        for leftover in (tmp, tmp + ".wal"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return target


LEFTOVER_PREFIX = ".kvreg-build-"
_LEFTOVER = re.compile(rf"^{re.escape(LEFTOVER_PREFIX)}(?:(\d+)-)?.*\.duckdb(?:\.wal)?$")
LEFTOVER_AGE_S = 3600
"""A temp database without a process id (written by older kvreg) is a leftover after this long."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_leftovers(folder: Path) -> list[Path]:
    """Delete temporary databases of builds that were killed (their process is gone); return them.

    A build names its temp file ``.kvreg-build-<pid>-XXXX.duckdb``; a concurrent build's
    file (process alive) is left alone, so concurrent builds still both succeed.
    """
    import time

    removed = []
    for p in folder.glob(f"{LEFTOVER_PREFIX}*"):
        m = _LEFTOVER.match(p.name)
        if not m:
            continue
        pid = int(m[1]) if m[1] else None
        try:
            if (pid is not None and not _alive(pid)) or (pid is None and time.time() - p.stat().st_mtime > LEFTOVER_AGE_S):
                p.unlink()
                removed.append(p)
        except OSError:
            continue  # another build removed it first
    return removed


def _db_problem(target: Path, code: str, message: str, hint: str):
    from kvreg.problems import KvregError, Problem

    return KvregError([Problem(str(target), 0, 0, "", code, message, hint)])


DUCKDB_MAGIC = b"DUCK"
"""Bytes 8–11 of every DuckDB database file (the main header follows an 8-byte checksum: DuckDB
src/storage/storage_info.cpp MainHeader::MAGIC_BYTES, written at MainHeader offset 8)."""


def check_replaceable(target: Path) -> None:
    """Refuse a ``--db`` that names something other than a database kvreg may replace.

    A build writes a temp file and renames it over ``target``: pointed at README.md, .git/HEAD or a
    registry entry (trial11), that would destroy the file.  Only a missing path or an existing DuckDB
    file (:data:`DUCKDB_MAGIC` at offset 8) may be replaced.

    Raises:
        KvregError: ``cannot-write-db`` when it is a folder, ``bad-database`` when it is not a DuckDB file.
    """
    if not os.path.lexists(target):
        return
    if target.is_dir():
        raise _db_problem(target, "cannot-write-db", f"{target} is a folder, not a database file",
                          "pass --db PATH/kvreg.duckdb")
    try:
        with open(target, "rb") as fh:
            head = fh.read(12)
    except OSError as exc:
        raise _db_problem(target, "cannot-write-db", f"cannot read {target}: {exc.strerror or exc}",
                          "pass --db PATH to a database file") from None
    if head[8:12] != DUCKDB_MAGIC:
        raise _db_problem(target, "bad-database", f"{target} is not a kvreg DuckDB database (the file exists and is "
                          "not a DuckDB file): kvreg will not read it, nor replace it with one",
                          "pass --db a new file name or an existing kvreg database (e.g. --db .kvreg/kvreg.duckdb)")


def is_stale(root: Path, db: Path) -> bool:
    """True when ``db`` is missing or older than any input it is built from.

    Inputs are every entry file, the entry folders themselves (a folder's mtime
    changes when an entry is deleted or renamed, which no remaining file shows),
    the view SQL files and kvreg's own modules and check queries.
    """
    if not db.exists():
        return True
    built = db.stat().st_mtime
    from kvreg.folders import FOLDERS, entry_files   # not kvreg.registry: no schemas to load for a fresh database

    inputs = entry_files(root) + [root / f for f in FOLDERS.values()] + [Path(str(f)) for f in view_files()]
    # A model's shipped config.json is validated against its entry (kvreg/configcheck.py).
    inputs += sorted((root / "registry" / "models").glob("*.config.json"))
    # kvreg's own code decides what the tables hold: a newer or upgraded kvreg rebuilds too.
    package = Path(str(resources.files("kvreg")))
    inputs += [p for p in package.rglob("*") if p.suffix in (".py", ".sql")]
    return any(p.stat().st_mtime > built for p in inputs if p.exists())


def connect_path(root: Path | str = ".", db: Path | str | None = None, progress=None) -> Path:
    """The project's database file, built first when missing or stale (see :func:`is_stale`).

    Raises:
        KvregError: the registry has problems, or the database cannot be written
            (``cannot-write-db``: ``.kvreg`` is a file, the folder is read-only).
    """
    root = Path(root)
    target = Path(db) if db else root / DEFAULT_DB
    check_replaceable(target)   # an existing non-database file is refused, not rebuilt over because it looks stale
    try:
        stale = is_stale(root, target)
    except OSError as exc:
        raise _db_problem(target, "cannot-write-db", f"cannot read {target}: {exc.strerror or exc}",
                          "pass --db PATH to a database file") from None
    if stale:
        if progress:
            progress(f"the database {target.as_posix()} is missing or older than the registry: rebuilding")
        build(root, target, progress)
    return target


def connect(root: Path | str = ".", db: Path | str | None = None, read_only: bool = True, progress=None):
    """Open the project's database, building it first when missing or stale.

    Returns:
        A DuckDB connection (read-only by default, for analysts' queries).

    Raises:
        KvregError: as :func:`connect_path`, or ``bad-database`` when the file is not a DuckDB database.
    """
    import duckdb

    target = connect_path(root, db, progress)
    try:
        return duckdb.connect(str(target), read_only=read_only, config=duckdb_config())
    except duckdb.Error as exc:
        raise _db_problem(target, "bad-database", f"{target} is not a kvreg DuckDB database: "
                          f"{str(exc).splitlines()[0]}", "delete it and run kvreg build, or pass the right --db") from None


def duckdb_config() -> dict[str, str]:
    """DuckDB settings every kvreg connection opens with (``duckdb.connect(..., config=...)``).

    ``KVREG_MEMORY_LIMIT`` (a DuckDB size such as ``4GB``) bounds DuckDB's memory; joins over the full
    engine grid (~10^8 rows) then spill to a temporary folder instead of taking DuckDB's default of
    80 % of RAM, which machines running several jobs (CI, tests in parallel) do not have.  Unset: DuckDB's
    defaults.  Returns an empty dict when unset.
    """
    limit = os.environ.get("KVREG_MEMORY_LIMIT", "").strip()
    if not limit:
        return {}
    limit = _memory_limit(limit)
    spill = Path(tempfile.gettempdir()) / f"kvreg-duckdb-spill-{os.getpid()}"
    _remove_at_exit(spill)
    temp = os.environ.get("KVREG_TEMP_LIMIT", "").strip() or DEFAULT_TEMP_LIMIT
    return {"memory_limit": limit, "temp_directory": str(spill),
            "max_temp_directory_size": _memory_limit(temp, "KVREG_TEMP_LIMIT")}


DEFAULT_TEMP_LIMIT = "16GiB"
"""Most a kvreg process spills to its temporary folder (``KVREG_TEMP_LIMIT`` overrides it).  DuckDB's own
default is 90 % of the free disk: a runaway ``kvreg sql`` recursive CTE filled /tmp with it (issue 15).  The
full engine grid under ``KVREG_MEMORY_LIMIT=3GB`` spills well under this; past it the query fails with
DuckDB's out-of-memory error naming ``max_temp_directory_size``."""

_SPILL_DIRS: set[str] = set()


def _remove_at_exit(spill: Path) -> None:
    """Remove the process's spill folder when it exits (normally, by SystemExit, or by the SIGTERM handler the
    CLI installs, kvreg/sandbox.py ``interruptible``): DuckDB leaves it behind, GBs of it after a big query."""
    import atexit
    import shutil

    if str(spill) not in _SPILL_DIRS:
        _SPILL_DIRS.add(str(spill))
        atexit.register(shutil.rmtree, spill, ignore_errors=True)


# Below this DuckDB cannot even build the views (measured: the build needs ~150 MB); a smaller limit is a typo.
MIN_MEMORY_LIMIT_BYTES = 256 * 2**20


def _memory_limit(text: str, name: str = "KVREG_MEMORY_LIMIT") -> str:
    """``KVREG_MEMORY_LIMIT`` (or ``name``: ``KVREG_TEMP_LIMIT``) checked and written as DuckDB reads it (whole MiB).

    Raises:
        KvregError: not a size with a byte unit (``4GB``, ``3GiB``), or below :data:`MIN_MEMORY_LIMIT_BYTES`.
    """
    from kvreg.problems import KvregError, Problem
    from kvreg.units import UnitError, parse_quantity

    def bad(message: str) -> KvregError:
        return KvregError([Problem(name, 0, 0, "", "bad-memory-limit", message,
                                   "set it to a size such as 4GB or 3GiB, or unset it for DuckDB's default")])

    try:
        value = parse_quantity(text, "bytes")
    except UnitError as exc:
        raise bad(f"the environment variable {name}={text!r} is not a memory size: {exc}") from None
    if not any(c.isalpha() for c in text):
        raise bad(f"{name}={text!r} has no unit (GB or GiB)")
    if value < MIN_MEMORY_LIMIT_BYTES:
        raise bad(f"{name}={text!r} is below the {MIN_MEMORY_LIMIT_BYTES // 2**20} MiB kvreg needs")
    return f"{int(value // 2**20)}MiB"


def memory_connection(root: Path | str = "."):
    """A fresh in-memory database with the project's tables and views (for tests and diffs)."""
    import duckdb

    from kvreg.registry import load_registry

    con = duckdb.connect(":memory:", config=duckdb_config())
    populate(con, load_registry(Path(root)))
    return con
