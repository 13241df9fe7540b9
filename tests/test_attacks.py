"""The attacks of issue 15, as regression tests: each ends in a located problem or a usage error.

``kvreg sql`` must leave every file byte-identical (a hash of the whole tree before and after),
whatever the query; bad inputs give exit 1 (problems with file:line) or 2 (usage), never a
traceback (CliRunner's ``exception`` is then a SystemExit, never anything else).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from tests.registry_factory import engine_entry, hardware_entry, write_project

ROOT = Path(__file__).resolve().parents[1]
GROUPS = [dict(kind="full", count=2, kv_heads=8, head_dim=128)]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def clean_exit(r, codes=(0, 1, 2)) -> None:
    """The run ended by kvreg's choice: an allowed exit code and no Python traceback."""
    assert r.exit_code in codes, (r.exit_code, r.output)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output


def tree_hash(root: Path) -> str:
    """One hash of every path and byte below ``root`` (files, folders, names)."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(p.relative_to(root).as_posix().encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """A fixture project with its database already built (so a query only reads)."""
    root = write_project(tmp_path_factory.mktemp("attack"), models={"a": {"layers": 2, "groups": GROUPS}},
                         hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    assert run("build", "--project", root).exit_code == 0
    return root


@pytest.fixture(autouse=True)
def in_project(small, monkeypatch):
    """Relative paths in queries land in the project, so the tree hash sees any write."""
    monkeypatch.chdir(small)


WRITES = [
    "COPY (SELECT 'pwned' AS id) TO 'registry/models/a.yaml' (HEADER false)",
    "COPY (SELECT * FROM models) TO 'out.parquet' (FORMAT parquet)",
    "COPY models TO 'hardware/x.csv'",
    "EXPORT DATABASE 'dump'",
    "INSTALL httpfs",
    "FORCE INSTALL httpfs",
    "LOAD httpfs",
    "ATTACH 'other.duckdb' AS o",
    "ATTACH ':memory:' AS m",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "RESET lock_configuration",
    "PRAGMA threads = 1",
    "SET allowed_directories = ['/']",
    "CREATE TABLE t AS SELECT 1",
    "INSERT INTO models SELECT * FROM models",
    "DROP VIEW capacity",
    "SELECT * FROM read_csv('registry/models/a.yaml')",
    "SELECT * FROM 'https://example.com/x.csv'",
    "CREATE SECRET s (TYPE s3)",
    "SELECT * FROM glob('*')",
]


@pytest.mark.parametrize("query", WRITES)
def test_sql_cannot_change_or_read_anything(small, query):
    before = tree_hash(small)
    r = run("sql", query, "--project", small)
    clean_exit(r, (2,))
    assert "Error:" in r.output
    assert tree_hash(small) == before


def test_sql_refusal_says_what_to_use_instead(small):
    r = run("sql", "COPY (SELECT 1) TO 'x.csv'", "--project", small)
    assert r.exit_code == 2
    assert "disabled by configuration" in r.output and "kvreg export" in r.output


def test_sql_still_answers_queries_and_temp_objects_change_no_file(small):
    before = tree_hash(small)
    r = run("sql", "SELECT count(*) AS n FROM models", "--project", small, "--format", "csv")
    assert (r.exit_code, r.output) == (0, "n\n1\n")
    r = run("sql", "CHECKPOINT", "--project", small)
    clean_exit(r)
    assert tree_hash(small) == before


def test_sql_table_option_loads_a_local_file(small, tmp_path):
    prices = tmp_path / "prices.csv"
    prices.write_text("hardware_id,usd\nhw,2.5\n")
    r = run("sql", "SELECT p.usd FROM prices p JOIN hardware h USING (hardware_id)", "--project", small,
            "--table", f"prices={prices}", "--format", "csv")
    assert (r.exit_code, r.output) == (0, "usd\n2.5\n")
    r = run("sql", "SELECT 1", "--project", small, "--table", "prices")
    clean_exit(r, (2,))
    assert "NAME=FILE" in r.output


def test_export_parquet_and_csv_are_written_by_duckdb(small, tmp_path):
    import duckdb

    out = tmp_path / "models.parquet"
    r = run("export", "models", "--to", out, "--project", small)
    assert (r.exit_code, r.output) == (0, f"wrote {out} (1 rows)\n")
    assert duckdb.connect().execute("SELECT model_id FROM read_parquet(?)", [str(out)]).fetchall() == [("a",)]
    csv = tmp_path / "cap.csv"
    r = run("export", "SELECT context_tokens FROM capacity", "--where", "context_tokens = 8192", "--to", csv,
            "--project", small)
    assert r.exit_code == 0, r.output
    lines = csv.read_text().splitlines()
    assert lines[0] == "context_tokens" and set(lines[1:]) == {"8192"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.csv", "models.parquet"]  # no temp file left


@pytest.mark.parametrize("args", [
    ("no_such_view", "--to", "x.parquet"),
    ("models", "--to", "x.xlsx"),
    ("models", "--to", "no/such/folder/x.csv"),
    ("models", "--where", "1; COPY models TO 'y.csv'", "--to", "x.csv"),
    ("SELECT 1; SELECT 2", "--to", "x.csv"),
    ("SELECT * FROM models", "--where", "no_such_column = 1", "--to", "x.csv"),
])
def test_export_bad_requests_are_usage_errors_and_write_nothing(small, args):
    before = tree_hash(small)
    r = run("export", *args, "--project", small)
    clean_exit(r, (2,))
    assert tree_hash(small) == before


def test_export_did_you_mean(small):
    r = run("export", "model", "--to", "x.csv", "--project", small)
    assert r.exit_code == 2 and "did you mean" in r.output and "models" in r.output
