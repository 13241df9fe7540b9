"""What a new user tripped on (a fresh-eyes trial of the README, session 4): each case ends in a clear answer.

Every case here was found by running kvreg as a first-time user would: a number that looked right but
was not checked (a fp8 fit on a T4, TP 16 on an 8-GPU NVLink domain), an input that silently became a
different question (``--kv-pool 40`` read as 40 bytes, ``hardware="h100-sxm-80gb"`` read as its letters),
or a typo that was written into the registry and broke every later command (``ingest-log --hardware h100-sxm``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import kvreg
from kvreg.cli import main
from tests.test_engine_cli import V1_LOG  # the same vLLM 0.10.1 startup excerpt

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """Every shipped device and engine, four models (Llama 3.1 8B and 405B, Qwen2.5 7B, Phi-4): fast to build."""
    root = tmp_path_factory.mktemp("habits")
    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, root / sub)
    (root / "registry/models").mkdir(parents=True)
    for m in ("llama-3.1-8b", "llama-3.1-405b", "qwen2.5-7b", "phi-4"):
        for ext in (".yaml", ".config.json"):  # the config gives the geometry the entry omits
            shutil.copy(ROOT / f"registry/models/{m}{ext}", root / f"registry/models/{m}{ext}")
    return root


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


# --- fit -------------------------------------------------------------------------------------------

def test_fit_warns_about_a_precision_the_device_does_not_run(project):
    # The T4 (Turing) lists no fp8: the figures are still the arithmetic, but the user is told.
    r = run("fit", "llama-3.1-8b", "t4", "--weights-dtype", "fp8", "--kv-dtype", "fp8", "--context", "8Ki",
            "--project", project)
    assert r.exit_code == 0, r.output
    assert "Warning: t4 does not list fp8 as a native precision" in r.output
    ok = run("fit", "llama-3.1-8b", "h100-sxm-80gb", "--weights-dtype", "fp8", "--context", "8Ki", "--project", project)
    assert "native precision" not in ok.output


def test_fit_warns_when_tp_is_wider_than_the_link_domain(project):
    # H100 SXM: NVSwitch links 8 GPUs (hardware/h100-sxm-80gb.yaml interconnect.domain_size); plan refuses TP 16.
    r = run("fit", "llama-3.1-8b", "h100-sxm-80gb", "--tp", "16", "--context", "8Ki", "--project", project)
    assert r.exit_code == 0, r.output
    assert "TP 16 is wider than h100-sxm-80gb's interconnect domain (8 devices)" in r.output


def test_unknown_tp_lists_the_sizes_in_numeric_order(project):
    r = run("fit", "llama-3.1-8b", "h100-sxm-80gb", "--tp", "3", "--project", project)
    assert r.exit_code == 2
    assert "unknown tp size '3' (known: 1, 2, 4, 8, 16)" in r.output


def test_a_bare_kv_pool_number_needs_a_unit(project):
    r = run("fit", "llama-3.1-8b", "--kv-pool", "40", "--project", project)
    assert r.exit_code == 2
    assert "'40' has no unit: write 40GiB (2^30 bytes) or 40GB (10^9 bytes)" in r.output


def test_weights_that_do_not_fit_show_the_shortfall_not_a_negative_pool(project):
    # Llama 3.1 405B in bf16 on one H100: 755.96 GiB of weights in a 73.19 GiB budget (79.19 − 6 reserve)
    # → short by 755.96 − 73.19 = 682.77 GiB; the naive pool 80 GB − 811.71 GB is short by 731.71 GB.
    r = run("fit", "llama-3.1-405b", "h100-sxm-80gb", "--context", "8Ki", "--project", project)
    assert r.exit_code == 0, r.output
    assert "= KV pool none (short by 682.77 GiB, 733.12 GB)" in r.output
    assert "= none (short by 731.71 GB)" in r.output
    assert "-682" not in r.output and "-731" not in r.output


# --- Python API ------------------------------------------------------------------------------------

def test_api_refuses_a_folder_that_is_not_a_project(tmp_path):
    with pytest.raises(kvreg.UsageError, match="not a directory"):
        kvreg.validate(tmp_path / "missing")
    with pytest.raises(kvreg.UsageError, match="is not a kvreg project"):
        kvreg.validate(tmp_path)  # exists, but holds no registry folder: not an empty registry
    with pytest.raises(kvreg.UsageError, match="is not a kvreg project"):
        kvreg.fit("llama-3.1-8b", "h100-sxm-80gb", project=tmp_path)


def test_api_refuses_a_non_positive_kv_pool_and_unknown_ids(project):
    with pytest.raises(kvreg.UsageError, match="the KV pool must be a positive size"):
        kvreg.fit("llama-3.1-8b", None, kv_pool=-5, project=project)
    with pytest.raises(kvreg.UsageError, match="unknown model 'llama-3.1-8'; did you mean llama-3.1-8b"):
        kvreg.capacity(project=project, model_id="llama-3.1-8")


def test_api_plan_reads_one_id_as_a_one_element_list(project):
    one = kvreg.plan("llama-3.1-8b", users=64, context="8K", tpot_ms=50, hardware="h100-sxm-80gb",
                     weights_dtypes="fp8", project=project)
    listed = kvreg.plan("llama-3.1-8b", users=64, context="8K", tpot_ms=50, hardware=["h100-sxm-80gb"],
                        weights_dtypes=["fp8"], project=project)
    assert one.feasible and one.feasible == listed.feasible
    assert {p["hardware_id"] for p in one.ranked} == {"h100-sxm-80gb"}


# --- plan ------------------------------------------------------------------------------------------

def test_plan_beyond_the_native_context_is_warned(project):
    r = run("plan", "--model", "llama-3.1-8b", "--users", "4", "--context", "256Ki", "--tpot-ms", "50",
            "--hardware", "h100-sxm-80gb", "--format", "json", "--project", project)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["warnings"] == [
        "Warning: 262,144 tokens is beyond llama-3.1-8b's native context (131,072 tokens); the model was not trained for it."]
    inside = run("plan", "--model", "llama-3.1-8b", "--users", "4", "--context", "8Ki", "--tpot-ms", "50",
                 "--hardware", "h100-sxm-80gb", "--format", "json", "--project", project)
    assert json.loads(inside.stdout)["warnings"] == []


@pytest.mark.parametrize("model, tp, reason", [
    # Qwen2.5-7B: 28 query heads; 28 % 8 = 4 → vLLM's divide(28, 8) asserts at load
    ("qwen2.5-7b", 8, "tensor parallelism cannot split its 28 attention heads evenly at this TP"),
    # Phi-4: 40 query heads divide by 4, but its 10 KV heads ≥ 4 must divide too: 10 % 4 = 2
    ("phi-4", 4, "tensor parallelism cannot split its 10 KV heads evenly at this TP (the engine divides or"
                 " replicates them whole)"),
])
def test_plan_refuses_a_tp_that_does_not_split_the_heads(project, model, tp, reason):
    r = kvreg.plan(model, users=8, context="8Ki", tpot_ms=50, hardware="h100-sxm-80gb", project=project)
    rows = {(p["tp"], p["weights_dtype"], p["kv_dtype"]): p for p in r.ranked}
    assert all(p["reason"] == reason for (t, _, _), p in rows.items() if t == tp)
    # the TP sizes that do divide are judged on memory and speed as before (Qwen2.5-7B at TP 4: 28 = 4 × 7;
    # Phi-4 at TP 2: 40 = 2 × 20, 10 = 2 × 5)
    ok = 4 if model == "qwen2.5-7b" else 2
    assert all(not (p["reason"] or "").startswith("tensor parallelism") for (t, _, _), p in rows.items() if t == ok)


def test_tp_sharding_view_by_hand(project):
    con = kvreg.connect(project)
    got = con.execute("SELECT model_id, tp, shards, bad_kv_heads FROM tp_sharding WHERE tp IN (1, 2, 4, 8, 16) "
                      "ORDER BY model_id, tp").fetchall()
    con.close()
    shards = {(m, t): (s, b) for m, t, s, b in got}
    # Llama 3.1 8B: 32 heads, 8 KV heads: every power of two up to 32 divides; at 16, 16 ÷ 8 = 2 replicas
    assert all(shards[("llama-3.1-8b", t)] == (True, None) for t in (1, 2, 4, 8, 16))
    assert shards[("qwen2.5-7b", 4)] == (True, None) and shards[("qwen2.5-7b", 8)] == (False, None)
    assert shards[("phi-4", 2)] == (True, None) and shards[("phi-4", 4)] == (False, 10)


# --- ingest-log ------------------------------------------------------------------------------------

@pytest.fixture()
def ingest_project(tmp_path):
    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    (tmp_path / "registry/models").mkdir(parents=True)
    for ext in (".yaml", ".config.json"):
        shutil.copy(ROOT / f"registry/models/llama-3.1-8b{ext}", tmp_path / f"registry/models/llama-3.1-8b{ext}")
    (tmp_path / "x.log").write_text(V1_LOG)
    return tmp_path


@pytest.mark.parametrize("flag, typo, meant", [("--hardware", "h100-sxm", "h100-sxm-80gb"),
                                                ("--model", "llama-3.1-8", "llama-3.1-8b")])
def test_ingest_refuses_a_mistyped_id_before_writing(ingest_project, flag, typo, meant):
    r = run("ingest-log", ingest_project / "x.log", flag, typo, "--project", ingest_project)
    assert r.exit_code == 2
    assert f"{flag} {typo!r} is not in the registry; did you mean {meant}" in r.output
    assert not (ingest_project / "registry/observations/x.yaml").exists()
    assert run("validate", "--project", ingest_project).exit_code == 0  # nothing half-written breaks the registry


def test_ingest_names_the_release_range_of_a_version(ingest_project):
    r = run("ingest-log", ingest_project / "x.log", "--engine", "vllm-0.19", "--project", ingest_project)
    assert r.exit_code == 2
    assert "(vLLM 0.19 is in vllm-0.17-0.19)" in r.output


def test_ingest_json(ingest_project):
    r = run("ingest-log", ingest_project / "x.log", "--hardware", "h100-sxm-80gb", "--format", "json",
            "--project", ingest_project)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["path"] == "registry/observations/x.yaml" and isinstance(doc["notes"], list)
    assert (ingest_project / doc["path"]).exists()


# --- environment and SQL ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, says", [("abc", "is not a memory size"), ("0", "has no unit"),
                                         ("-1GB", "is not a memory size"), ("1MB", "is below the 256 MiB")])
def test_a_bad_memory_limit_names_the_variable_not_the_database(project, value, says):
    r = run("sql", "SELECT 1 AS one", "--project", project, env={"KVREG_MEMORY_LIMIT": value})
    assert r.exit_code == 1, r.output
    assert "bad-memory-limit" in r.output and says in r.output and "not a kvreg DuckDB database" not in r.output


def test_sql_runs_one_statement_at_a_time(project):
    r = run("sql", "SELECT 1; SELECT 2", "--project", project)
    assert r.exit_code == 2
    assert "QUERY holds 2 statements" in r.output


def test_a_mistyped_id_in_a_report_gets_did_you_mean(tmp_path):
    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    (tmp_path / "registry/models").mkdir(parents=True)
    for ext in (".yaml", ".config.json"):
        shutil.copy(ROOT / f"registry/models/llama-3.1-8b{ext}", tmp_path / f"registry/models/llama-3.1-8b{ext}")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports/r.yaml").write_text(
        "id: r\ntitle: t\nperiod: p\nmodels: [llama-3.1-8]\nhardware: [h100-sxm]\ncontexts: [8Ki]\n"
        "workload: {users: 4, context: 8Ki, tpot_ms: 50}\n")
    r = run("validate", "--format", "json", "--project", tmp_path)
    assert r.exit_code == 1
    hints = {p["key"]: p["hint"] for p in json.loads(r.stdout) if p["code"] == "report-reference"}
    assert hints["models.0"].startswith("did you mean llama-3.1-8b")
    assert hints["hardware.0"].startswith("did you mean h100-sxm-80gb")
    assert "list them: kvreg sql" in hints["hardware.0"] and "{near:" not in hints["hardware.0"]


def test_speed_calibration_json_counts_each_measurement_once(root_db):
    r = run("calibrate", "--speed", "--format", "json", "--project", ROOT, "--db", root_db)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # one row per measurement in `measurements`; the per-hardware counts sum to it (they were 2× it:
    # every measurement is predicted twice, in-sample and with its source left out)
    assert sum(h["n"] for h in doc["by_hardware"]) == len(doc["measurements"])
