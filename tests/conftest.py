"""Shared fixtures: the shipped project's database, built once per test session in memory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def con(tmp_path_factory):
    """A DuckDB connection with the shipped registry's tables and views."""
    from kvreg.build import memory_connection

    c = memory_connection(ROOT)
    # The full engine grid joins (~10^8 rows) would take DuckDB's default 80 % of RAM (16 GB peak here,
    # OOM-killed beside other work); a bound makes it spill to disk instead.
    c.execute(f"SET memory_limit = '{os.environ.get('KVREG_TEST_MEMORY_LIMIT', '3GB')}'")
    c.execute(f"SET temp_directory = '{tmp_path_factory.mktemp('duckdb-spill')}'")
    yield c
    c.close()


def one(con, sql: str, params=()):
    """The single row of ``sql`` as a dict; fails when there is not exactly one."""
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, f"expected one row, got {len(rows)}: {sql} {params}"
    return dict(zip(cols, rows[0]))
