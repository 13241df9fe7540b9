"""CLI: ingest-log, calibrate, fit --engine (exact output fragments and exit codes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvreg.cli import main

ROOT = Path(__file__).resolve().parents[1]

V1_LOG = """\
INFO 07-09 02:50:01 [api_server.py:1] vLLM API server version 0.10.1
INFO 07-09 02:50:02 [utils.py:1] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 131072, 'tensor_parallel_size': 1}
(EngineCore pid=107) INFO 07-09 02:58:01 [gpu_model_runner.py:1] Model loading took 14.9889 GiB and 4.1 seconds
(EngineCore pid=107) INFO 07-09 02:58:11 [gpu_worker.py:276] Available KV cache memory: 51.63 GiB
(EngineCore pid=107) INFO 07-09 02:58:11 [kv_cache_utils.py:716] GPU KV cache size: 422,944 tokens
(EngineCore pid=107) INFO 07-09 02:58:11 [kv_cache_utils.py:720] Maximum concurrency for 131,072 tokens per request: 3.23x
"""


@pytest.fixture()
def project(tmp_path):
    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    (tmp_path / "registry/models").mkdir(parents=True)
    for m in ("llama-3.1-8b", "qwen3-8b"):
        for ext in (".yaml", ".config.json"):  # the config gives the geometry the entry omits
            shutil.copy(ROOT / f"registry/models/{m}{ext}", tmp_path / f"registry/models/{m}{ext}")
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_ingest_v1_log(project):
    log = project / "startup.log"
    log.write_text(V1_LOG)
    r = run("ingest-log", log, "--project", project, "--hardware", "h100-sxm-80gb",
            "--source", "https://example.org/issue/1")
    assert r.exit_code == 0, r.output
    assert "wrote registry/observations/startup.yaml" in r.output
    e = yaml.safe_load((project / "registry/observations/startup.yaml").read_text())
    assert e["engine"] == "vllm-0.9-0.16" and e["engine_version"] == "0.10.1"
    assert e["model"] == "llama-3.1-8b" and "model" in e["inferred"]          # -Instruct matched to the base
    assert e["settings"] == {"max_model_len": 131072, "tp": 1}
    assert e["logged"]["available_kv_cache_memory_gib"] == 51.63 and e["logged"]["kv_cache_tokens"] == 422944
    assert e["logged"]["model_loading_gib"] == 14.9889
    assert run("validate", "--project", project).exit_code == 0


def test_ingest_says_what_it_cannot_tell(project):
    log = project / "bare.log"
    log.write_text("INFO [gpu_worker.py:232] Available KV cache memory: 6.51 GiB\n"
                   "INFO [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens\n")
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 0, r.output
    assert "left for you to fill in bare.yaml: settings.tp, settings.max_model_len, model, engine, hardware" in r.output
    e = yaml.safe_load((project / "registry/observations/bare.yaml").read_text())
    assert e["unknown"] == ["settings.tp", "settings.max_model_len", "model", "engine", "hardware"]


def test_ingest_model_not_in_registry_keeps_its_id_and_hints(project):
    log = project / "qwen.log"
    log.write_text("vllm serve Qwen/Qwen3-235B-A22B-FP8 --tensor-parallel-size 4\n"
                   "INFO [gpu_worker.py:232] Available KV cache memory: 8.11 GiB\n"
                   "INFO [kv_cache_utils.py:716] GPU KV cache size: 178,880 tokens\n")
    r = run("ingest-log", log, "--project", project, "--engine", "vllm-0.9-0.16")
    assert r.exit_code == 0, r.output
    assert "model 'qwen3-235b-a22b-fp8' is not in the registry" in r.output
    # import-hf reads a config.json: the hint names the command with the hub id and the registry id it would get
    assert "kvreg import-hf CONFIG.json --hf-id Qwen/Qwen3-235B-A22B-FP8 --id qwen3-235b-a22b-fp8" in r.output
    e = yaml.safe_load((project / "registry/observations/qwen.yaml").read_text())
    assert e["model"] == "qwen3-235b-a22b-fp8" and e["settings"]["tp"] == 4


def test_ingest_v0_log(project):
    log = project / "v0.log"
    log.write_text("Loading model weights took 14.9888 GB\n"
                   "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
                   "peak_torch_memory=17.98GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n"
                   "# GPU blocks: 1478, # CPU blocks: 2048\n"
                   "Maximum concurrency for 29000 tokens per request: 0.82x\n"
                   "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored "
                   "in KV cache (23648).\n")
    r = run("ingest-log", log, "--project", project, "--model", "llama-3.1-8b", "--hardware", "rtx-3090")
    assert r.exit_code == 0, r.output
    e = yaml.safe_load((project / "registry/observations/v0.yaml").read_text())
    assert e["engine"] == "vllm-v0"
    assert e["logged"] == {"model_loading_gib": 14.9888, "available_kv_cache_memory_gib": 2.89, "num_gpu_blocks": 1478,
                           "max_concurrency": 0.82, "max_concurrency_tokens": 29000, "total_gpu_memory_gib": 23.58,
                           "started": False}
    assert e["settings"]["gpu_memory_utilization"] == 0.9


@pytest.mark.parametrize("text, message", [
    ("hello, this is not a log\n", "no vLLM startup figure found"),
    ("INFO [gpu_worker.py:232] Available KV cache memory: 51.63 GiB\nINFO [kv_cache_utils.py:716] GPU KV cache size: 41",
     "the last line is cut off mid-figure"),
])
def test_ingest_bad_logs_exit_1_with_a_clear_error(project, text, message):
    log = project / "bad.log"
    log.write_text(text)
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 1
    assert message in r.output
    assert not (project / "registry/observations/bad.yaml").exists()


def test_ingest_unknown_engine_release_lists_the_known_ranges(project):
    log = project / "x.log"
    log.write_text(V1_LOG)
    r = run("ingest-log", log, "--project", project, "--engine", "vllm-9.9")
    assert r.exit_code == 2
    assert "unknown engine release 'vllm-9.9'; known ranges: sglang-0.5, trtllm-pytorch, vllm-0.17-0.19" in r.output


def test_calibration_doc_is_current(root_db):
    r = run("calibrate", "--format", "markdown", "--project", ROOT, "--db", root_db)
    assert r.exit_code == 0, r.output
    assert r.output == (ROOT / "docs/calibration.md").read_text(), "regenerate: kvreg calibrate --format markdown"


def test_fit_names_the_quirk_for_the_b300_case(root_db):
    r = run("fit", "gemma-4-31b", "b300", "--weights-dtype", "fp8", "--kv-dtype", "fp8", "--engine", "vllm-0.8",
            "--context", "262144", "--project", ROOT, "--db", root_db)
    assert r.exit_code == 0, r.output
    assert "Engine vllm-0.8:" in r.output
    assert "sliding-window layers are stored as full attention before the hybrid allocator" in r.output
    line = next(ln for ln in r.output.splitlines() if ln.startswith("262,144") and ln.count("×") == 2
                and "MiB" not in ln)  # the engine table's row: both of its ratios print "×" (formats.ratio)
    # what 0.8 logs (first principles ≈ 10 million); the weights are the fp8 checkpoint per rank, its rotary
    # cos/sin caches (268,435,456 B of buffers, 035_model_weights_per_rank.sql) included
    assert "487,856" in line


def test_fit_unknown_engine_is_a_usage_error(root_db):
    r = run("fit", "qwen3-8b", "h100-sxm-80gb", "--engine", "vllm-9", "--project", ROOT, "--db", root_db)
    assert r.exit_code == 2 and "unknown engine 'vllm-9'" in r.output and "vllm-0.22-0.26" in r.output


def test_observation_with_unknown_engine_release_is_a_problem(project):
    (project / "registry/observations").mkdir(parents=True)
    (project / "registry/observations/o.yaml").write_text(
        "id: o\nengine: vllm-9\nmodel: qwen3-8b\nhardware: h900\nlogged: {kv_cache_tokens: 1000}\n"
        "sources: [{title: test}]\n")
    r = run("validate", "--project", project)
    assert r.exit_code == 1
    assert "registry/observations/o.yaml:2" in r.output and "engine release 'vllm-9' is not in the registry" in r.output
    assert "known ranges: sglang-0.5, trtllm-pytorch, vllm-0.17-0.19" in r.output
    assert "hardware 'h900' is not in the registry" in r.output


def test_fit_0_22_names_the_prefill_reserve(root_db):
    r = run("fit", "gemma-4-31b", "b300", "--weights-dtype", "fp8", "--kv-dtype", "fp8", "--engine", "vllm-0.22-0.26",
            "--context", "262144", "--project", ROOT, "--db", root_db)
    assert r.exit_code == 0, r.output
    assert "6 groups × 10 layers · 0 padding layers" in r.output
    # one multiplication sign for both ratio columns (the trial's "15.74x" beside "2.51×", F3)
    row = [ln for ln in r.output.splitlines() if ln.startswith("262,144 ")][-1]   # the engine table, after the fit
    assert row.split()[-2:] == ["15.74×", "2.51×"]
    # the settings line once, in the fit's header (the engine section used to print it again)
    assert [ln for ln in r.output.splitlines() if ln.startswith("Engine vllm-0.22-0.26 settings:")] == [
        "Engine vllm-0.22-0.26 settings: gpu_memory_utilization 0.92 (release default) · max_num_seqs 1,024 (release"
        " default) · max_num_batched_tokens 8,192 (release default) · enforce_eager false (default) ·"
        " num_speculative_tokens: the served model's own · block_size 16 (release default)"]
    assert ('the start-up check and the logged maximum concurrency charge each sliding-window group'
            ' cdiv(min(W − 1 + T, L), bs) + 1 blocks per request') in " ".join(r.output.split())
    assert "SlidingWindowManager.remove_skipped_blocks" in r.output   # and why it runs more than it logs
    assert "grouped_min_block_report" not in r.output and "num_blocks ÷ groups" not in r.output


def test_calibrate_table(root_db):
    r = run("calibrate", "--project", ROOT, "--db", root_db)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Per engine release (errors predicted − logged")
    # the terminal table's compact row (every column: --format markdown/json): logged 366,400 tokens, (a) the block
    # arithmetic from the logged memory 366,416 = +0.004 %, (b) end to end 364,976 = −0.39 %, available −0.20 GiB
    row = next(ln for ln in r.output.splitlines() if ln.startswith("vllm-log-17 "))
    assert row.split()[1:] == ["vllm-0.9-0.16", "1", "366,400", "+0.00", "364,976", "-0.39", "-0.20"]


def test_engine_rule_citing_an_unknown_source_is_a_problem(tmp_path):
    (tmp_path / "registry/engines").mkdir(parents=True)
    e = yaml.safe_load((ROOT / "registry/engines/vllm-0.8.yaml").read_text())
    e["accounting"]["hybrid_allocator"]["source"] = "nosuch"
    (tmp_path / "registry/engines/vllm-0.8.yaml").write_text(yaml.safe_dump(e, sort_keys=False, allow_unicode=True))
    r = run("validate", "--project", tmp_path)
    assert r.exit_code == 1
    assert "accounting.hybrid_allocator: source 'nosuch' is not one of this entry's sources" in r.output
