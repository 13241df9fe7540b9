"""kvreg diff's step cache (kvreg/diff/stepcache.py): per-side steps keyed by the content of what they read.

A second diff reads every step back (the speed fits, the admission rows, the focused capacity and roofline rows,
each report's ranking) and reports exactly what the first did and what a diff without the cache reports; a key
moves with the values of a table the step reads and with nothing else; an unreadable file is a miss.
"""

from __future__ import annotations

import math

import duckdb
import pandas as pd

from kvreg.diff import diff_projects
from kvreg.diff.stepcache import FOLDER, StepCache, StepKeys, frame_digest
from tests.test_diff import GiB, commit_recommendation_flip, repo  # noqa: F401  (repo: a fixture)

_ = repo


def test_frame_digest_is_the_values_not_the_objects_nor_the_lines():
    a = pd.DataFrame({"hardware_id": ["hw", "hw"], "usd": [2.5, 3.0], "line": [4, 5]})
    shared = "h" + "w"  # one string object in both rows, as a frame read back from the validate cache has
    b = pd.DataFrame({"hardware_id": [shared, shared], "usd": [2.5, 3.0], "line": [7, 9]})
    assert frame_digest(a) == frame_digest(b)  # same values; only where they were written moved
    c = a.copy()
    c.loc[1, "usd"] = 3.0000000000000004  # the next double: a different value
    assert frame_digest(c) != frame_digest(a)
    assert frame_digest(a.astype({"usd": "float32"})) != frame_digest(a)  # the type is part of the value


def test_a_key_moves_with_the_tables_a_step_reads_only():
    keys = StepKeys(StepCache(None), {"s": {"hardware": "1", "hardware_prices": "2", "models": "3"}},
                    {"capacity": {"hardware", "models"}})
    k = keys.key("s", "capacity", "touched")
    keys.digests["s"] = {"hardware": "1", "hardware_prices": "changed", "models": "3"}
    assert keys.key("s", "capacity", "touched") == k  # a price is not read by this step
    keys.digests["s"] = {"hardware": "changed", "hardware_prices": "2", "models": "3"}
    assert keys.key("s", "capacity", "touched") != k
    assert keys.key("s", "capacity", "other entries") != keys.key("s", "capacity", "touched")
    keys.cut("s", "to hw")
    assert keys.key("s", "capacity", "touched") != keys.key("t", "capacity", "touched")
    keys.reads["roofline"] = {"hardware", "build_info"}  # a table without a digest: never keyed
    assert keys.key("s", "roofline") is None


def test_a_stored_table_reads_back_and_a_broken_file_is_a_miss(tmp_path):
    cache = StepCache(tmp_path)
    con = duckdb.connect()
    con.execute("CREATE TABLE rows AS SELECT range AS n, range * 0.5 AS half, 'x' || range AS id FROM range(1000)")
    cache.store_table(con, "k" * 64, "rows", "rows")
    assert cache.load_table(con, "k" * 64, "back", "rows")
    assert con.execute("SELECT count(*) FROM (SELECT * FROM rows EXCEPT SELECT * FROM back)").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM back").fetchone()[0] == 1000
    assert not cache.load_table(con, "m" * 64, "back", "rows")  # never stored
    (tmp_path / ("k" * 64 + ".duckdb")).write_bytes(b"not a database")
    assert not cache.load_table(con, "k" * 64, "back", "rows")
    assert not (tmp_path / ("k" * 64 + ".duckdb")).exists()  # removed, computed again next time
    con.execute("CREATE TABLE located AS SELECT 1 AS n, 4 AS line")
    cache.store_table(con, "l" * 64, "located", "located")  # a location column: the key does not cover it
    assert not (tmp_path / ("l" * 64 + ".duckdb")).exists()
    cache.store_json("j" * 64, [["m", ["hw", 1]]], "ranking")
    assert cache.load_json("j" * 64, "ranking") == [["m", ["hw", 1]]]
    (tmp_path / ("j" * 64 + ".json")).write_text("{truncated")
    assert cache.load_json("j" * 64, "ranking") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert cache.stores == ["rows", "ranking"] and cache.hits == ["rows", "ranking"]


def test_prune_drops_the_least_recently_used(tmp_path):
    import os

    cache = StepCache(tmp_path)
    for i, name in enumerate(("old", "mid", "new")):
        (tmp_path / f"{name}.json").write_text("x" * 100)
        os.utime(tmp_path / f"{name}.json", (1000 + i, 1000 + i))
    cache.prune(max_bytes=250)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid.json", "new.json"]


def _result(r):
    return (r.entries, r.figures, r.scenario_sets, r.views, r.summaries, r.hidden_below_threshold,
            r.reports_checked, r.recommendations)


def test_a_second_diff_reads_every_step_back_and_reports_the_same(repo, monkeypatch):  # noqa: F811
    # test_diff.py's recommendation-flip case: a report ranks hw and hw2; hw's usable memory 80 → 40 GiB
    # moves the recommendation to hw2 (hand-worked there: 14 sequences per device, 2 devices).
    commit_recommendation_flip(repo)

    def diff():
        said: list[str] = []
        return diff_projects("HEAD~1", "HEAD", repo, progress=said.append), said

    first, said_first = diff()
    assert not [m for m in said_first if m.startswith("read from the step cache")]
    stored = sorted(p.suffix for p in (repo / ".kvreg" / FOLDER).iterdir())
    assert stored.count(".json") == 2  # q4 ranked on BASE and on HEAD
    def hits(said):
        return [h for m in said if m.startswith("read from the step cache") for h in m.split(": ", 1)[1].split(", ")]

    second, said = diff()
    for step in ("speed_efficiency", "ranking of q4", "focus capacity", "focus engine_capacity", "focus roofline",
                 "focus costs"):
        assert hits(said).count(step) == 2, hits(said)  # on both sides
    assert hits(said).count("side database") == 1  # BASE's tables, views and macros (HEAD is a copy of BASE)
    # every comparison's rows came back, so the shared tables they are made from were not needed
    assert "computing the focused scenarios of BASE" not in said and "capacity" not in hits(said)
    assert _result(second) == _result(first)
    # without the comparisons' rows, the shared tables are read back instead of computed
    from kvreg.diff import scenarios

    monkeypatch.setattr(scenarios, "focus_cached", lambda *a: False)
    third, said = diff()
    for step in ("__engine_capacity_rows", "capacity", "roofline"):
        assert hits(said).count(step) == 2, hits(said)
    assert _result(third) == _result(first)
    monkeypatch.undo()
    monkeypatch.setenv("KVREG_DIFF_CACHE", "0")
    off, said_off = diff()
    assert not [m for m in said_off if m.startswith("read from the step cache")]
    assert _result(off) == _result(first)
    # and the numbers are the hand-worked flip
    per_device = math.floor((80 * GiB - 6 * GiB - 8e9 * 2) / (32 * 8 * 256 * 2 * 32768))
    assert per_device == 14
    [flip] = first.recommendations
    assert (flip.report, flip.model, flip.old, flip.new) == (
        "q4", "m", ("hw", "first-principles", "bf16", "bf16", 1, 2), ("hw2", "first-principles", "bf16", "bf16", 1, 2))
    assert first.figures  # hw's capacity moved


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("KVREG_DIFF_CACHE", "0")
    cache = StepCache.for_project(tmp_path)
    assert cache.folder is None and not (tmp_path / ".kvreg").exists()
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT 1 AS n")
    cache.store_table(con, "k" * 64, "t", "t")
    assert not cache.load_table(con, "k" * 64, "back", "t") and cache.load_json("k" * 64, "t") is None
