"""The report's heavy tables kept between runs (kvreg/report/table_cache.py): a second report of an unchanged
database reads them back and writes the same HTML; a new database state, a broken file or no cache computes them."""

from __future__ import annotations

import importlib
import os

from kvreg.report.table_cache import TableCache
from tests.report_tools import copy_project

make = importlib.import_module("kvreg.report.make")   # kvreg.report is also the API function of that name
HEAVY = {"report_engine_capacity_axis", "report_capacity_all", "report_plans", "report_roofline"}
OPEN = make._database


def _render(project, monkeypatch, seen: list):
    """The example's HTML (no charts) and the TableCache the report used (recorded in ``seen``)."""
    opened = OPEN

    def database(p, say):
        con, registry, tables = opened(p, say)
        seen.append(tables)
        return con, registry, tables

    monkeypatch.setattr(make, "_database", database)
    return make.render(project, "example", ["html"], charts=False)["html"]


def test_second_report_reads_the_tables_back_and_writes_the_same_html(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764633600")
    project = copy_project(tmp_path)
    seen: list = []
    first = _render(project, monkeypatch, seen)
    assert HEAVY <= set(seen[0].written) and not seen[0].read
    kept = sorted((project / ".kvreg" / "report-tables").glob("*.duckdb"))
    assert len(kept) == len(seen[0].written)
    second = _render(project, monkeypatch, seen)
    assert set(seen[1].read) == set(seen[0].written) and not seen[1].written
    assert second == first

    # a broken file is computed again (and rewritten), never an error; the HTML is the same
    broken = kept[0]
    broken.write_bytes(b"not a duckdb file")
    third = _render(project, monkeypatch, seen)
    assert len(seen[2].written) == 1 and third == first

    # the database file in another state (rebuilt, or written by anyone): every table is computed again
    db = project / ".kvreg" / "kvreg.duckdb"
    st = db.stat()
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    fourth = _render(project, monkeypatch, seen)
    assert not seen[3].read and set(seen[3].written) == set(seen[0].written) and fourth == first


def test_key_names_the_database_state_the_table_the_sql_and_every_parameter(tmp_path):
    db = tmp_path / "x.duckdb"
    db.write_bytes(b"0")
    (tmp_path / "reports").mkdir()
    cache = TableCache.for_database(tmp_path, db)
    k = cache.key("t", "SELECT 1", {"a": [1, 2], "b": None})
    assert k == cache.key("t", "SELECT 1", {"b": None, "a": [1, 2]}) and len(k) == 64
    assert k != cache.key("u", "SELECT 1", {"a": [1, 2], "b": None})
    assert k != cache.key("t", "SELECT 2", {"a": [1, 2], "b": None})
    assert k != cache.key("t", "SELECT 1", {"a": [1, 3], "b": None})
    assert k != cache.key("t", "SELECT 1", {"a": [1, 2], "b": 0.30000000000000004})
    db.write_bytes(b"01")   # another size
    assert TableCache.for_database(tmp_path, db).key("t", "SELECT 1", {"a": [1, 2], "b": None}) != k


def test_no_cache_without_a_writable_project_or_when_turned_off(tmp_path, monkeypatch):
    db = tmp_path / "x.duckdb"
    db.write_bytes(b"0")
    assert TableCache.for_database(None, db) is None
    assert TableCache.for_database(tmp_path, tmp_path / "missing.duckdb") is None
    monkeypatch.setenv("KVREG_DIFF_CACHE", "0")
    assert TableCache.for_database(tmp_path, db) is None


def test_tables_are_written_after_the_charts_rows_are_submitted(tmp_path, monkeypatch):
    """The writes (~0.5 s CPU for the Q4 2026 report) wait until the charts are submitted, so the chart worker gets
    its rows that much sooner (TableCache.save defers, context.py flushes once the charts are sent and at the end)."""
    from kvreg.report import chart_workers

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764633600")
    project = copy_project(tmp_path)
    seen: list = []
    at_submit: list = []

    def submit(kind, rows, *args):
        at_submit.append((kind, list(seen[-1].written), len(seen[-1].pending)))
        return chart_workers._Done(None)

    monkeypatch.setattr(chart_workers, "start_workers", lambda cache=None: True)
    monkeypatch.setattr(chart_workers, "submit", submit)
    opened = OPEN

    def database(p, say):
        con, registry, tables = opened(p, say)
        seen.append(tables)
        threads.append(con.execute("SELECT current_setting('threads')").fetchone()[0])
        return con, registry, tables

    threads: list = []
    monkeypatch.setattr(make, "_database", database)
    make.render(project, "example", ["html"], charts=True)
    assert threads == [make.report_threads()]
    assert at_submit and all(not written for _, written, _ in at_submit)
    assert all(pending >= len(HEAVY) for _, _, pending in at_submit)   # computed, waiting to be written
    assert HEAVY <= set(seen[0].written) and not seen[0].pending


def test_save_waits_for_flush_and_a_table_gone_by_then_is_skipped(tmp_path):
    import duckdb

    from kvreg.diff.stepcache import StepCache

    (tmp_path / "tables").mkdir()
    con = duckdb.connect()
    cache = TableCache(StepCache(tmp_path / "tables"), "db|1|2")
    con.execute("CREATE TEMP TABLE a AS SELECT 42::HUGEINT AS x")
    con.execute("CREATE TEMP TABLE b AS SELECT 1 AS y")
    cache.save(con, "a", cache.key("a", "q", {}))
    cache.save(con, "b", cache.key("b", "q", {}))
    assert not list((tmp_path / "tables").glob("*.duckdb")) and not cache.written
    con.execute("DROP TABLE b")   # gone before the flush: not kept, no error
    cache.flush(con)
    assert cache.written == ["a"] and not cache.pending
    other = duckdb.connect()
    assert cache.load(other, "a", cache.key("a", "q", {}))
    assert other.execute("SELECT x, typeof(x) FROM a").fetchall() == [(42, "HUGEINT")]
    assert not cache.load(other, "b", cache.key("b", "q", {}))


def test_report_threads_leave_the_chart_worker_its_core(monkeypatch):
    """make.report_threads: DuckDB gets the cores the chart worker leaves, at least one (the report's connection
    is opened with it: test_tables_are_written_after_the_charts_rows_are_submitted)."""
    for cores, threads in ((2, 1), (16, 15), (1, 1), (None, 1)):
        monkeypatch.setattr(os, "cpu_count", lambda c=cores: c)
        assert make.report_threads() == threads
