"""Shared fixtures: the shipped project's database, built once per test session in memory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Every DuckDB connection the tests open (kvreg.build.duckdb_config): the full engine grid joins would take
# DuckDB's default 80 % of RAM (16 GB peaks, OOM-killed beside other jobs); bounded, they spill to disk.
os.environ.setdefault("KVREG_MEMORY_LIMIT", "3GB")


@pytest.fixture(scope="session")
def con():
    """A DuckDB connection with the shipped registry's tables and views."""
    from kvreg.build import memory_connection

    c = memory_connection(ROOT)
    yield c
    c.close()


def one(con, sql: str, params=()):
    """The single row of ``sql`` as a dict; fails when there is not exactly one."""
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, f"expected one row, got {len(rows)}: {sql} {params}"
    return dict(zip(cols, rows[0]))
