"""Fuzz: hostile command-line arguments end in exit 0, 1 or 2 — never a traceback (issue 15, item 4).

Commands run in-process (click's CliRunner) against a small copy of shipped entries whose
database is built once.  Exit 3 (kvreg's internal-error guard) or any exception fails.  Cases: 150.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kvreg.cli import main
from tests.fuzz_tools import TRICKY_STRINGS, fuzz_settings

ROOT = Path(__file__).resolve().parents[1]
NUMBERS = ["0", "1", "-1", "8K", "8Ki", "32Ki", "1e30", "1e400", "inf", "-inf", "nan", "99999999999999999999",
           "1.5", "0.001", "2**10", "80 GB", "40GiB", "1e18", "17179869184", "17179869185", "", " "]
IDS = ["llama-3.1-8b", "h100-sxm-80gb", "h100", "H100-SXM-80GB", "llama", "first-principles", "vllm-0.17-0.19",
       "bf16", "fp8", "int4", "nvfp4", "", "../x", "a" * 200, "'; DROP TABLE models; --"]
VALUE = st.one_of(st.sampled_from(NUMBERS + IDS + TRICKY_STRINGS), st.text(max_size=8))
OPTIONS = {
    "fit": ["--context", "--kv-dtype", "--weights-dtype", "--tp", "--engine", "--kv-pool"],
    "plan": ["--model", "--users", "--context", "--tpot-ms", "--ttft-ms", "--weights-dtype", "--kv-dtype",
             "--hardware", "--engine", "--top", "--input-tokens", "--output-tokens", "--shared-prefix-tokens", "--n",
             "--request-rate"],
    "sql": ["--format", "--table"],
    "export": ["--to", "--where", "--format"],
    "validate": ["--format"],
    "calibrate": ["--format"],
}
QUERIES = ["SELECT * FROM models", "SELECT 1/0", "SELECT 9223372036854775807 + 1", "SELECT * FROM capacity LIMIT 3",
           "COPY models TO 'x.csv'", "PRAGMA version", "SELECT repeat('x', 100)", "VALUES (1)", ";", "SELECT",
           "SELECT * FROM capacity_at([8192])", "DESCRIBE capacity", "SUMMARIZE models", "SHOW TABLES"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzzcli")
    for rel in ("registry/models/llama-3.1-8b.yaml", "registry/models/llama-3.1-8b.config.json",
                "hardware/h100-sxm-80gb.yaml", "hardware/h100-pcie-80gb.yaml", "registry/engines/first-principles.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    assert CliRunner().invoke(main, ["build", "--project", str(root)]).exit_code == 0
    return root


PLAUSIBLE = {
    "--context": ["8K", "8Ki", "32Ki", "128K", "1", "20000", "1M", "10M"],
    "--kv-dtype": ["bf16", "fp8", "fp16", "int4"], "--weights-dtype": ["bf16", "fp8", "int4", "nvfp4"],
    "--tp": ["1", "2", "4", "8"], "--engine": ["first-principles", "vllm-0.17-0.19"],
    "--kv-pool": ["40GiB", "1 GB", "1", "1e18"], "--model": ["llama-3.1-8b"], "--users": ["1", "64", "100000"],
    "--tpot-ms": ["50", "10", "0.01"], "--ttft-ms": ["500", "1"], "--hardware": ["h100-sxm-80gb", "h100-pcie-80gb"],
    "--top": ["1", "3"], "--format": ["table", "csv", "json", "text", "markdown", "github"],
    "--table": ["t=missing.csv", "bad", "t=registry/models/llama-3.1-8b.yaml"],
    "--where": ["tp = 1", "1 = 1", "no_such = 1", "1; SELECT 2", "context_tokens > 1e30"],
}


def value_for(draw, opt: str) -> str:
    """Mostly a value the option could take (so the command runs), sometimes a hostile one."""
    if opt in PLAUSIBLE and draw(st.integers(0, 9)) < 7:
        return draw(st.sampled_from(PLAUSIBLE[opt]))
    return draw(VALUE)


@st.composite
def command_line(draw):
    cmd = draw(st.sampled_from(["fit", "fit", "fit", "plan", "plan", "sql", "export", "validate", "calibrate"]))
    args = [cmd]
    if cmd == "fit":
        real = draw(st.integers(0, 9)) < 7
        args += ["llama-3.1-8b" if real else draw(st.sampled_from(IDS))]
        if draw(st.integers(0, 9)) < 8:
            args += ["h100-sxm-80gb" if real else draw(st.sampled_from(IDS))]
    elif cmd == "sql":
        args += [draw(st.one_of(st.sampled_from(QUERIES), st.text(max_size=20)))]
    elif cmd == "export":
        args += [draw(st.sampled_from(["models", "capacity", "no_such", "SELECT 1 AS a"] + QUERIES[:3]))]
    elif cmd == "plan":  # mostly complete, so the plan itself runs, not only click's checks
        args += ["--model", "llama-3.1-8b", "--users", draw(st.sampled_from(["1", "64", "1000000000", "0"])),
                 "--context", draw(st.sampled_from(["8K", "1", "17179869184"])),
                 "--tpot-ms", draw(st.sampled_from(["50", "0.001", "1000000", "1e-9"]))]
    for _ in range(draw(st.integers(0, 3))):
        opt = draw(st.sampled_from(OPTIONS[cmd]))
        if opt == "--to":
            args += [opt, draw(st.sampled_from(["out.parquet", "out.csv", "out.xlsx", "/proc/x.csv", "no/dir/x.csv",
                                                "registry/models/llama-3.1-8b.yaml"]))]
        else:
            args += [opt, value_for(draw, opt)]
    if cmd == "export" and "--to" not in args:
        args += ["--to", "out.parquet"]
    return args


@fuzz_settings(150)
@given(command_line())
def test_hostile_arguments_exit_cleanly(project, monkeypatch, args):
    monkeypatch.chdir(project)
    r = CliRunner().invoke(main, args + ["--project", str(project)])
    assert r.exit_code in (0, 1, 2), (args, r.exit_code, r.output[-2000:])
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception))
