"""Model geometry by construction (issue 14 item 1): entries checked against their shipped config.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kvreg.problems import KvregError
from kvreg.registry import load_registry
from tests.conftest import ROOT
from tests.registry_factory import engine_entry, hardware_entry, write_project

MODELS = ROOT / "registry" / "models"


def _project(tmp_path: Path, model: str, edit=None, cfg_edit=None) -> Path:
    write_project(tmp_path, hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    text = (MODELS / f"{model}.yaml").read_text()
    if edit:
        old, new = edit
        assert old in text
        text = text.replace(old, new, 1)
    (tmp_path / "registry/models" / f"{model}.yaml").write_text(text)
    cfg = json.loads((MODELS / f"{model}.config.json").read_text())
    if cfg_edit:
        cfg_edit(cfg)
    (tmp_path / "registry/models" / f"{model}.config.json").write_text(json.dumps(cfg))
    return tmp_path


def _problems(root: Path):
    with pytest.raises(KvregError) as err:
        load_registry(root)
    return err.value.problems


def test_every_shipped_config_has_an_entry_and_an_origin():
    shipped = sorted(p.name.removesuffix(".config.json") for p in MODELS.glob("*.config.json"))
    assert len(shipped) >= 36
    origins = (MODELS / "CONFIGS.md").read_text()
    for mid in shipped:
        assert (MODELS / f"{mid}.yaml").exists(), mid
        assert f"`{mid}.config.json`" in origins, mid


def test_unchanged_entry_agrees_with_its_config(tmp_path):
    reg = load_registry(_project(tmp_path, "llama-3.1-8b"))
    checked = reg.config_checked["llama-3.1-8b"]
    assert checked[("layer_groups", 0, "kv_heads")] == 8 and checked[("layers",)] == 32


def test_changed_kv_heads_is_refused_with_file_line_and_the_configs_value(tmp_path):
    root = _project(tmp_path, "llama-3.1-8b", edit=("kv_heads: 8", "kv_heads: 4"))
    [p] = _problems(root)
    assert (p.code, p.file, p.key) == ("config-mismatch", "registry/models/llama-3.1-8b.yaml", "layer_groups.0.kv_heads")
    lines = (root / p.file).read_text().splitlines()
    assert lines[p.line - 1].strip() == "kv_heads: 4"           # the line of the key itself
    assert "is 4 but the shipped config registry/models/llama-3.1-8b.config.json gives 8" in p.message


def test_changed_hidden_size_is_refused(tmp_path):
    # the entry states no hidden_size (its shipped config gives it); one stated wrong is refused
    root = _project(tmp_path, "qwen3-32b", edit=("architecture: Qwen3ForCausalLM\n",
                                                  "architecture: Qwen3ForCausalLM\nhidden_size: 5121\n"))
    [p] = _problems(root)
    assert p.key == "hidden_size" and "gives 5120" in p.message and "is 5121" in p.message


def test_a_config_that_disagrees_is_refused_too(tmp_path):
    # The check is symmetric: a wrong shipped config (here a window of 2048) is caught the same way.
    def window(cfg):
        cfg["sliding_window"] = 2048
    [p] = _problems(_project(tmp_path, "mistral-7b-v0.1", cfg_edit=window))
    assert p.code == "config-mismatch" and p.key.endswith("window") and "gives 2048" in p.message


def test_moving_a_layer_between_kinds_is_refused(tmp_path):
    # Gemma 2 9B alternates 21 sliding and 21 full layers; calling one more layer sliding keeps the
    # layer sum but not the config's layout.
    text = (MODELS / "gemma-2-9b.yaml").read_text()
    text = text.replace("  - kind: sliding\n    count: 21", "  - kind: sliding\n    count: 22", 1)
    text = text.replace("  - kind: full\n    count: 21", "  - kind: full\n    count: 20", 1)
    root = _project(tmp_path, "gemma-2-9b")
    (root / "registry/models/gemma-2-9b.yaml").write_text(text)
    probs = _problems(root)
    assert [(p.code, p.key) for p in probs] == [("config-mismatch", "layer_groups.0.count"),
                                                ("config-mismatch", "layer_groups.1.count")]
    assert "is 22 but the shipped config registry/models/gemma-2-9b.config.json gives 21" in probs[0].message


def test_a_different_layout_is_compared_as_a_multiset(tmp_path):
    # Split the 21 full layers into two groups of the same geometry: the multiset is unchanged.
    text = (MODELS / "gemma-2-9b.yaml").read_text()
    text = text.replace("  - kind: full\n    count: 21\n    kv_heads: 8\n    head_dim: 256",
                        "  - kind: full\n    count: 20\n    kv_heads: 8\n    head_dim: 256\n"
                        "  - kind: full\n    count: 1\n    kv_heads: 8\n    head_dim: 256", 1)
    root = _project(tmp_path, "gemma-2-9b")
    (root / "registry/models/gemma-2-9b.yaml").write_text(text)
    assert load_registry(root).config_checked["gemma-2-9b"][("layer_groups", 2, "count")] == 1
    # … but one of them with 4 KV heads is named with both geometries.
    (root / "registry/models/gemma-2-9b.yaml").write_text(text.replace("count: 1\n    kv_heads: 8", "count: 1\n    kv_heads: 4"))
    [p] = _problems(root)
    assert p.key == "layer_groups" and "1 × full (kv_heads 4" in p.message and "1 × full (kv_heads 8" in p.message


def test_an_unreadable_config_is_a_problem(tmp_path):
    def break_it(cfg):
        cfg["architectures"] = ["NoSuchForCausalLM"]
        cfg["model_type"] = "no_such"
    probs = _problems(_project(tmp_path, "llama-3.1-8b", cfg_edit=break_it))
    # the entry leaves layers and hidden_size (required) to the config: refused at id, naming the config
    [p] = [q for q in probs if q.code == "config-unreadable"]
    assert p.key == "id" and "llama-3.1-8b.config.json" in p.message and "omits layers, hidden_size, but its shipped config" in p.message
    assert {q.key for q in probs if q.code == "missing-key"} == {"layers", "hidden_size"}
    assert len(probs) == 3


def test_an_unreadable_config_of_a_full_entry_is_a_problem_too(tmp_path):
    def break_it(cfg):
        cfg["architectures"] = ["NoSuchForCausalLM"]
        cfg["model_type"] = "no_such"
    full = ("architecture: LlamaForCausalLM\n",
            "architecture: LlamaForCausalLM\nlayers: 32\nhidden_size: 4096\nvocab_size: 128256\nattention_heads: 32\n")
    [p] = _problems(_project(tmp_path, "llama-3.1-8b", edit=full, cfg_edit=break_it))
    assert p.code == "config-unreadable" and "llama-3.1-8b.config.json" in p.message


def test_checked_geometry_is_read_from_the_shipped_config(con):
    row = con.execute("SELECT source_id, basis, url, confidence FROM provenance WHERE entry_id = 'llama-3.1-8b' "
                      "AND field = 'layer_groups.0.head_dim'").fetchone()
    assert row == ("shipped-config", "shipped-config", "registry/models/llama-3.1-8b.config.json", "read")


def test_a_wrong_indexer_key_width_is_refused(tmp_path):
    # index_head_dim prices the DSA indexer's key cache (132 B per token per layer): part of a layer's
    # geometry, so an entry that disagrees with the shipped config is refused like a wrong kv_heads.
    [p] = _problems(_project(tmp_path, "deepseek-v3.2", edit=("index_head_dim: 128", "index_head_dim: 64")))
    assert (p.code, p.key) == ("config-mismatch", "layer_groups.0.index_head_dim")
    assert (tmp_path / p.file).read_text().splitlines()[p.line - 1].strip() == "index_head_dim: 64"
    assert "is 64 but the shipped config registry/models/deepseek-v3.2.config.json gives 128" in p.message


def test_an_uncached_validation_imports_each_shipped_config_once(monkeypatch):
    """The geometry fill and the config check share one reading (configcheck.config_reading's ``readings``):
    an uncached validation of the shipped registry imports each config.json once, not once per step; a thin
    config (Falcon-H1's docs table: no parameter count) once without and once with the entry's params_total."""
    import collections

    import kvreg.importhf as importhf

    real = importhf.import_config
    calls = collections.Counter()

    def counting(path, *args, **kwargs):
        calls[(Path(path).name, kwargs.get("params_total"))] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(importhf, "import_config", counting)
    reg = load_registry(ROOT)
    shipped = {p.name for p in MODELS.glob("*.config.json")}
    assert {name for name, _ in calls} == shipped
    assert max(calls.values()) == 1, [k for k, n in calls.items() if n > 1]
    assert ("falcon-h1-34b.config.json", None) in calls and ("falcon-h1-34b.config.json", 34e9) in calls
    assert reg.config_checked["llama-3.1-8b"][("layers",)] == 32  # the check still ran on the shared reading
