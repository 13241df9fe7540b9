"""`kvreg build` is atomic and `kvreg sql` is read-only and rebuilds a stale database.

No partial database, ever: a failed validation or a failing view leaves an existing
database byte-identical and no temporary file beside it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import kvreg.build
from kvreg.build import build, is_stale
from kvreg.cli import main
from kvreg.problems import KvregError
from tests.registry_factory import engine_entry, hardware_entry, write_project

GROUPS = [dict(kind="full", count=2, kv_heads=8, head_dim=128)]


def project(root: Path, models=("a", "b")) -> Path:
    return write_project(root, models={m: {"layers": 2, "groups": GROUPS} for m in models},
                         hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def db_dir_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".kvreg").iterdir())


def age(paths, seconds_ago: float) -> None:
    """Set the mtime of ``paths`` to ``seconds_ago`` seconds in the past."""
    t = time.time() - seconds_ago
    for p in paths:
        os.utime(p, (t, t))


def test_build_writes_the_database(tmp_path):
    root = project(tmp_path)
    r = run("build", "--project", root)
    assert r.exit_code == 0, r.output
    assert r.output == f"wrote {root / '.kvreg' / 'kvreg.duckdb'}\n"
    assert db_dir_files(root) == ["kvreg.duckdb"]


def test_failed_validation_leaves_the_database_untouched(tmp_path):
    root = project(tmp_path)
    db = build(root)
    before = db.read_bytes()
    (root / "registry/models/b.yaml").write_text("id: b\nlayers: [2\n")
    r = run("build", "--project", root)
    assert r.exit_code == 1
    assert "registry/models/b.yaml:3:1: yaml-syntax" in r.output
    assert db.read_bytes() == before
    assert db_dir_files(root) == ["kvreg.duckdb"]


def test_failed_validation_writes_no_database_at_all(tmp_path):
    root = project(tmp_path)
    (root / "registry/models/b.yaml").write_text("id: b\nlayers: [2\n")
    with pytest.raises(KvregError):
        build(root)
    assert not (root / ".kvreg" / "kvreg.duckdb").exists()


def test_failing_view_leaves_the_database_untouched(tmp_path, monkeypatch):
    root = project(tmp_path)
    db = build(root)
    before = db.read_bytes()
    bad = tmp_path / "999_broken_view.sql"
    bad.write_text("CREATE VIEW broken_view AS SELECT no_such_column FROM capacity")
    shipped = kvreg.build.view_files()
    monkeypatch.setattr(kvreg.build, "view_files", lambda: shipped + [bad])
    r = run("build", "--project", root)
    assert r.exit_code == 1
    assert r.stderr.startswith("kvreg/sql/999_broken_view.sql:1:1: view-failed: view 999_broken_view failed to build:")
    assert db.read_bytes() == before
    assert db_dir_files(root) == ["kvreg.duckdb"]


def test_sql_connection_is_read_only(tmp_path):
    root = project(tmp_path)
    build(root)
    before = (root / ".kvreg/kvreg.duckdb").read_bytes()
    r = run("sql", "INSERT INTO tp_sizes VALUES (3)", "--project", root)
    assert r.exit_code == 2
    assert "read-only" in r.output
    assert (root / ".kvreg/kvreg.duckdb").read_bytes() == before


def test_sql_builds_a_missing_database(tmp_path):
    root = project(tmp_path)
    r = run("sql", "SELECT count(*) AS n FROM models", "--project", root, "--format", "csv")
    assert (r.exit_code, r.output) == (0, "n\n2\n")
    assert db_dir_files(root) == ["kvreg.duckdb"]


def test_fresh_database_is_not_rebuilt(tmp_path):
    root = project(tmp_path)
    db = build(root)
    age([db], 0)  # the database is newer than every input
    assert not is_stale(root, db)
    stamp = db.stat().st_mtime_ns
    assert run("sql", "SELECT 1", "--project", root).exit_code == 0
    assert db.stat().st_mtime_ns == stamp


def test_sql_rebuilds_when_a_yaml_file_is_newer(tmp_path):
    root = project(tmp_path)
    db = build(root)
    age([p for p in root.rglob("*") if ".kvreg" not in p.parts], 120)
    age([db], 0)
    assert not is_stale(root, db)
    time.sleep(0.05)
    path = root / "registry/models/a.yaml"
    path.write_text(path.read_text().replace("id: a", "id: a\nname: Renamed"))
    assert is_stale(root, db)
    r = run("sql", "SELECT name FROM models WHERE model_id = 'a'", "--project", root, "--format", "csv")
    assert (r.exit_code, r.output) == (0, "name\nRenamed\n")


def test_sql_rebuilds_when_an_entry_file_is_deleted(tmp_path):
    root = project(tmp_path)
    db = build(root)
    # Every input older than the database, so only the deletion can make it stale.
    inputs = [p for p in root.rglob("*") if ".kvreg" not in p.parts]
    age(inputs, 120)
    age([db], 0)
    assert not is_stale(root, db)
    time.sleep(0.05)  # past the file system's coarse timestamp tick
    (root / "registry/models/b.yaml").unlink()
    assert is_stale(root, db)
    r = run("sql", "SELECT string_agg(model_id, ',') AS ids FROM models", "--project", root, "--format", "csv")
    assert (r.exit_code, r.output) == (0, "ids\na\n")


def test_newer_kvreg_code_makes_the_database_stale(tmp_path):
    root = project(tmp_path)
    db = build(root)
    age([db], 0)
    assert not is_stale(root, db)
    age([db], 10**6)   # older than the package's own files, as after upgrading kvreg
    assert is_stale(root, db)


def test_stale_database_with_a_now_invalid_registry_is_kept(tmp_path):
    root = project(tmp_path)
    db = build(root)
    before = db.read_bytes()
    age([db], 60)
    (root / "registry/models/a.yaml").write_text("id: a\nlayers: 0\n")
    r = run("sql", "SELECT 1", "--project", root)
    assert r.exit_code == 1
    assert "registry/models/a.yaml" in r.output
    assert db.read_bytes() == before
