"""The report's heavy tables kept between runs, keyed by the database they were computed from.

A report reuses the project's database while no input is newer (kvreg/report/make.py, :func:`kvreg.build.is_stale`),
so on every run its queries see the same tables and views, and each temp table the report materialises is a pure
function of that database, the query's SQL and its parameters (the temp tables and macros the query reads were made
the same way, in the same order, by the same code).  The heaviest of them — the engine's admission chain
(``report_engine_capacity_axis``), ``capacity_at`` over the contexts axis (``report_capacity_all``), the two plans and
the roofline: ~2 s of the Q4 2026 report's ~4 s CPU with its charts kept, benchmarks/README.md "html11" — are kept,
so a second report of an unchanged registry reads them back instead of planning and running the chain again (as the
charts are kept, :mod:`kvreg.report.chart_cache`).

Storage is ``kvreg diff``'s step cache (:class:`kvreg.diff.stepcache.StepCache`: one DuckDB file per table, so types
are kept exactly — a HUGEINT sum, lists, structs —, written to a temp name and renamed, an unreadable file removed and
computed again, least recently used files pruned) in its own folder, ``PROJECT/.kvreg/report-tables/``.  The key
differs: a diff keys a step by the content of the base tables it reads; here the whole database is one input, named
by the state of its file — resolved path, size and modification time in ns (a rebuild or any write makes a new
state; the report opens it read-only, so no writer changes it while the report runs) — beside DuckDB's version, a
fingerprint of kvreg's own ``.py`` and ``.sql`` files (the diff steps', stepcache.code_fingerprint) (another checkout's code never reads this one's tables, even
where the database's mtime would not say so), the table's name, the query's SQL and its parameters (``repr``: exact
for the ids, ints, floats, booleans and None passed).  No writable ``.kvreg`` (a read-only checkout, the in-memory
build) or ``KVREG_DIFF_CACHE=0`` means no cache: every query runs, as before.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

FOLDER = "report-tables"
MAX_BYTES = 512 * 1024**2
"""Most bytes the folder keeps: the Q4 2026 report's five tables are ~10 MB, so the last few dozen reports' tables."""


class TableCache:
    """The report's temp tables by key, for one database file.

    Args:
        store: where the tables live (:class:`kvreg.diff.stepcache.StepCache`).
        database: the state of the database they are computed from (:meth:`for_database` makes it from the file).
    """

    def __init__(self, store, database: str):
        self.store = store
        self.database = database
        self.pending: list[tuple[str, str]] = []   # (table, key) computed, to be written by :meth:`flush`

    @classmethod
    def for_database(cls, project: Path | str | None, db: Path | str) -> TableCache | None:
        """The cache in ``PROJECT/.kvreg/report-tables`` for database file ``db``; None when there is no project, the
        folder cannot be written, the file cannot be read, or ``KVREG_DIFF_CACHE=0``."""
        import os

        from kvreg.diff.stepcache import StepCache
        from kvreg.folders import cache_folder

        if os.environ.get("KVREG_DIFF_CACHE", "1").strip() == "0":
            return None
        folder = cache_folder(project, FOLDER)
        if folder is None:
            return None
        try:
            path = Path(db).resolve()
            st = path.stat()
        except OSError:
            return None
        return cls(StepCache(folder), f"{path}|{st.st_size}|{st.st_mtime_ns}")

    def key(self, table: str, sql: str, params: dict) -> str:
        """The hex SHA-256 naming temp table ``table`` made by ``CREATE … AS sql`` with named ``params``."""
        from kvreg.diff.stepcache import code_fingerprint   # the one fingerprint of kvreg's code and versions

        h = hashlib.sha256(code_fingerprint().encode())
        h.update(repr((self.database, table, sql, sorted(params.items()))).encode())
        return h.hexdigest()

    def load(self, con, table: str, key: str) -> bool:
        """Create temp table ``table`` from the rows kept under ``key``; False on a miss (nothing created then)."""
        return self.store.load_table(con, key, table, table)

    def save(self, con, table: str, key: str) -> None:
        """Keep temp table ``table`` under ``key`` at the next :meth:`flush` (the table must stay as it is until then).

        Deferred, not written here: the writes (~0.5 s CPU for the Q4 2026 report, benchmarks/README.md "html11")
        would sit between the heavy queries and the charts' rows, so the chart worker would start drawing that much
        later; the report flushes once the charts are submitted, while the worker draws (kvreg/report/context.py)."""
        self.pending.append((table, key))

    def flush(self, con) -> None:
        """Write the tables :meth:`save` was given since the last flush (a failed write only means the table is
        computed next time)."""
        import duckdb

        pending, self.pending = self.pending, []
        for table, key in pending:
            try:
                self.store.store_table(con, key, f"temp.main.{table}", table)
            except (duckdb.Error, OSError):
                continue

    def prune(self) -> None:
        """Remove the least recently used tables beyond :data:`MAX_BYTES`."""
        self.store.prune(MAX_BYTES)

    @property
    def read(self) -> list[str]:
        """The tables read back this run (for tests and progress)."""
        return self.store.hits

    @property
    def written(self) -> list[str]:
        """The tables computed and kept this run."""
        return self.store.stores
