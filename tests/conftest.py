"""Shared fixtures: the shipped project's database, built once per test session (in memory, and as a file)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Every DuckDB connection the tests open (kvreg.build.duckdb_config): the full engine grid joins would take
# DuckDB's default 80 % of RAM (16 GB peaks, OOM-killed beside other jobs); bounded, they spill to disk.
os.environ.setdefault("KVREG_MEMORY_LIMIT", "3GB")


@pytest.fixture(scope="session")
def shipped_registry():
    """The shipped registry validated once per session (:func:`kvreg.registry.load_registry`, ~4 s of CPU a time).

    Shared by every module that reads it: read it, never change it (a test that edits entries writes its own
    project with tests/registry_factory.py or tests/report_tools.copy_project).
    """
    from kvreg.registry import load_registry

    return load_registry(ROOT)


def _memory_connection(registry):
    """:func:`kvreg.build.memory_connection` of an already validated registry."""
    import duckdb

    from kvreg.build import duckdb_config, populate

    c = duckdb.connect(":memory:", config=duckdb_config())
    populate(c, registry)
    return c


@pytest.fixture(scope="session")
def con(shipped_registry):
    """A DuckDB connection with the shipped registry's tables and views, read as a built database file reads them.

    The parameterless speed views (kvreg.build.PERSISTED_VIEWS) are persisted as tables of their rows, as
    :func:`kvreg.build.build` writes them for every CLI command: as views, every ``plans`` / ``roofline`` query
    re-ran the throughput fits inside it (``plans(1000, 100000, 0.02)``: 99 s of CPU as views, 8 s persisted;
    benchmarks/README.md, "Test suite").  tests/test_persist.py checks the tables hold exactly the views' rows,
    on a connection of its own that keeps the views (:func:`views_con`).
    """
    from kvreg.build import persist_views

    c = _memory_connection(shipped_registry)
    persist_views(c)
    yield c
    c.close()


@pytest.fixture(scope="module")
def views_con(shipped_registry):
    """A connection like :func:`con` whose speed views stay views (for the test that compares both)."""
    c = _memory_connection(shipped_registry)
    yield c
    c.close()


@pytest.fixture(scope="session")
def built_db(tmp_path_factory) -> Path:
    """The shipped registry built once per session by :func:`kvreg.build.build` (never into the checkout).

    Read it through :func:`copy_db`: each test or module gets its own copy (a file copy, not a ~10 s CPU build of
    the whole registry per ``--db`` path), so no test can see another's writes.
    """
    from kvreg.build import build

    return build(ROOT, tmp_path_factory.mktemp("built") / "kvreg.duckdb")


def copy_db(built: Path, folder: Path) -> str:
    """A copy of the session's built database in ``folder`` (path as a string, for ``--db``).

    The copy is newer than every registry file and kvreg module, so :func:`kvreg.build.is_stale` takes it as
    fresh, exactly as the CLI takes a database it built itself.
    """
    dest = Path(folder) / "built-copy" / "kvreg.duckdb"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built, dest)
    return str(dest)


@pytest.fixture
def root_db(built_db, tmp_path) -> str:
    """A fresh copy of the session's built database of the shipped registry, for one test's ``--db``."""
    return copy_db(built_db, tmp_path)


def one(con, sql: str, params=()):
    """The single row of ``sql`` as a dict; fails when there is not exactly one."""
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, f"expected one row, got {len(rows)}: {sql} {params}"
    return dict(zip(cols, rows[0]))
