"""The command line: `fit` output, `sql` formats, usage errors, documentation and lazy imports."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from tests.conftest import copy_db

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def db(tmp_path_factory, built_db) -> Path:
    """The shipped registry built once into a temporary database (never into the checkout): the session's build."""
    return Path(copy_db(built_db, tmp_path_factory.mktemp("db")))


def run(db: Path, *args: str):
    return CliRunner().invoke(main, [*args, "--project", str(ROOT), "--db", str(db)])


def test_fit_gemma_in_a_40_gib_pool(db):
    r = run(db, "fit", "gemma-4-31b", "m3-ultra-96gb", "--kv-pool", "40GiB",
            "--context", "32Ki", "--context", "128Ki", "--context", "256Ki")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        "gemma-4-31b in a given KV pool · KV bf16 · TP 1",
        "Per sequence: growing part 40 KiB/token · bounded (window) part 800 MiB at 262,144 tokens (the longest"
        " shown) · recurrent state 0 B (of which conv 0 B) · naive 960 KiB/token",
        "KV pool (given): 40.00 GiB (42.95 GB)",
        "context  per seq (first principles)  per seq (naive)  max seqs  naive max seqs  naive ÷ fp",
        "-------  --------------------------  ---------------  --------  --------------  ----------",
        "32,768                    2,080 MiB           30 GiB        19               1       0.05×",
        "131,072                   5,920 MiB          120 GiB         6               0       0.00×",
        "262,144                   10.78 GiB          240 GiB         3               0       0.00×",
        # the hardware is named but the given pool replaces its budget: say so rather than drop it silently
        "Note: the given KV pool replaces m3-ultra-96gb's memory budget; the hardware entry is not used.",
    ]


def test_fit_qwen_on_the_lessons_card_36_vs_48(db):
    r = run(db, "fit", "qwen3.8-27b", "generic-80gb")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "qwen3.8-27b on generic-80gb · engine first-principles · weights bf16 · KV bf16 · TP 1"
    assert lines[2] == ("Memory per device: usable 79.60 GiB × util 1 = 79.60 GiB − reserve 6.00 GiB"
                        " − residents 0.00 GiB − weights 50.29 GiB (checkpoint) = KV pool 23.31 GiB (25.03 GB)")
    assert lines[3] == "Naive pool: marketed 80.00 GB − weights 54.00 GB = 26.00 GB"
    assert lines[6] == "8,192                    658.81 MiB          512 MiB        36              48       1.33×"
    assert lines[7] == "32,768                 2,194.81 MiB        2,048 MiB        10              12       1.20×"
    assert lines[9] == "262,144                   16.14 GiB           16 GiB         1               1       1.00×"


def test_fit_qwen_fp8_complete_figure_is_123(db):
    r = run(db, "fit", "qwen3.8-27b", "generic-80gb", "--weights-dtype", "fp8", "--kv-dtype", "fp8",
            "--context", "8Ki")
    assert r.exit_code == 0, r.output
    assert re.split(r"\s{2,}", r.output.splitlines()[-1])[3] == "123"


def test_fit_unknown_model_suggests_the_nearest(db):
    r = run(db, "fit", "qwen3.8-27", "generic-80gb")
    assert r.exit_code == 2
    assert "Error: unknown model 'qwen3.8-27'; did you mean qwen3.8-27b" in r.output


def test_fit_unknown_hardware_suggests_the_nearest(db):
    r = run(db, "fit", "qwen3.8-27b", "generic-80g")
    assert r.exit_code == 2
    assert "unknown hardware 'generic-80g'; did you mean generic-80gb?" in r.output


@pytest.mark.parametrize("args,message", [
    (("--kv-pool", "80G"), "'80G' is ambiguous"),
    (("--kv-pool", "inf"), "'inf' is not a finite size"),
    # attack trial (issue 15): these said "write -1GiB" / "write 0GiB"
    (("--kv-pool=-1",), "the KV pool must be a positive size, got '-1'"),
    (("--kv-pool", "0"), "the KV pool must be a positive size, got '0'"),
    (("--context", "0"), "context '0' is not a positive whole number of tokens"),
    (("--tp", "3"), "unknown tp size '3'"),
    (("--kv-dtype", "int3"), "unknown KV dtype 'int3'"),
])
def test_fit_bad_options_are_usage_errors(db, args, message):
    r = run(db, "fit", "qwen3.8-27b", "generic-80gb", *args)
    assert r.exit_code == 2
    assert message in r.output


def test_fit_needs_hardware_or_a_pool(db):
    r = run(db, "fit", "qwen3.8-27b")
    assert (r.exit_code, r.output.splitlines()[-1]) == (2, "Error: give a HARDWARE id or --kv-pool SIZE")


QUERY = ("SELECT model_id, max_seqs, naive_max_seqs, pool_bytes FROM capacity WHERE hardware_id = 'generic-80gb'"
         " AND engine_id = 'first-principles' AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp = 1"
         " AND context_tokens = 8192 AND model_id IN ('qwen3.8-27b', 'llama-3.1-8b') ORDER BY model_id")


def test_sql_csv(db):
    r = run(db, "sql", QUERY, "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.output)))
    assert [x["model_id"] for x in rows] == ["llama-3.1-8b", "qwen3.8-27b"]
    assert (rows[1]["max_seqs"], rows[1]["naive_max_seqs"]) == ("36", "48")
    assert r.output.splitlines()[0] == "model_id,max_seqs,naive_max_seqs,pool_bytes"


def test_sql_json(db):
    r = run(db, "sql", QUERY, "--format", "json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    qwen = rows[1]
    assert (qwen["model_id"], qwen["max_seqs"], qwen["naive_max_seqs"]) == ("qwen3.8-27b", 36, 48)
    assert qwen["pool_bytes"] == pytest.approx(79.6 * 2**30 - 6 * 2**30 - 54e9)


def test_sql_table(db):
    r = run(db, "sql", "SELECT 1 AS a, 2.5 AS b, NULL AS c, 'x' AS d")
    assert r.output.splitlines() == ["a  b    c     d", "-  ---  ----  -", "1  2.5  NULL  x", "(1 row)"]


def test_sql_error_exits_1_without_the_usage_banner(db):
    # issue 15: a query DuckDB fails is the query's error (exit 1), not a usage error with click's banner
    r = run(db, "sql", "SELECT * FROM no_such_view")
    assert r.exit_code == 1
    assert "no_such_view" in r.output and "Usage:" not in r.output


def test_sql_empty_query_is_a_usage_error(db):
    r = run(db, "sql", "  ")
    assert r.exit_code == 2
    assert "QUERY is empty" in r.output


def test_every_command_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    missing = [name for name in main.commands if f"`kvreg {name}" not in readme]
    assert not missing, f"commands not documented in README.md: {missing}"


def test_every_command_has_help():
    for name, cmd in main.commands.items():
        r = CliRunner().invoke(main, [name, "--help"])
        assert r.exit_code == 0 and cmd.help, name


HEAVY = ("duckdb", "pandas", "pandera", "weasyprint", "matplotlib", "pydantic", "yaml")


def test_help_imports_no_heavy_library():
    # kvreg --help must stay fast: the commands import their libraries lazily.
    code = ("import sys\nfrom kvreg.cli import main\n"
            "for args in (['--help'], *[[c, '--help'] for c in main.commands]):\n"
            "    try:\n        main(args, standalone_mode=False)\n    except SystemExit:\n        pass\n"
            f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "loaded:"


def test_plan_lists_take_commas_as_repeats(db):
    # `--weights-dtype bf16,fp8` was "unknown weights dtype 'bf16,fp8'" (new-user trial): a comma list is the
    # option repeated, so both forms give the same plan, and an empty item is a usage error naming the option.
    common = ["plan", "--model", "llama-3.1-8b", "--users", "10", "--context", "8Ki", "--tpot-ms", "50",
              "--format", "json"]
    repeated = run(db, *common, "--hardware", "h100-sxm-80gb", "--hardware", "h200",
                   "--weights-dtype", "bf16", "--weights-dtype", "fp8", "--kv-dtype", "bf16", "--kv-dtype", "fp8")
    commas = run(db, *common, "--hardware", "h100-sxm-80gb,h200", "--weights-dtype", "bf16, fp8",
                 "--kv-dtype", "bf16,fp8")
    assert repeated.exit_code == 0 and commas.exit_code == 0, commas.output
    got = json.loads(commas.output)
    assert got == json.loads(repeated.output)
    assert got["weights_dtypes"] == ["bf16", "fp8"] and got["kv_dtypes"] == ["bf16", "fp8"]
    bad = run(db, *common, "--hardware", "h100-sxm-80gb,")
    assert bad.exit_code == 2 and "'--hardware'" in bad.output and "empty item" in bad.output


# --- progress: one rule for every command (F9; docs/json.md "Progress") ---------------------------------------------

def test_progress_goes_to_stderr_only_by_the_one_rule(tmp_path):
    from tests.registry_factory import engine_entry, hardware_entry, model_entry, write_project

    project = write_project(tmp_path / "p", models={"m": model_entry(
        "m", 2, [{"kind": "full", "count": 2, "kv_heads": 2, "head_dim": 64}])},
        hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    db = tmp_path / "k.duckdb"
    args = ["build", "--project", str(project), "--db", str(db), "--format", "json"]
    runner = CliRunner()
    shown = runner.invoke(main, args, env={"KVREG_PROGRESS": "1"})   # a CI log: shown though stderr is no terminal
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == {"path": str(db)}            # stdout stays one JSON document
    assert f"… validating {project.as_posix()}" in shown.stderr.splitlines()
    for env, extra in (({"KVREG_PROGRESS": None}, []),              # CliRunner's stderr is no terminal
                       ({"KVREG_PROGRESS": "0"}, []),
                       ({"KVREG_PROGRESS": "1"}, ["--quiet"]), ({"KVREG_PROGRESS": "1"}, ["-q"])):
        r = runner.invoke(main, args + extra, env=env)
        assert r.exit_code == 0 and r.stderr == "" and json.loads(r.stdout) == {"path": str(db)}, (env, extra)


def test_progress_is_shown_on_a_terminal_unless_turned_off(monkeypatch):
    from kvreg.cli import progress_shown

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    monkeypatch.delenv("KVREG_PROGRESS", raising=False)
    assert progress_shown()
    monkeypatch.setenv("KVREG_PROGRESS", "0")
    assert not progress_shown()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv("KVREG_PROGRESS", "1")
    assert progress_shown()


def test_every_command_with_progress_takes_quiet():
    slow = {"build", "sql", "export", "fit", "plan", "calibrate", "diff", "report"}
    assert {name for name, cmd in main.commands.items() if any(p.name == "quiet" for p in cmd.params)} == slow


def test_fit_json_rows_carry_the_weights_per_rank_under_both_keys(db):
    """capacity's per-device weights are weights_bytes_per_rank (weights_bytes is the whole model elsewhere); the
    fit JSON keeps its first key too (docs/json.md: keys are never renamed): llama-3.1-8b bf16 at TP 2 holds half
    the measured 16,060,522,496-byte checkpoint per rank (first principles: checkpoint ÷ TP)."""
    r = run(db, "fit", "llama-3.1-8b", "h100-sxm-80gb", "--tp", "2", "--context", "8K", "--format", "json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.output)["rows"][0]
    assert row["weights_bytes_per_rank"] == row["weights_bytes"] == 16_060_522_496 / 2
