"""Shared fixtures: the shipped project's database, built once per test session in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
