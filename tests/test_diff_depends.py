"""kvreg/diff/depends.py: the base tables a view reads, from the catalogue's SQL text, include every table DuckDB's
own plan of the view scans (it may over-approximate, never miss one), on the shipped registry."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from kvreg.diff.depends import base_tables_read
from kvreg.diff.scenarios import VIEWS, attach

ROOT = Path(__file__).resolve().parents[1]


def _scanned(con, sql: str) -> set[str]:
    """Base tables the physical plan of ``sql`` scans (EXPLAIN's SEQ_SCAN "Table" entries, unqualified)."""
    out: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            extra = node.get("extra_info")
            if isinstance(extra, dict) and "Table" in extra:
                out.add(str(extra["Table"]).rsplit(".", 1)[-1])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads(con.execute("EXPLAIN (FORMAT JSON) " + sql).fetchall()[0][1]))
    return out


def test_views_read_every_table_their_plan_scans(shipped_registry):
    con = duckdb.connect(":memory:")
    try:
        attach(con, "side", shipped_registry)
        views = [s.view for s in VIEWS]
        reads = base_tables_read(con, "side", views + ["hardware", "no_such_view"])
        assert set(reads) == set(views) | {"hardware"} and reads["hardware"] == {"hardware"}
        for view in views:
            scanned = _scanned(con, f'SELECT * FROM "side"."{view}"')
            assert scanned and scanned <= reads[view], (view, sorted(scanned - reads[view]))
        # the distinctions the diff relies on: prices and sources reach roofline and costs (hardware_peaks; the
        # fitted efficiencies name their sources, 253), not capacity or the admission rows
        for table in ("hardware_prices", "sources", "field_provenance"):
            assert table in reads["roofline"] and table in reads["costs"], table
            assert table not in reads["capacity"] and table not in reads["engine_capacity"], table
        # an alias is not a read: speed_fit's `count(DISTINCT source_id) AS sources` (252) names no table
        assert "sources" not in base_tables_read(con, "side", ["speed_fit"])["speed_fit"]
    finally:
        con.close()
