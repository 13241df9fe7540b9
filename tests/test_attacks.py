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


def test_a_failing_query_is_one_error_line_exit_1_without_the_usage_banner(small):
    # attack trial (issue 15): a runtime SQL error printed click's "Usage: ... Try --help" banner, exit 2
    r = run("sql", "SELECT 'a'::INT", "--project", small)
    assert r.exit_code == 1, r.output
    assert r.output.startswith("Error: Conversion Error: Could not convert string 'a' to INT32")
    assert "Usage:" not in r.output and "--help" not in r.output
    r = run("sql", "COPY (SELECT 1) TO 'x.csv'", "--project", small)
    assert r.exit_code == 2 and "Usage:" not in r.output and "--help" not in r.output


def test_an_export_refusal_names_kvreg_export(small, tmp_path):
    # it said "kvreg sql cannot write files" to a user who ran kvreg export
    r = run("export", "SELECT * FROM read_csv('/etc/passwd')", "--to", tmp_path / "x.csv", "--project", small)
    assert r.exit_code == 2 and "disabled by configuration" in r.output, r.output
    assert "kvreg export cannot read other files" in r.output and "kvreg sql" not in r.output
    assert "Usage:" not in r.output and not (tmp_path / "x.csv").exists()


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
    # a file named like a registry table or view would hide it without a word (trial10: --table models=… made
    # "SELECT count(*) FROM models" answer 1): refused, the name suggested
    for name in ("models", "capacity"):
        r = run("sql", f"SELECT count(*) FROM {name}", "--project", small, "--table", f"{name}={prices}")
        clean_exit(r, (2,))
        assert f"'{name}' is a table or view of the kvreg database" in r.output and f"my_{name}=" in r.output


def test_export_parquet_and_csv_are_written_by_duckdb(small, tmp_path):
    import duckdb

    out = tmp_path / "models.parquet"
    r = run("export", "models", "--to", out, "--project", small)
    assert (r.exit_code, r.output) == (0, f"wrote {out} (1 row)\n")
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
])
def test_export_bad_requests_are_usage_errors_and_write_nothing(small, args):
    before = tree_hash(small)
    r = run("export", *args, "--project", small)
    clean_exit(r, (2,))
    assert tree_hash(small) == before


def test_export_of_a_failing_query_exits_1_and_writes_nothing(small):
    # a query DuckDB fails (an unknown column) is a query error, exit 1 as in kvreg sql (docs/sql.md)
    before = tree_hash(small)
    r = run("export", "SELECT * FROM models", "--where", "no_such_column = 1", "--to", "x.csv", "--project", small)
    clean_exit(r, (1,))
    assert r.output.startswith('Error: Binder Error: Referenced column "no_such_column" not found')
    assert tree_hash(small) == before


def test_export_did_you_mean(small):
    r = run("export", "model", "--to", "x.csv", "--project", small)
    assert r.exit_code == 2 and "did you mean" in r.output and "models" in r.output


# --- Bad registry input: every class ends in a located problem (exit 1), fast -------------------------

def real_project(root: Path) -> Path:
    """A copy of three shipped entries (Llama 3.1 8B, H100 SXM and PCIe, first principles)."""
    for rel in ("registry/models/llama-3.1-8b.yaml", "registry/models/llama-3.1-8b.config.json",
                "hardware/h100-sxm-80gb.yaml", "hardware/h100-pcie-80gb.yaml", "registry/engines/first-principles.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    return root


MODEL = "registry/models/llama-3.1-8b.yaml"


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def line_of(path: Path, text: str) -> int:
    """1-based line of the first line of ``path`` that starts with ``text``."""
    return next(n for n, l in enumerate(path.read_text().splitlines(), 1) if l.startswith(text))


def problems(root: Path) -> list[dict]:
    import json

    r = run("validate", "--project", root, "--format", "json")
    clean_exit(r, (0, 1))
    return json.loads(r.output) if r.exit_code == 1 else []


BILLION_LAUGHS = "id: x\n" + "\n".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}" if i else '"lol"'] * 9) + "]"
    for i in range(9)).replace("*a", '"lol"') + "\n"


# Llama 3.1 8B's entry states no attention_heads or vocab_size (its shipped config gives them): a bad one is added.
@pytest.mark.parametrize("old,new,code,line", [
    ("architecture: LlamaForCausalLM", "architecture: LlamaForCausalLM\nattention_heads: 32\nnotes:", None, None),        # empty value = null: valid
    ("architecture: LlamaForCausalLM", "architecture: LlamaForCausalLM\nattention_heads: !custom 32", "unknown-tag", 10),
    ("architecture: LlamaForCausalLM", 'architecture: LlamaForCausalLM\nattention_heads: !!int "abc"', "bad-tagged-value", 10),
    ("architecture: LlamaForCausalLM", 'architecture: LlamaForCausalLM\nattention_heads: !!float "abc"', "bad-tagged-value", 10),
    ("architecture: LlamaForCausalLM", 'architecture: LlamaForCausalLM\nattention_heads: !!timestamp "xyz"', "bad-tagged-value", 10),
    ("architecture: LlamaForCausalLM", "architecture: LlamaForCausalLM\nattention_heads: 99999999999999999999", "bad-number", 10),
    ("architecture: LlamaForCausalLM", "architecture: LlamaForCausalLM\nattention_heads: .inf", "bad-number", 10),
    ("    kv_heads: 8", "    kv_heads: yes", "wrong-type", 19),                # YAML 1.1 would read 1
    ("    kv_heads: 8", "    kv_heads: 8_0", "wrong-type", 19),                # YAML 1.1 would read 80
    ("    kv_heads: 8", '    kv_heads: "8"', "wrong-type", 19),                # strict: no strings for ints
    ("    kv_heads: 8", "    kv_heads: 33", "bad-geometry", 19),
    ("    kv_heads: 8", "    kv_heads: 7", "bad-geometry", 19),
    ("architecture: LlamaForCausalLM", "architecture: LlamaForCausalLM\nvocab_size: 8", "out-of-range", 9),
    ("architecture: LlamaForCausalLM", "architecture: LlamaForCausalLM\nvocab_size: 623000000000", "out-of-range", 9),
    ("    head_dim: 128", "    head_dim: 100000", "out-of-range", 20),
    # attack trial (issue 15): a fractional token count validated and was truncated to 131072
    ("native_context: {value: 131072, source: config}", "native_context: {value: 131072.5, source: config}",
     "wrong-type", 9),
    ("native_context: {value: 131072, source: config}", 'native_context: {value: "131072.5", source: config}',
     "wrong-type", 9),
    ("native_context: {value: 131072, source: config}", "native_context: {value: 131.0725Ki, source: config}",
     "wrong-type", 9),
    ("native_context: {value: 131072, source: config}", "native_context: {value: 128Ki, source: config}", None, None),
])
def test_bad_model_values_are_located_problems(tmp_path, old, new, code, line):
    root = real_project(tmp_path)
    edit(root, MODEL, old, new)
    found = problems(root)
    if code is None:
        assert found == []
        return
    assert [(p["code"], p["file"]) for p in found] == [(code, MODEL)], found
    assert found[0]["line"] == line_of(root / MODEL, new.splitlines()[-1])


def test_kv_heads_yes_no_longer_shows_465_sequences(tmp_path):
    root = real_project(tmp_path)
    r = run("fit", "llama-3.1-8b", "h100-sxm-80gb", "--context", "8Ki", "--project", root)
    assert r.exit_code == 0 and "\n8,192 " in r.output
    row = next(l for l in r.output.splitlines() if l.startswith("8,192"))
    assert row.split()[5] == "58"   # the seed's 58 sequences of 8Ki tokens
    edit(root, MODEL, "    kv_heads: 8", "    kv_heads: yes")
    r = run("fit", "llama-3.1-8b", "h100-sxm-80gb", "--context", "8Ki", "--project", root)
    clean_exit(r, (1,))
    assert f"{MODEL}:{line_of(root / MODEL, '    kv_heads: yes')}" in r.output and "465" not in r.output


def test_alias_bomb_fails_fast(tmp_path):
    import time

    root = real_project(tmp_path)
    (root / "registry/models/bomb.yaml").write_text(BILLION_LAUGHS)
    assert len(BILLION_LAUGHS.splitlines()) == 10
    t = time.perf_counter()
    found = problems(root)
    assert time.perf_counter() - t < 10
    assert [p["code"] for p in found] == ["yaml-too-large"]


def test_recursive_alias_and_huge_file(tmp_path):
    root = real_project(tmp_path)
    (root / "registry/models/loop.yaml").write_text("id: loop\nlayer_groups: &g [*g]\n")
    (root / "registry/models/huge.yaml").write_text("id: huge\nnotes: '" + "x" * (3 * 2**20) + "'\n")
    assert sorted((p["file"], p["code"]) for p in problems(root)) == [
        ("registry/models/huge.yaml", "yaml-too-large"), ("registry/models/loop.yaml", "yaml-too-large")]


def test_huge_unit_quantity_is_a_bad_unit(tmp_path):
    root = real_project(tmp_path)
    edit(root, "hardware/h100-sxm-80gb.yaml", "memory_marketed: {value: 80 GB", "memory_marketed: {value: 1e30 GB")
    found = problems(root)
    assert [(p["code"], p["key"]) for p in found] == [("bad-unit", "memory_marketed.value")]


def test_one_bad_hardware_field_is_one_problem(tmp_path):
    """The referencing entries (reports, observations) do not each add 'not in the registry'."""
    for folder in ("registry", "hardware", "reports"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    text = (tmp_path / "hardware/h100-sxm-80gb.yaml").read_text()
    line = next(l for l in text.splitlines() if l.startswith("bandwidth:"))
    edit(tmp_path, "hardware/h100-sxm-80gb.yaml", line, "bandwidth: 3.35 TB/sec")
    found = problems(tmp_path)
    assert [(p["file"], p["code"]) for p in found] == [("hardware/h100-sxm-80gb.yaml", "bad-unit")]


# --- CLI values and the file system ----------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("fit", "llama-3.1-8b", "h100-sxm-80gb", "--context", "99999999999999999999"),
    ("fit", "llama-3.1-8b", "h100-sxm-80gb", "--context", "1e400"),
    ("fit", "llama-3.1-8b", "h100-sxm-80gb", "--kv-pool", "1e30"),
    ("fit", "llama-3.1-8b", "h100-sxm-80gb", "--kv-pool", "inf"),
    ("fit", "llama-3.1-8b", "h100-sxm-80gb", "--tp", "99999999999999999999"),
    ("plan", "--model", "llama-3.1-8b", "--users", "1", "--context", "8K", "--tpot-ms", "inf"),
    ("plan", "--model", "llama-3.1-8b", "--users", "1e20", "--context", "8K", "--tpot-ms", "50"),
    ("plan", "--model", "llama-3.1-8b", "--users", "100000000000000000000", "--context", "8K", "--tpot-ms", "50"),
    ("plan", "--model", "llama-3.1-8b", "--users", "1", "--context", "8K", "--tpot-ms", "nan"),
])
def test_absurd_cli_values_are_usage_errors(tmp_path, args):
    root = real_project(tmp_path)
    r = run(*args, "--project", root)
    clean_exit(r, (2,))


def test_a_nan_tpot_is_named_in_the_usage_error(tmp_path):
    """click's FloatRange lets NaN through (every comparison with NaN is false): the option type refuses it."""
    root = real_project(tmp_path)
    r = run("plan", "--model", "llama-3.1-8b", "--users", "1", "--context", "8K", "--tpot-ms", "nan", "--project", root)
    clean_exit(r, (2,))
    assert "Invalid value for '--tpot-ms': 'nan' is not a finite number; it takes numbers from 0.001 to 1,000,000 (ms)" \
        in r.output


PLAN = ("plan", "--model", "llama-3.1-8b")
FIT = ("fit", "llama-3.1-8b", "h100-sxm-80gb")


@pytest.mark.parametrize("args, says", [
    # click's IntRange said "'1e20' is not a valid integer range": no range, and 1e3 users was refused
    (PLAN + ("--users", "1e20", "--context", "8K", "--tpot-ms", "50"),
     "Invalid value for '--users': '1e20' is out of range; it takes whole numbers from 1 to 1,000,000,000"
     " (concurrent requests)"),
    (PLAN + ("--users", "2.5", "--context", "8K", "--tpot-ms", "50"),
     "Invalid value for '--users': '2.5' is not a whole number; it takes whole numbers from 1 to 1,000,000,000"),
    (PLAN + ("--users", "1", "--context", "8K", "--tpot-ms", "1e400"),
     "Invalid value for '--tpot-ms': '1e400' is not a finite number; it takes numbers from 0.001 to 1,000,000 (ms)"),
    (PLAN + ("--users", "1", "--context", "8K", "--tpot-ms", "50", "--ttft-ms", "nan"),
     "Invalid value for '--ttft-ms': 'nan' is not a finite number; it takes numbers from 0.001 to 10,000,000 (ms)"),
    (PLAN + ("--request-rate", "nan", "--context", "8K", "--output-tokens", "100", "--tpot-ms", "50"),
     "Invalid value for '--request-rate': 'nan' is not a finite number; it takes numbers above 0 to"
     " 1,000,000,000 (requests per second)"),
    (PLAN + ("--users", "1", "--context", "-3", "--tpot-ms", "50"),
     "Invalid value for '--context': cannot read '-3' as a tokens quantity; it takes a whole number of tokens"
     " from 1 to 17,179,869,184 (2^34)"),
    (PLAN + ("--users", "1", "--context", "8K", "--tpot-ms", "50", "--max-num-seqs", "1e20"),
     "Invalid value for '--max-num-seqs': '1e20' is out of range; it takes whole numbers from 1 to 1,000,000,000"),
    (FIT + ("--gpu-memory-utilization", "nan"),
     "Invalid value for '--gpu-memory-utilization': 'nan' is not a finite number; it takes numbers above 0 to 1"),
    # _size was called outside click's parameter handling: its errors said "Invalid value:" with no option
    (FIT + ("--kv-pool", "1e30GB"), "Invalid value for '--kv-pool': '1e30GB' is too large"),
    (FIT + ("--kv-pool", "inf"), "Invalid value for '--kv-pool': 'inf' is not a finite size; it takes a positive"
     " size with its unit, below 2^63 bytes (8 EiB)"),
    (FIT + ("--kv-pool", "0GiB"), "Invalid value for '--kv-pool': the KV pool must be a positive size, got '0GiB'; it"
     " takes a positive size"),
])
def test_absurd_cli_values_name_the_option_and_its_range(tmp_path, args, says):
    root = real_project(tmp_path)
    r = run(*args, "--project", root)
    clean_exit(r, (2,))
    assert says in " ".join(r.output.split()), r.output


def test_scientific_notation_is_a_whole_count(tmp_path):
    """``--users 1e3`` is 1,000 users (IntRange refused it as 'not a valid integer range')."""
    from kvreg.cli_types import Bounded

    assert Bounded(int, 1, 10**9).convert("1e3", None, None) == 1000
    assert Bounded(int, 1, 10**9).convert("100_000", None, None) == 100_000


def test_dot_kvreg_as_a_file_and_db_under_proc(tmp_path):
    root = real_project(tmp_path)
    (root / ".kvreg").write_text("not a folder")
    for cmd in (("build",), ("sql", "SELECT 1"), ("fit", "llama-3.1-8b", "h100-sxm-80gb")):
        r = run(*cmd, "--project", root)
        clean_exit(r, (1,))
        assert "cannot-write-db" in r.output
    r = run("build", "--project", root, "--db", "/proc/kvreg/x.duckdb")
    clean_exit(r, (1,))
    assert "cannot-write-db" in r.output
    # a mistyped --db in a folder that does not exist creates no folder (trial10: /nonexistent/x.duckdb made one)
    missing = tmp_path / "no-such-folder" / "x.duckdb"
    for cmd in (("build",), ("sql", "SELECT 1")):
        r = run(*cmd, "--project", root, "--db", missing)
        clean_exit(r, (1,))
        assert "cannot-write-db" in r.output and "does not exist" in r.output
    assert not missing.parent.exists()


def test_db_that_is_not_duckdb(tmp_path):
    """Every command refuses a --db that is not a DuckDB file, the same located problem, and leaves it as it was."""
    root = real_project(tmp_path)
    bogus = tmp_path / "bogus.duckdb"
    bogus.write_text("hello")
    for cmd in (("sql", "SELECT 1"), ("fit", "llama-3.1-8b", "h100-sxm-80gb"), ("build",)):
        r = run(*cmd, "--project", root, "--db", bogus)
        clean_exit(r, (1,))
        assert "bad-database" in r.output and "not a kvreg DuckDB database" in r.output
    assert bogus.read_text() == "hello"


def test_db_never_replaces_a_file_that_is_not_a_database(tmp_path):
    """trial11: `kvreg sql --db README.md` rebuilt the 'stale' README.md into a 13.6 MB database, `build --db .git/HEAD`
    broke the repository.  An existing file older than the registry (so stale) that is not a DuckDB file is refused by
    every command that may build, byte for byte untouched; a folder is refused too."""
    import os

    root = real_project(tmp_path)
    victim = root / "README.md"
    victim.write_text("# my notes\n")
    os.utime(victim, (0, 0))   # older than every input: is_stale would say rebuild
    before = victim.read_bytes()
    for cmd in (("build",), ("sql", "SELECT 1"), ("fit", "llama-3.1-8b", "h100-sxm-80gb"),
                ("export", "hardware", "--to", str(tmp_path / "h.csv"))):
        r = run(*cmd, "--project", root, "--db", victim)
        clean_exit(r, (1,))
        assert "bad-database" in r.output, (cmd, r.output)
        assert victim.read_bytes() == before
    r = run("build", "--project", root, "--db", tmp_path)   # click's own path check refuses a folder
    clean_exit(r, (2,))
    assert "is a directory" in r.output


def test_killed_builds_leftovers_are_removed(tmp_path):
    import subprocess
    import sys

    root = real_project(tmp_path)
    (root / ".kvreg").mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    for name in (f".kvreg-build-{pid}-abc.duckdb", f".kvreg-build-{pid}-abc.duckdb.wal"):
        (root / ".kvreg" / name).write_bytes(b"partial")
    alive = root / ".kvreg" / f".kvreg-build-{1}-def.duckdb"  # pid 1 is alive: a concurrent build
    alive.write_bytes(b"in progress")
    assert run("build", "--project", root).exit_code == 0
    assert sorted(p.name for p in (root / ".kvreg").iterdir()) == [alive.name, "kvreg.duckdb"]


# --- import-hf with odd config.json values ---------------------------------------------------------

HF = ROOT / "tests/fixtures/hf/llama-3.1-405b.json"


@pytest.mark.parametrize("key,value,code", [
    ("num_key_value_heads", "8", "bad-config-value"),
    ("num_key_value_heads", True, "bad-config-value"),
    ("num_attention_heads", 0, "bad-config-value"),
    ("vocab_size", "x", "bad-config-value"),
    ("hidden_size", float("inf"), "bad-config-value"),
    ("head_dim", 1.5, "bad-config-value"),
    ("num_key_value_heads", [8], "unsupported-config"),
    ("num_hidden_layers", 10**7, "bad-config-value"),   # looped per layer: minutes before the bound
    ("tie_word_embeddings", "false", "bad-config-value"),   # trial11 #6: a truthy string read as tied
    ("torch_dtype", "float8", "bad-config-value"),          # trial11 #6: fell back to bf16 without a word
])
def test_import_hf_odd_types_are_located(tmp_path, key, value, code):
    import json

    cfg = json.loads(HF.read_text())
    cfg[key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg, indent=2))
    r = run("import-hf", path, "--stdout", "--id", "x")
    clean_exit(r, (1,))
    first = r.output.splitlines()[0]
    assert f": {code}:" in first and ":0:0" not in first
    if code == "bad-config-value":
        line = next(n for n, l in enumerate(path.read_text().splitlines(), 1) if f'"{key}"' in l)
        assert first.startswith(f"{path.name}:{line}:1:") or f"/{path.name}:{line}:1:" in first.split()[0]


def test_import_hf_outside_a_project_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("import-hf", HF)
    clean_exit(r, (2,))
    assert "not a kvreg project" in r.output and list(tmp_path.iterdir()) == []


# --- --format json everywhere ----------------------------------------------------------------------

JSON_COMMANDS = {
    "validate": [], "build": [], "sql": ["SELECT 1 AS one"], "export": ["models", "--to", "m.csv"],
    "fit": ["llama-3.1-8b", "h100-sxm-80gb", "--context", "8Ki"], "schema": [], "calibrate": [],
    "plan": ["--model", "llama-3.1-8b", "--users", "64", "--context", "8K", "--tpot-ms", "50"],
}
NOT_YET = {"report": "--format picks the files written (html, pdf)", "ingest-log": "tests/test_user_habits.py",
           "import-hf": "tested below (needs a config)", "diff": "tests/test_diff.py"}


@pytest.mark.parametrize("cmd", sorted(JSON_COMMANDS))
def test_format_json_prints_one_document(tmp_path, monkeypatch, cmd):
    import json

    root = real_project(tmp_path)
    monkeypatch.chdir(root)
    extra = ["--project", root] if cmd != "schema" else ["--project", root]
    r = CliRunner().invoke(main, [cmd, *JSON_COMMANDS[cmd], "--format", "json", *map(str, extra)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    if cmd == "fit":
        assert [row["max_seqs"] for row in doc["rows"]] == [58] and doc["warnings"] == []


def test_every_command_is_covered_by_the_json_check():
    assert set(main.commands) == set(JSON_COMMANDS) | set(NOT_YET)


def test_import_hf_json(tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    r = run("import-hf", HF, "--stdout", "--format", "json", "--id", "x")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["written"] is None and doc["entry"]["id"] == "x" and doc["entry"]["layers"] == 126
    bad = tmp_path / "config.json"
    bad.write_text('{"num_attention_heads": 0}')
    r = run("import-hf", bad, "--stdout", "--format", "json")
    assert r.exit_code == 1 and json.loads(r.stdout)[0]["code"] == "bad-config-value"


def test_report_out_under_proc_is_a_usage_error(tmp_path):
    import shutil as sh

    for folder in ("registry", "hardware", "reports"):
        sh.copytree(ROOT / folder, tmp_path / folder)
    r = run("report", tmp_path / "reports/example.yaml", "--out", "/proc/kvreg-out", "--format", "html")
    clean_exit(r, (2,))
    assert "cannot write the report" in r.output


# --- implausible facts (trial 11 finding 5): each alone used to validate -----------------------------------------

def test_checkpoint_bytes_tenfold_small_is_implausible(tmp_path):
    # Llama 3.1 8B bf16: 8,030,261,248 params; the per-tensor rule gives 16,060,522,496 B (2 B each, no quantization),
    # the index's total_size exactly.  A digit dropped (1.606e9) is 0.10× the rule: outside 0.5×..2×.
    root = real_project(tmp_path)
    edit(root, "registry/models/llama-3.1-8b.yaml", "bytes: {value: 16060522496", "bytes: {value: 1606052249")
    (p,) = problems(root)
    assert (p["file"], p["line"], p["code"], p["key"]) == (
        "registry/models/llama-3.1-8b.yaml", 14, "checkpoint-bytes-implausible", "checkpoints.0.bytes")
    assert "1,606,052,249 bytes (1.6 GB), 0.10× the 16.1 GB its 8,030,261,248 parameters take at bf16" in p["message"]
    assert "GB vs MB" in p["hint"]


@pytest.mark.parametrize("value, flagged", [(32121044993, True), (32121044991, False), (8030261247, True),
                                            (8030261249, False)])
def test_checkpoint_bytes_band_is_half_to_twice_the_rule(tmp_path, value, flagged):
    # the band's edges: 2 × 16,060,522,496 = 32,121,044,992 B and 0.5 × = 8,030,261,248 B (fp32 under a bf16 label
    # is exactly 2×, still accepted; DeepSeek-V4-Pro's FP4 experts under fp8 are 0.54×)
    root = real_project(tmp_path)
    edit(root, "registry/models/llama-3.1-8b.yaml", "bytes: {value: 16060522496", f"bytes: {{value: {value}")
    assert [p["code"] for p in problems(root)] == (["checkpoint-bytes-implausible"] if flagged else [])


@pytest.mark.parametrize("old, new, code, key, says", [
    # trial 11: TB/s written as GB/s — 3.35 GB/s is 1/76 of the slowest shipped device's 256 GB/s
    ("bandwidth: {value: 3.35 TB/s", "bandwidth: {value: 3.35 GB/s", "hardware-implausible", "bandwidth",
     "bandwidth 3.35 GB/s of h100-sxm-80gb is outside 50 GB/s .. 20 TB/s"),
    # trial 11: PFLOP/s for TFLOP/s — 1.979e18 FLOP/s, 132× the fastest shipped figure (gb300 nvfp4, 15,000 TFLOP/s)
    ("fp8: {value: 1979 TFLOP/s", "fp8: {value: 1979 PFLOP/s", "hardware-implausible", "peak_flops.fp8",
     "peak_flops fp8 1.979e+06 TFLOP/s of h100-sxm-80gb is outside 1 .. 100,000 TFLOP/s"),
    # each in band alone, not together: 98,900 TFLOP/s over 3.35 TB/s is 29,522 FLOP per byte (shipped at most 1,875)
    ("bf16: {value: 989 TFLOP/s", "bf16: {value: 98900 TFLOP/s", "hardware-implausible", "peak_flops.bf16",
     "ridge point of 29,522 FLOP per byte, outside 1 .. 5,000"),
    # 19 TB/s over 81,089 MiB (79.19 GiB) sweeps the memory 223 times a second (shipped at most 52.4)
    ("bandwidth: {value: 3.35 TB/s", "bandwidth: {value: 19 TB/s", "hardware-implausible", "bandwidth",
     "reads the memory 223 times a second, outside 0.5 .. 200"),
    # trial 11: $0.0001 and $2,990 per device-hour next to seven quotes of $2.99..$5.49
    ("usd_per_hour: {value: 3.2,", "usd_per_hour: {value: 0.0001,", "price-implausible", "price.rental.5.usd_per_hour",
     "rental quote 5 of h100-sxm-80gb (Hyperstack (H100 SXM, on-demand)) is 0.0001 USD per device-hour, outside 0.01 .. 200"),
    ("usd_per_hour: {value: 3.78,", "usd_per_hour: {value: 2990,", "price-implausible", "price.rental.0.usd_per_hour",
     "rental quote 0 of h100-sxm-80gb (Lambda (1x H100 SXM)) is 2990 USD per device-hour"),
    ("usd: {value: 30000,", "usd: {value: 30,", "price-implausible", "price.purchase.usd",
     "purchase price of h100-sxm-80gb (MSRP) is 30 USD per device, outside 100 .. 1,000,000"),
])
def test_implausible_hardware_figure_is_one_located_problem(tmp_path, old, new, code, key, says):
    root = real_project(tmp_path)
    edit(root, "hardware/h100-sxm-80gb.yaml", old, new)
    (p,) = problems(root)
    assert (p["file"], p["code"], p["key"]) == ("hardware/h100-sxm-80gb.yaml", code, key)
    assert p["line"] == next(n for n, l in enumerate((root / "hardware/h100-sxm-80gb.yaml").read_text().splitlines(), 1)
                             if new in l)
    assert says in p["message"] and "right, widen the band in kvreg/checks/" in p["hint"]


@pytest.mark.parametrize("family, why, near", [
    # trial 11: capital H; h20 then matched no family and its plan efficiency fell from 0.62 (hopper fit) to 0.45
    ("Hopper", "families are lower-case", "did you mean hopper?"),
    ("hoper", "one letter from hopper", "did you mean hopper"),
    ("ampere_gddr", "one letter from ampere-gddr", "did you mean ampere-gddr"),
])
def test_mistyped_architecture_family_is_a_located_problem(tmp_path, family, why, near):
    for folder in ("registry", "hardware"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    edit(tmp_path, "hardware/h20.yaml", "architecture: hopper", f"architecture: {family}")
    (p,) = problems(tmp_path)
    assert (p["file"], p["line"], p["code"], p["key"]) == (
        "hardware/h20.yaml", line_of(tmp_path / "hardware/h20.yaml", "architecture:"), "unknown-architecture",
        "architecture")
    assert f"architecture '{family}' of h20 is not a known family ({why})" in p["message"]
    assert p["hint"].startswith(near)


def test_new_architecture_generation_is_not_a_typo(tmp_path):
    # cdna5 is one edit from cdna4 and cdna3 but differs only in its digit: a new generation, accepted (it borrows no
    # family's fit until measured); so is a family of its own
    for folder in ("registry", "hardware"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    edit(tmp_path, "hardware/mi355x.yaml", "architecture: cdna4", "architecture: cdna5")
    edit(tmp_path, "hardware/h20.yaml", "architecture: hopper", "architecture: rubin")
    assert problems(tmp_path) == []


@pytest.mark.parametrize("out", ["registry/models", "hardware", "reports/sub"])
def test_report_out_inside_the_entry_folders_is_refused(tmp_path, out):
    """trial11: `report --out registry/models` wrote HTML beside the entries.  Refused before anything is rendered;
    the folder holds what it held."""
    root = real_project(tmp_path)
    (root / "reports").mkdir(exist_ok=True)
    (root / "reports" / "r.yaml").write_text("id: r\ntitle: r\nperiod: test\nmodels: [llama-3.1-8b]\n"
                                             "hardware: [h100-sxm-80gb]\nengines: [first-principles]\n")
    target = root / out
    before = sorted(p.name for p in target.iterdir()) if target.exists() else None
    r = run("report", root / "reports" / "r.yaml", "--out", target, "--format", "html")
    clean_exit(r, (2,))
    assert "inside the project's" in r.output and "holds registry entries" in r.output
    assert (sorted(p.name for p in target.iterdir()) if target.exists() else None) == before


# --- runaway queries: the spill folder is capped and removed, Ctrl-C stops the query (issue 15) -------------

def _kvreg(small, query, **env):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), **env}
    return subprocess.Popen([sys.executable, "-m", "kvreg", "sql", query, "--project", str(small)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_runaway_query_stops_at_the_temp_cap_and_leaves_no_spill_folder(small):
    # each step doubles the working table: without the cap it spilled GBs (DuckDB: 90 % of the free disk)
    import tempfile

    q = ("WITH RECURSIVE t(n, pad) AS (SELECT 1, repeat('x', 100) UNION ALL SELECT n + 1, pad FROM t, range(2) "
         "WHERE n < 40) SELECT count(*) FROM t")
    p = _kvreg(small, q, KVREG_MEMORY_LIMIT="256MiB", KVREG_TEMP_LIMIT="256MiB")
    out, err = p.communicate(timeout=600)
    assert p.returncode == 1, err
    assert err.startswith("Error: Out of Memory Error") and "max_temp_directory_size" in err
    assert not (Path(tempfile.gettempdir()) / f"kvreg-duckdb-spill-{p.pid}").exists()


@pytest.mark.parametrize("signum,code,name", [(2, 130, "SIGINT"), (15, 143, "SIGTERM")])
def test_ctrl_c_or_sigterm_stops_a_long_query_with_one_line(small, signum, code, name):
    # SIGINT waited minutes for DuckDB's C call to return; now con.interrupt() ends the query
    import os
    import time

    p = _kvreg(small, "SELECT count(*) FROM range(10000000000000) t(i) WHERE i % 7 = 3", KVREG_MEMORY_LIMIT="1GB")
    time.sleep(5)   # past start-up: the query is running
    assert p.poll() is None
    os.kill(p.pid, signum)
    out, err = p.communicate(timeout=60)
    assert p.returncode == code and out == ""
    assert err == f"kvreg sql: interrupted ({name}); the query was stopped\n"
