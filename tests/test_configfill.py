"""An entry states only what its shipped config cannot say (issue 14 item 1, kvreg/configfill.py)."""

from __future__ import annotations

import shutil

import pytest

from kvreg.build import memory_connection
from kvreg.configfill import MISSING_HINT
from kvreg.problems import KvregError
from kvreg.registry import load_registry
from tests.conftest import ROOT
from tests.registry_factory import engine_entry, hardware_entry, write_project

MODELS = ROOT / "registry" / "models"
# Llama 2 7B's geometry as its config.json gives it (32 layers × 32 KV heads of 128, hidden 4096, vocab 32,000),
# written out by hand, with the group note the importer writes.
LLAMA2_7B_GEOMETRY = ("layers: 32\nhidden_size: 4096\nvocab_size: 32000\nattention_heads: 32\n"
                      "layer_groups:\n- kind: full\n  count: 32\n  kv_heads: 32\n  head_dim: 128\n  note: layers 0-31\n")


def _project(root, model: str, text: str | None = None, config: bool = True):
    write_project(root, hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    text = (MODELS / f"{model}.yaml").read_text() if text is None else text
    (root / "registry/models" / f"{model}.yaml").write_text(text)
    if config:
        shutil.copy(MODELS / f"{model}.config.json", root / "registry/models")
    return root


def test_the_shipped_entry_states_no_geometry_its_config_gives():
    text = (MODELS / "llama-2-7b.yaml").read_text()
    for key in ("layers:", "hidden_size:", "vocab_size:", "attention_heads:", "layer_groups:"):
        assert f"\n{key}" not in text, key


def test_an_entry_without_layer_groups_takes_the_configs_and_builds_the_full_entrys_rows(tmp_path):
    stripped = (MODELS / "llama-2-7b.yaml").read_text()
    full = stripped.replace("dtype: fp16\n", "dtype: fp16\n" + LLAMA2_7B_GEOMETRY, 1)
    assert full != stripped
    a = _project(tmp_path / "a", "llama-2-7b")
    b = _project(tmp_path / "b", "llama-2-7b", full)
    ea, eb = (load_registry(r).entries["model"]["llama-2-7b"] for r in (a, b))
    assert ea.entry.model_dump() == eb.entry.model_dump()
    assert ea.entry.layer_groups[0].kv_heads == 32 and ea.entry.layers == 32
    ca, cb = memory_connection(a), memory_connection(b)
    for sql in ("SELECT * EXCLUDE (file, line) FROM layer_groups WHERE model_id = 'llama-2-7b'",
                "SELECT * EXCLUDE (file, line) FROM models WHERE model_id = 'llama-2-7b'",
                "SELECT * FROM kv_sequence_costs WHERE model_id = 'llama-2-7b' ORDER BY ALL"):
        rows = ca.execute(sql).fetchall()
        assert rows and rows == cb.execute(sql).fetchall(), sql
    # 32 layers × (K + V) × 32 KV heads × 128 × 2 bytes (bf16) = 524,288 B per token, from the filled groups
    assert ca.execute("SELECT growing_token_bytes FROM kv_sequence_costs WHERE model_id = 'llama-2-7b' "
                      "AND kv_dtype = 'bf16' AND tp = 1 LIMIT 1").fetchone()[0] == 32 * 2 * 32 * 128 * 2
    sql = ("SELECT field, file, basis, confidence FROM field_provenance WHERE entry_id = 'llama-2-7b' "
           "AND field IN ('layers', 'layer_groups.0.kv_heads') ORDER BY field")
    cfg = "registry/models/llama-2-7b.config.json"
    assert ca.execute(sql).fetchall() == [("layer_groups.0.kv_heads", cfg, "shipped-config", "read"),
                                          ("layers", cfg, "shipped-config", "read")]
    assert [r[1] for r in cb.execute(sql).fetchall()] == ["registry/models/llama-2-7b.yaml"] * 2


def test_a_group_without_kv_heads_takes_the_configs(tmp_path):
    text = (MODELS / "llama-3.1-8b.yaml").read_text()
    assert text.count("    kv_heads: 8\n") == 1
    reg = load_registry(_project(tmp_path, "llama-3.1-8b", text.replace("    kv_heads: 8\n", "")))
    item = reg.entries["model"]["llama-3.1-8b"]
    assert item.entry.layer_groups[0].kv_heads == 8           # Llama 3.1 8B: num_key_value_heads 8
    assert item.entry.layer_groups[0].note == load_registry(_project(tmp_path / "full", "llama-3.1-8b")) \
        .entries["model"]["llama-3.1-8b"].entry.layer_groups[0].note   # the entry's own keys stay its own
    assert item.doc.file_of(("layer_groups", 0, "kv_heads")) == "registry/models/llama-3.1-8b.config.json"
    assert item.doc.file_of(("layer_groups", 0, "head_dim")) == "registry/models/llama-3.1-8b.yaml"
    assert reg.config_checked["llama-3.1-8b"][("layer_groups", 0, "kv_heads")] == 8


def test_a_stated_field_that_disagrees_is_still_refused(tmp_path):
    text = (MODELS / "llama-2-7b.yaml").read_text().replace("dtype: fp16\n", "dtype: fp16\nhidden_size: 4097\n", 1)
    with pytest.raises(KvregError) as err:
        load_registry(_project(tmp_path, "llama-2-7b", text))
    [p] = err.value.problems
    assert (p.code, p.file, p.key) == ("config-mismatch", "registry/models/llama-2-7b.yaml", "hidden_size")
    assert "hidden_size is 4097 but the shipped config registry/models/llama-2-7b.config.json gives 4096" in p.message


def test_a_model_without_config_must_state_its_geometry(tmp_path):
    with pytest.raises(KvregError) as err:
        load_registry(_project(tmp_path, "llama-2-7b", config=False))
    missing = {p.key: p for p in err.value.problems if p.code == "missing-key"}
    assert set(missing) == {"layers", "hidden_size", "layer_groups"}   # the required ones (attention_heads is optional)
    p = missing["layers"]
    assert p.file == "registry/models/llama-2-7b.yaml" and p.line >= 1
    assert p.hint == MISSING_HINT and "ship its config.json beside it" in p.hint and "or state the field" in p.hint
    # stated in full, the same entry needs no config
    full = (MODELS / "llama-2-7b.yaml").read_text().replace("dtype: fp16\n", "dtype: fp16\n" + LLAMA2_7B_GEOMETRY, 1)
    assert load_registry(_project(tmp_path / "full", "llama-2-7b", full, config=False)).entries["model"]["llama-2-7b"]


def test_an_edited_config_refills_a_cached_entry(tmp_path):
    # The validate cache keys a model entry by its config's bytes too: a cached entry filled from the old config
    # would otherwise keep the old geometry.
    import json

    from kvreg.validate_cache import ValidateCache

    root = _project(tmp_path / "p", "llama-2-7b")
    cache = ValidateCache(tmp_path / "cache")
    assert load_registry(root, cache).entries["model"]["llama-2-7b"].entry.layer_groups[0].kv_heads == 32
    cfg_file = root / "registry/models/llama-2-7b.config.json"
    cfg = json.loads(cfg_file.read_text())
    cfg["num_key_value_heads"] = 8
    cfg_file.write_text(json.dumps(cfg))
    assert load_registry(root, cache).entries["model"]["llama-2-7b"].entry.layer_groups[0].kv_heads == 8
