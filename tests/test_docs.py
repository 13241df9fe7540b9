"""docs/sql.md, docs/validation.md and docs/plan.md stay true: every column, every problem code, every example runs,
every quoted `kvreg plan` output is what the command prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SQL_MD = (ROOT / "docs" / "sql.md").read_text()
VALIDATION_MD = (ROOT / "docs" / "validation.md").read_text()

# The core objects of the registry (issue 2): each documented column by column.
CORE = ["contexts", "precisions", "tp_sizes", "build_info", "models", "layer_groups", "state_tensors",
        "checkpoints", "hardware", "hardware_flops", "hardware_precisions", "residents", "engines", "sources",
        "provenance", "kv_layer_costs", "kv_sequence_costs", "model_weights", "memory_pools", "capacity"]


def section(name: str) -> str:
    """The text under the ``### `name`…`` heading of docs/sql.md, up to the next heading."""
    m = re.search(rf"^### `{re.escape(name)}[`(].*?$(.*?)(?=^#{{2,3}} |\Z)", SQL_MD, re.M | re.S)
    assert m, f"docs/sql.md has no section for {name}"
    return m.group(1)


def columns(con, name: str) -> list[str]:
    return [r[0] for r in con.execute(f'DESCRIBE SELECT * FROM "{name}"').fetchall()]


@pytest.mark.parametrize("name", CORE)
def test_every_column_of_the_core_tables_and_views_is_documented(con, name):
    text = section(name)
    missing = [c for c in columns(con, name) if f"`{c}`" not in text]
    assert not missing, f"{name}: columns not in docs/sql.md: {missing}"


def test_capacity_for_pool_documents_its_own_columns(con):
    text = section("capacity_for_pool")
    own = [r[0] for r in con.execute("DESCRIBE SELECT * FROM capacity_for_pool(1)").fetchall()]
    extra = [c for c in own if c not in columns(con, "kv_sequence_costs")]
    assert extra and all(f"`{c}`" in text for c in extra), extra


def test_every_table_and_view_is_at_least_named(con):
    # temp tables are a session's scratch (kvreg plan's plan_ranked, a test's), not the schema docs/sql.md describes
    names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                       "WHERE table_type <> 'LOCAL TEMPORARY'").fetchall()]
    assert set(CORE) <= set(names)
    missing = [n for n in names if f"`{n}`" not in SQL_MD]
    assert not missing, f"not mentioned in docs/sql.md: {missing}"


@pytest.mark.parametrize("query", re.findall(r"```sql\n(.*?)```", SQL_MD, re.S))
def test_example_queries_run(con, query):
    assert con.execute(query).fetchall()


# Codes written literally where a Problem is made (yamlsrc, registry, build).
LITERAL_CODES = {"yaml-syntax", "empty-file", "bad-encoding", "duplicate-key", "wrong-type", "id-file-mismatch",
                 "duplicate-id", "missing-source", "view-failed", "config-mismatch", "config-unreadable",
                 "unknown-tag", "bad-tagged-value", "bad-number", "yaml-too-large", "unreadable-file",
                 "cannot-write-db", "bad-database",
                 "unknown-parent", "extends-cycle"}


def produced_codes() -> set[str]:
    from kvreg.registry import _CODES, _code

    source = "".join(p.read_text() for p in (ROOT / "kvreg").rglob("*.py"))
    assert all(f'"{c}"' in source for c in LITERAL_CODES)
    codes = set(LITERAL_CODES) | set(_CODES.values()) | {"not-positive", "out-of-range", "bad-unit"}
    codes |= {p.stem.split("_", 1)[1].replace("_", "-") for p in (ROOT / "kvreg/checks").glob("*.sql")}
    for p in (ROOT / "kvreg/schema").glob("*.py"):
        codes |= {_code({"type": t}) for t in re.findall(r'PydanticCustomError\(\s*"([a-z_]+)"', p.read_text())}
    return codes


def test_every_problem_code_is_documented_and_no_other():
    documented = set(re.findall(r"^### `([a-z-]+)`", VALIDATION_MD, re.M))
    produced = produced_codes()
    assert not produced - documented, f"codes missing from docs/validation.md: {sorted(produced - documented)}"
    assert not documented - produced, f"documented codes kvreg never produces: {sorted(documented - produced)}"


PLAN_MD = (ROOT / "docs" / "plan.md").read_text()
# each quoted `kvreg plan` run: the command (continuation lines joined) and the output as printed, "..." marking a cut
PLAN_RUNS = [(m.group(1).replace("\\\n", " "), m.group(2))
             for m in re.finditer(r"^```\w*\n\$ kvreg (plan (?:[^\n]*\\\n)*[^\n]*)\n(.*?)^```", PLAN_MD, re.M | re.S)]


@pytest.fixture(scope="module")
def plan_db(tmp_path_factory, built_db):
    from tests.conftest import copy_db

    return copy_db(built_db, tmp_path_factory.mktemp("plan_docs"))


@pytest.mark.parametrize("command, quoted", PLAN_RUNS, ids=[c[:60] for c, _ in PLAN_RUNS])
def test_plan_md_quotes_what_kvreg_plan_prints(plan_db, command, quoted):
    """docs/plan.md's quoted outputs drifted from the command (the new-user trial's F1): every quoted line is a
    line the command prints now, in the same order; "..." lines stand for what the doc leaves out."""
    import shlex

    from click.testing import CliRunner

    from kvreg.cli import main

    r = CliRunner().invoke(main, shlex.split(command) + ["--project", str(ROOT), "--db", plan_db])
    assert r.exit_code == 0, r.output
    printed = iter(r.output.splitlines())
    missing = [ln for ln in quoted.splitlines() if ln.strip() != "..." and ln not in printed]
    assert missing == [], f"docs/plan.md `kvreg {command[:50]}…`: re-run it and paste the output"
