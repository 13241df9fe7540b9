"""A built database file holds the parameterless speed views as tables (kvreg.build.persist_views), with exactly
the rows the views compute; and the checks every command runs first (--project, is the database fresh) load no
schema (kvreg/folders.py) — both for issue 13's speed criterion (benchmarks/README.md, "Speed commands")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(built_db):
    return built_db   # kvreg.build.build of the shipped registry, once per session (tests/conftest.py)


def test_persisted_views_are_tables_with_the_views_rows(views_con, built):
    con = views_con   # the in-memory build, its speed views left as views
    from kvreg.build import PERSISTED_VIEWS

    con.execute(f"ATTACH '{built}' AS built (READ_ONLY)")
    try:
        for name in PERSISTED_VIEWS:
            kind = con.execute("SELECT table_type FROM information_schema.tables WHERE table_catalog = 'built' "
                               "AND table_name = ?", [name]).fetchone()
            assert kind == ("BASE TABLE",), name
            # the in-memory connection keeps the view: same columns in the same order, same rows (EXCEPT ALL both ways)
            cols = lambda db: con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE "  # noqa: E731
                                          "database_name = ? AND table_name = ? ORDER BY column_index",
                                          [db, name]).fetchall()
            assert cols("built") == cols("memory"), name
            n, only_built, only_view = con.execute(
                f"SELECT (SELECT count(*) FROM built.{name}), "
                f"(SELECT count(*) FROM (SELECT * FROM built.{name} EXCEPT ALL SELECT * FROM memory.{name})), "
                f"(SELECT count(*) FROM (SELECT * FROM memory.{name} EXCEPT ALL SELECT * FROM built.{name}))"
            ).fetchone()
            assert n > 100 and (only_built, only_view) == (0, 0), (name, n, only_built, only_view)
        # the views above them read the tables: the plans' efficiencies are the view chain's
        assert con.execute("SELECT count(*) FROM (SELECT * FROM built.speed_efficiency EXCEPT ALL "
                           "SELECT * FROM memory.speed_efficiency)").fetchone()[0] == 0
    finally:
        con.execute("DETACH built")


def test_project_and_staleness_checks_load_no_schema(built):
    # what `kvreg plan` / `kvreg calibrate` run before their query: the CLI, the --project check, the freshness check
    code = ("import sys; from pathlib import Path; import kvreg.cli; from kvreg.folders import is_project; "
            "from kvreg.build import is_stale; root = Path(sys.argv[1]); assert is_project(root); "
            "print(is_stale(root, Path(sys.argv[2])), 'pydantic' in sys.modules, 'kvreg.registry' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT), str(built)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout.split()
    assert out == ["False", "False", "False"]


def test_folders_are_the_registry_kinds():
    from kvreg.folders import FOLDERS, entry_files
    from kvreg.registry import KINDS, discover

    assert [(k.name, k.folder) for k in KINDS] == list(FOLDERS.items())
    assert entry_files(ROOT) == [p for _, p in discover(ROOT)] and len(entry_files(ROOT)) > 100
