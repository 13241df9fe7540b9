"""The per-side steps of ``kvreg diff`` cached on disk, keyed by the content of the base tables they read.

A focused comparison computes, on each side, a few tables from that side's registry (``scenarios.SHARE_STEPS``:
the frozen speed fits, the admission rows, the focused ``capacity`` and ``roofline`` rows) and ranks the reports
naming a touched entry (``recommend``).  Each is a function of three things only: the running kvreg's code (its
Python and SQL files, DuckDB's version), the touched entries (``order``, which also fixes how a side is cut) and
the values of the base tables the step reads — the tables named, transitively, by its SQL text on the side's
catalogue (``depends.tables_read_by``: derived from kvreg/sql, never listed by hand).  So its key is a SHA-256 of
those, with each table's content as a digest of its frame (``frame_digest``: values and types, location columns
dropped as in ``depends.value_changed``), and a step whose key was computed before is read back instead of
computed again: BASE's steps on every diff against the same base revision after the first (a reviewer's or a CI
job's ``kvreg diff origin/main`` while a branch is worked on), HEAD's when HEAD is unchanged, either side's when
another diff already computed a side with the same content (a branch rebased onto the BASE a previous diff's HEAD
was).  Within one diff, a step whose key is the same on both sides is computed on BASE and copied to HEAD
(``scenarios.shared_steps``).

The cache is a folder in the project's ``.kvreg/`` (gitignored), ``diff-cache/``: one DuckDB file per table step
(``<key>.duckdb``, table ``t``) and one JSON file per report ranking (``<key>.json``), each written to a temporary
file and renamed, so a concurrent or killed diff never leaves a partial entry under a key.  The least recently used
files beyond :data:`MAX_BYTES` are removed after each store.  A file that cannot be read (corrupt, truncated, foreign)
is removed and the step computed, never an error.  ``KVREG_DIFF_CACHE=0`` turns the cache off (the steps are then
computed on every diff, as before).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import pickle
import tempfile
from pathlib import Path

MAX_BYTES = 2 * 1024**3
"""Most bytes the cache folder keeps (least recently used files removed first); one engine release's steps over
the shipped registry are a few hundred MB, an accelerator's or a model's a few MB."""

FOLDER = "diff-cache"
_ATTACHED = "__kvreg_step_cache"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 (hex) of the code a step runs: kvreg's Python files and versions (``validate_cache.fingerprint``),
    every SQL file under kvreg/ (the views, macros and report queries), and the DuckDB and pandas versions."""
    import duckdb
    import pandas

    from kvreg.validate_cache import fingerprint

    h = hashlib.sha256()
    h.update(f"{fingerprint()}\0{duckdb.__version__}\0{pandas.__version__}\0".encode())
    pkg = Path(__file__).resolve().parents[1]
    for path in sorted(pkg.rglob("*.sql")):
        h.update(path.relative_to(pkg).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def frame_digest(df, locations: bool = False) -> str:
    """SHA-256 (hex) of a base table's frame: column names, dtypes and values, location columns left out.

    Location columns (``file``, ``line``, ``*_line``: ``depends._is_location``) say where a value was written; no
    view computes from them, and a step whose table has one is not stored (:meth:`StepCache.store`).
    ``locations``: keep them (a side's whole database holds them: :func:`side_key`).  Values are
    pickled without a memo (exact floats, NaN, NA and types included; the same bytes whether equal strings are one
    object or two, as they are not when a registry comes from the validate cache): equal bytes mean equal values.
    """
    from kvreg.diff.depends import _is_location

    keep = [c for c in df.columns if locations or not _is_location(c)]
    part = df[keep]
    h = hashlib.sha256()
    h.update(json.dumps([[c, str(t)] for c, t in zip(keep, part.dtypes)]).encode())
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=4)
    pickler.fast = True  # no memo: the bytes depend on the values, not on which equal values are one object
    pickler.dump(part.to_numpy(dtype=object).tolist())
    h.update(buf.getvalue())
    return h.hexdigest()


def digest(*parts: str) -> str:
    """SHA-256 (hex) of ``parts``, each length-prefixed."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode()
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()


class StepCache:
    """The on-disk store of step results (``folder`` None: disabled, every lookup misses, nothing is written)."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.hits: list[str] = []    # step names read back, for progress and tests
        self.stores: list[str] = []  # step names written

    @classmethod
    def for_project(cls, project: Path) -> StepCache:
        """The cache in ``project``'s ``.kvreg/diff-cache/`` (disabled by ``KVREG_DIFF_CACHE=0``, or when the folder
        cannot be created: a read-only checkout diffs as before)."""
        if os.environ.get("KVREG_DIFF_CACHE", "1").strip() == "0":
            return cls(None)
        folder = Path(project) / ".kvreg" / FOLDER
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return cls(None)
        return cls(folder)

    def _path(self, key: str, ext: str) -> Path | None:
        return None if self.folder is None or key is None else self.folder / f"{key}.{ext}"

    def has(self, key: str | None) -> bool:
        """Whether a table result is stored under ``key`` (it may still be unreadable: :meth:`load_table` says)."""
        path = self._path(key, "duckdb")
        return path is not None and path.is_file()

    def load_table(self, con, key: str | None, target: str, step: str, *, temp: bool = True,
                   replaces_view: str | None = None) -> bool:
        """Create table ``target`` from the stored result of ``key``; False on a miss (nothing changed then).

        ``temp``: a temporary table (``target`` unqualified), else ``target`` is a qualified name;
        ``replaces_view``: a (qualified) view of that name dropped first, once the stored file is open.
        """
        import duckdb

        path = self._path(key, "duckdb")
        if path is None or not path.is_file():
            return False
        try:
            con.execute(f"ATTACH '{_sql_path(path)}' AS {_ATTACHED} (READ_ONLY)")
        except duckdb.Error:
            path.unlink(missing_ok=True)  # not a DuckDB file (truncated, foreign): computed again
            return False
        try:
            con.execute(f"SELECT * FROM {_ATTACHED}.t LIMIT 0")  # a file without the table: a miss, view kept
            if replaces_view is not None:
                con.execute(f"DROP VIEW IF EXISTS {replaces_view}")
            con.execute(f"CREATE OR REPLACE {'TEMP ' if temp else ''}TABLE {target} AS SELECT * FROM {_ATTACHED}.t")
        except duckdb.Error:
            con.execute(f"DETACH {_ATTACHED}")
            path.unlink(missing_ok=True)
            return False
        con.execute(f"DETACH {_ATTACHED}")
        _touch(path)
        self.hits.append(step)
        return True

    def store_table(self, con, key: str | None, source: str, step: str) -> None:
        """Store table ``source`` (a qualified name) under ``key``, unless it has a location column."""
        from kvreg.diff.depends import _is_location

        path = self._path(key, "duckdb")
        if path is None:
            return
        cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        if any(_is_location(c) for c in cols):
            return  # the key leaves locations out, so a result carrying one is not keyed by all it holds
        self._write(con, key, path, f"CREATE TABLE {_ATTACHED}.t AS SELECT * FROM {source}", step)

    def load_database(self, con, key: str | None, alias: str, step: str) -> bool:
        """Attach a new in-memory database ``alias`` holding the stored database of ``key`` (tables, views and
        macros, ``COPY FROM DATABASE``); False on a miss (``alias`` not attached then)."""
        import duckdb

        path = self._path(key, "duckdb")
        if path is None or not path.is_file():
            return False
        db = '"' + alias.replace('"', '""') + '"'
        try:
            con.execute(f"ATTACH '{_sql_path(path)}' AS {_ATTACHED} (READ_ONLY)")
        except duckdb.Error:
            path.unlink(missing_ok=True)
            return False
        try:
            con.execute(f"ATTACH ':memory:' AS {db}")
            con.execute(f"COPY FROM DATABASE {_ATTACHED} TO {db}")
        except duckdb.Error:
            con.execute(f"DETACH {_ATTACHED}")
            con.execute(f"DETACH DATABASE IF EXISTS {db}")
            path.unlink(missing_ok=True)
            return False
        con.execute(f"DETACH {_ATTACHED}")
        _touch(path)
        self.hits.append(step)
        return True

    def store_database(self, con, key: str | None, alias: str, step: str) -> None:
        """Store attached database ``alias`` (tables, views, macros) under ``key``."""
        path = self._path(key, "duckdb")
        if path is None:
            return
        db = '"' + alias.replace('"', '""') + '"'
        self._write(con, key, path, f"COPY FROM DATABASE {db} TO {_ATTACHED}", step)

    def _write(self, con, key: str, path: Path, fill_sql: str, step: str) -> None:
        """Write a DuckDB file at ``path`` atomically: ``fill_sql`` fills a new file attached as the scratch alias,
        which replaces ``path`` only once complete (a reader never sees half a file); then prune the folder."""
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".duckdb.tmp", dir=self.folder)
        os.close(fd)
        os.unlink(tmp)  # DuckDB creates the file itself
        try:
            # READ_WRITE: on a read-only connection (the report's, kvreg/report/table_cache.py) ATTACH defaults to read-only
            con.execute(f"ATTACH '{_sql_path(Path(tmp))}' AS {_ATTACHED} (READ_WRITE)")
            try:
                con.execute(fill_sql)
            finally:
                con.execute(f"DETACH {_ATTACHED}")
            os.replace(tmp, path)
        finally:
            for leftover in (tmp, tmp + ".wal"):
                if os.path.exists(leftover):
                    os.unlink(leftover)
        self.stores.append(step)
        self.prune()

    def load_json(self, key: str | None, step: str):
        """The stored JSON value of ``key``, or None on a miss (or an unreadable file, removed)."""
        path = self._path(key, "json")
        if path is None or not path.is_file():
            return None
        try:
            value = json.loads(path.read_text())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            return None
        _touch(path)
        self.hits.append(step)
        return value

    def store_json(self, key: str | None, value, step: str) -> None:
        """Store ``value`` (JSON-serialisable) under ``key``."""
        path = self._path(key, "json")
        if path is None:
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".json.tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(value, f)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self.stores.append(step)
        self.prune()

    def prune(self, max_bytes: int = MAX_BYTES) -> None:
        """Remove the least recently used files until the folder holds at most ``max_bytes``."""
        if self.folder is None:
            return
        files = []
        for p in self.folder.iterdir():
            try:
                st = p.stat()
            except OSError:
                continue
            if p.name.startswith("."):
                continue  # another diff's file being written
            files.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in files)
        for _, size, p in sorted(files):
            if total <= max_bytes:
                break
            p.unlink(missing_ok=True)
            total -= size


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


class StepKeys:
    """The content keys of one diff's per-side steps.

    Args:
        cache: where results are stored (:class:`StepCache`).
        digests: side alias → {base table: :func:`frame_digest`} (``build_info``, the registry's commit, has none:
            a step reading it is never keyed).
        reads: step name → the base tables it reads (``scenarios.step_reads``, on the catalogue as built).
    """

    def __init__(self, cache: StepCache, digests: dict[str, dict[str, str]], reads: dict[str, set[str]]):
        self.cache = cache
        self.digests = dict(digests)
        self.reads = reads
        self.cuts: dict[str, str] = {}  # alias → the touched entries it was cut to (JSON), for a cut side

    def copied(self, source: str, copy: str) -> None:
        """Side ``copy`` was copied from ``source`` (``scenarios.copy_side``): same tables, same cut."""
        if source in self.digests:
            self.digests[copy] = self.digests[source]
        if source in self.cuts:
            self.cuts[copy] = self.cuts[source]

    def cut(self, alias: str, how: str) -> None:
        """Side ``alias`` was cut (``how``: what it was cut to, as a stable string)."""
        self.cuts[alias] = self.cuts.get(alias, "") + "|" + how

    def key(self, alias: str, step: str, *extra: str) -> str | None:
        """The key of ``step`` on side ``alias`` (``extra``: its other inputs as stable strings), or None when the
        step reads a table without a digest or the side has none."""
        tables = self.digests.get(alias)
        read = self.reads.get(step)
        if tables is None or read is None or any(t not in tables for t in read):
            return None
        return digest(code_fingerprint(), step, self.cuts.get(alias, ""), *extra,
                      *(f"{t}={tables[t]}" for t in sorted(read)))

    def whole_key(self, alias: str, step: str, *extra: str) -> str | None:
        """A key over every base table of side ``alias`` (for a step whose reads are not listed: a report ranking)."""
        tables = self.digests.get(alias)
        if tables is None:
            return None
        return digest(code_fingerprint(), step, self.cuts.get(alias, ""), *extra,
                      *(f"{t}={d}" for t, d in sorted(tables.items())))


def side_key(registry) -> str:
    """The key of ``registry``'s whole built side (every base table, location columns included, and the views and
    macros of the running code): ``scenarios.attach_cached``."""
    from kvreg.tables import frames

    return digest(code_fingerprint(), "side database",
                  *(f"{n}={frame_digest(df, locations=True)}" for n, df in sorted(frames(registry).items())))


def side_digests(registry) -> dict[str, str]:
    """{base table: :func:`frame_digest`} of ``registry``'s frames (``kvreg.tables.frames``)."""
    from kvreg.tables import frames

    return {name: frame_digest(df) for name, df in frames(registry).items()}
