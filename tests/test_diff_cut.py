"""kvreg diff's cut (kvreg/diff/scenarios.py cut_to_touched): a side cut down to the touched entries gives
exactly the focused rows of the whole registry — the shipped registry, a real engine release, fitted
efficiencies (frozen before the cut), served drafts and resident models."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kvreg.diff.focus import FOCUS
from kvreg.diff.scenarios import attach, cut_to_touched
from kvreg.registry import load_registry

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def registry():
    return load_registry(ROOT)


def _focused(con, view: str, kind_col: str, ids: list[str]) -> list[tuple]:
    spec = FOCUS[view]
    sql = spec.sql.format(db='"side"', entity=f"list_contains(?, v.{kind_col})")
    return sorted(con.execute(f"SELECT * EXCLUDE (__fit) FROM ({sql})", [ids]).fetchall(), key=repr)


@pytest.mark.parametrize("kind, col, ids, views", [
    # an accelerator with throughput measurements (its efficiency is fitted across accelerators)
    ("hardware", "hardware_id", ["h100-sxm-80gb"], ["roofline"]),
    # a model served with a speculative draft (llama-3.1-8b + EAGLE) and a recurrent hybrid
    ("model", "model_id", ["llama-3.1-8b", "qwen3.6-27b"], ["capacity"]),
])
def test_cut_side_gives_the_whole_registrys_focused_rows(registry, kind, col, ids, views):
    whole, cut = duckdb.connect(":memory:"), duckdb.connect(":memory:")
    try:
        for con in (whole, cut):
            con.execute("SET memory_limit = '3GB'")
            attach(con, "side", registry)
        assert cut_to_touched(cut, "side", [(kind, ids)])
        for view in views:
            expected = _focused(whole, view, col, ids)
            assert expected, view
            assert _focused(cut, view, col, ids) == expected, view
    finally:
        whole.close()
        cut.close()


def test_mixed_edits_are_not_cut(registry):
    con = duckdb.connect(":memory:")
    try:
        attach(con, "side", registry)
        assert not cut_to_touched(con, "side", [("model", ["llama-3.1-8b"]), ("hardware", ["h100-sxm-80gb"])])
        assert con.execute('SELECT count(*) FROM "side".hardware').fetchone()[0] > 1
    finally:
        con.close()
