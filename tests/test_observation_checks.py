"""Cross-entry checks of observations the new-user trial found missing (kvreg/checks/205_, 206_): a model the
log contradicts, and one startup written twice (trial7 findings A and C)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvreg.cli import main

ROOT = Path(__file__).resolve().parents[1]
OBS = "registry/observations/v0.19-h100-llama-3.3-70b-fp8-tp2.yaml"
M = "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic"
# the log's config line in full (the excerpt keeps only its head): TP, PP, DP, dtype, quantization, eager
CONFIG = ("(EngineCore pid=245) INFO 04-22 00:16:25 [v1/engine/core.py:105] Initializing a V1 LLM engine (v0.19.0) "
          f"with config: model='{M}', speculative_config=None, tokenizer='{M}', dtype=torch.bfloat16, "
          "max_seq_len=8192, tensor_parallel_size=2, pipeline_parallel_size=1, data_parallel_size=1, "
          "quantization=compressed-tensors, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda")


@pytest.fixture()
def project(tmp_path):
    """Engines, hardware, the two Llama models and the shipped 70B FP8 TP 2 H100 observation."""
    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    (tmp_path / "registry/models").mkdir(parents=True)
    (tmp_path / "registry/observations").mkdir(parents=True)
    for m in ("llama-3.3-70b", "llama-3.1-8b"):
        for ext in (".yaml", ".config.json"):
            shutil.copy(ROOT / f"registry/models/{m}{ext}", tmp_path / f"registry/models/{m}{ext}")
    shutil.copy(ROOT / OBS, tmp_path / OBS)
    return tmp_path


def _validate(project: Path) -> list[dict]:
    r = CliRunner().invoke(main, ["validate", "--project", str(project), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout) if r.exit_code else []


def _line_of(path: Path, prefix: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.lstrip().startswith(prefix))


def test_the_fixture_is_clean(project):
    assert _validate(project) == []


def test_a_checkpoint_of_another_model_names_both_models_and_where_the_checkpoint_is_listed(project):
    # trial7 A: model llama-3.1-8b next to model_hf_id RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic, a checkpoint
    # registry/models/llama-3.3-70b.yaml lists (as ...-FP8-dynamic: HF ids compare case-insensitively)
    obs = project / OBS
    obs.write_text(obs.read_text().replace("model: llama-3.3-70b", "model: llama-3.1-8b"))
    (p,) = _validate(project)
    assert (p["code"], p["file"], p["key"]) == ("observation-model-mismatch", OBS, "model")
    assert p["line"] == _line_of(obs, "model: ")
    ck_line = _line_of(project / "registry/models/llama-3.3-70b.yaml", "hf_id: RedHatAI/Llama-3.3-70B-Instruct-FP8")
    assert ck_line > 4  # a listed checkpoint, not the entry's own hf_id (line 4)
    assert "'llama-3.1-8b'" in p["message"]
    assert f"llama-3.3-70b (registry/models/llama-3.3-70b.yaml:{ck_line})" in p["message"]
    assert "set model: llama-3.3-70b" in p["hint"]


def test_the_models_own_hf_id_counts_and_the_right_model_does_not(project):
    obs = project / OBS
    text = obs.read_text().replace("RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", "meta-llama/Llama-3.1-8B", 1)
    obs.write_text(text)
    (p,) = _validate(project)
    assert p["code"] == "observation-model-mismatch"
    assert "llama-3.1-8b (registry/models/llama-3.1-8b.yaml:4)" in p["message"]
    obs.write_text(text.replace("model: llama-3.3-70b", "model: llama-3.1-8b"))
    assert _validate(project) == []
    # an hf_id no entry names is not a mismatch (the model may wait to be imported)
    obs.write_text(text.replace("meta-llama/Llama-3.1-8B", "someone/unknown-model", 1))
    assert _validate(project) == []


def test_the_same_startup_under_a_second_id_is_a_duplicate_at_the_later_one(project):
    # trial7 C: the log ingested again without --id / --hardware: every logged figure identical
    e = yaml.safe_load((project / OBS).read_text())
    e["id"] = "zz-copy"
    del e["hardware"]
    (project / "registry/observations/zz-copy.yaml").write_text(yaml.safe_dump(e, sort_keys=False))
    (p,) = _validate(project)
    assert (p["code"], p["file"], p["key"]) == ("duplicate-observation", "registry/observations/zz-copy.yaml",
                                                "logged")
    assert f"{OBS}:2 (v0.19-h100-llama-3.3-70b-fp8-tp2)" in p["message"]
    assert "available 37.28 GiB, 15269 blocks" in p["message"] and "244304 tokens" in p["message"]
    assert p["hint"].startswith("remove one of the two")


@pytest.mark.parametrize("change", [("settings", "max_num_seqs", 256), ("logged", "model_loading_gib", 33.9),
                                    ("settings", "tp", 4)])
def test_another_setting_or_figure_is_another_startup(project, change):
    e = yaml.safe_load((project / OBS).read_text())
    e["id"] = "zz-other"
    e[change[0]][change[1]] = change[2]
    if change[2] == 4:  # TP 4 splits the same pool differently: keep the entry plausible
        e["logged"]["num_gpu_blocks"] = 30538
    (project / "registry/observations/zz-other.yaml").write_text(yaml.safe_dump(e, sort_keys=False))
    assert [p["code"] for p in _validate(project) if p["code"] == "duplicate-observation"] == []


@pytest.mark.parametrize("tp, problem", [
    (3, "tp 3 does not split llama-3.3-70b's heads (64 query heads)"),
    (16, None),          # 64 query heads ÷ 16, and 8 KV heads replicated twice: a start vLLM makes
    (128, "tp 128 does not split llama-3.3-70b's heads (64 query heads)"),
])
def test_an_observation_at_a_tp_that_does_not_split_the_heads_is_located(project, tp, problem):
    # trial11 #4: tensor_parallel_size=3 for a 16-head model was stored and validated, while `fit --tp 3` refuses it
    path = project / OBS
    e = yaml.safe_load(path.read_text())
    e["settings"]["tp"] = tp
    path.write_text(yaml.safe_dump(e, sort_keys=False))
    found = [p for p in _validate(project) if p["code"] == "observation-tp-split"]
    if problem is None:
        assert found == []
    else:
        (p,) = found
        assert p["file"] == OBS and p["key"] == "settings.tp" and problem in p["message"]
        assert p["line"] == _line_of(path, f"tp: {tp}")


def test_ingest_log_refuses_a_model_the_log_contradicts(project):
    # the lines kvreg read from the real log (the shipped excerpt, numbers stripped), the config line in full
    e = yaml.safe_load((project / OBS).read_text())
    lines = [CONFIG if "Initializing a V1 LLM engine" in ln else ln.partition(": ")[2]
             for ln in e["excerpt"].splitlines()]
    log = project / "l70.log"
    log.write_text("\n".join(lines) + "\n")
    args = ["ingest-log", str(log), "--project", str(project), "--hardware", "h100-sxm-80gb", "--id", "t7"]
    r = CliRunner().invoke(main, [*args, "--model", "llama-3.1-8b"])
    assert r.exit_code == 2, r.output
    assert "--model 'llama-3.1-8b' contradicts the log" in r.output and "--model llama-3.3-70b" in r.output
    assert not (project / "registry/observations/t7.yaml").exists()
    r = CliRunner().invoke(main, [*args, "--model", "llama-3.3-70b"])
    # the right model, and the start is the shipped one again: refused by the registry's own duplicate check
    # (206), naming the shipped file and the command that refreshes it, and nothing is left written
    assert r.exit_code == 2, r.output
    assert f"already {OBS}" in r.output and f"--id {Path(OBS).stem} --force" in r.output
    assert not (project / "registry/observations/t7.yaml").exists()
    assert _validate(project) == []
