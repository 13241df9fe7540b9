"""Charts kept between report runs (kvreg/report/chart_cache.py): the same bytes as drawn, drawn again when anything
that draws them changes, never a broken file served, and no worker process or matplotlib import when all are kept."""

from __future__ import annotations

import os

import pytest

from kvreg.report import chart_workers, charts
from kvreg.report.chart_cache import ChartCache
from tests.test_report_speed import _chart_jobs


@pytest.fixture
def fresh_workers(monkeypatch):
    """chart_workers as in a new process: no worker started yet (restored after the test)."""
    monkeypatch.setattr(chart_workers, "_WORKERS", None)
    monkeypatch.setattr(chart_workers, "_USE_WORKERS", None)
    monkeypatch.setattr(chart_workers, "_CACHE", None)


def _fields(rows):
    return rows[0]._fields if rows else ()


def test_key_follows_every_row_value_the_kind_and_the_arguments():
    kind, rows, args = _chart_jobs()[0]
    k = ChartCache.key(kind, _fields(rows), rows, args)
    assert k == ChartCache.key(kind, _fields(rows), list(rows), tuple(args)) and len(k) == 64
    changed = [rows[0]._replace(max_seqs=rows[0].max_seqs + 1), *rows[1:]]
    assert ChartCache.key(kind, _fields(rows), changed, args) != k
    assert ChartCache.key(kind, _fields(rows), rows, (args[0] + 1,)) != k
    assert ChartCache.key("roofline", _fields(rows), rows, args) != k
    # a float that prints the same at 6 digits is still another row
    floaty = [rows[0]._replace(max_seqs=0.1 + 0.2), *rows[1:]]
    assert ChartCache.key(kind, _fields(rows), floaty, args) != ChartCache.key(
        kind, _fields(rows), [rows[0]._replace(max_seqs=0.3), *rows[1:]], args)


def test_get_put_none_and_broken_files(tmp_path):
    cache = ChartCache(tmp_path)
    assert cache.get("a") == (False, None)
    cache.put("a", "<svg>x</svg>\n")
    cache.put("b", None)   # a chart with nothing to plot
    assert cache.get("a") == (True, "<svg>x</svg>\n") and cache.get("b") == (True, None)
    (tmp_path / "c.svg").write_text("<svg>half a cha")   # a write cut short (not by put: it renames)
    assert cache.get("c") == (False, None)
    (tmp_path / "d.svg").write_bytes(b"\xff\xfe<svg")
    assert cache.get("d") == (False, None)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_prune_keeps_the_most_recently_used(tmp_path):
    cache = ChartCache(tmp_path)
    for i in range(6):
        cache.put(f"k{i}", f"<svg>{i}</svg>")
        os.utime(tmp_path / f"k{i}.svg", (1000 + i, 1000 + i))
    assert cache.get("k0")[0]   # used now: newest
    cache.prune(keep=3)
    assert sorted(p.stem for p in tmp_path.iterdir()) == ["k0", "k4", "k5"]


def test_workers_draw_and_keep_then_a_second_run_reads_without_starting_a_worker(tmp_path, fresh_workers):
    jobs = _chart_jobs()
    fresh = []
    for kind, rows, args in jobs:
        charts._REUSED.clear()
        fresh.append(getattr(charts, kind)(rows, *args))
    cache = ChartCache.for_project(tmp_path)
    assert cache.folder == tmp_path / ".kvreg" / "charts" and not cache.holds_any()
    assert chart_workers.start_workers(cache)
    assert len(chart_workers._WORKERS) == 1   # an empty cache (a first run): the worker starts at once
    pending = [chart_workers.submit(kind, rows, *args) for kind, rows, args in jobs]
    assert all(isinstance(p, chart_workers._Pending) for p in pending)   # drawn by the worker
    assert [p.result() for p in pending] == fresh
    assert len(list(cache.folder.glob("*.svg"))) == len(jobs)

    chart_workers._WORKERS = None   # a second report run, in a new process
    assert chart_workers.start_workers(ChartCache.for_project(tmp_path))
    again = [chart_workers.submit(kind, rows, *args) for kind, rows, args in jobs]
    assert all(isinstance(p, chart_workers._Done) for p in again)
    assert [p.result() for p in again] == fresh
    assert chart_workers._WORKERS is None   # a cache that holds charts: no worker before one it does not hold;
    # nothing drawn, so no process started

    # one changed row: that chart only is drawn again (and kept)
    kind, rows, args = jobs[0]
    moved = [rows[0]._replace(max_seqs=rows[0].max_seqs * 2), *rows[1:]]
    p = chart_workers.submit(kind, moved, *args)
    charts._REUSED.clear()
    assert isinstance(p, chart_workers._Pending) and p.result() == charts.capacity_vs_context(moved, *args) != fresh[0]
    assert len(list(cache.folder.glob("*.svg"))) == len(jobs) + 1


def test_read_only_project_draws_without_a_cache(tmp_path):
    (tmp_path / ".kvreg").mkdir()
    (tmp_path / ".kvreg" / "charts").write_text("a file where the folder would be")
    assert ChartCache.for_project(tmp_path) is None
    assert ChartCache.for_project(None) is None
