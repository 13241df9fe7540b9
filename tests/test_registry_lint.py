"""Registry lint over the shipped entries: valid, sourced, unique (issue #7, registry/README.md)."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from kvreg.registry import load_registry
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def reg(shipped_registry):
    return shipped_registry


def test_kvreg_validate_is_clean():
    result = CliRunner().invoke(main, ["validate", "--project", str(ROOT)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("entries valid.")


def test_registry_has_the_issue_7_breadth(reg):
    assert len(reg.of("model")) >= 35
    assert len(reg.of("hardware")) >= 20


def test_registry_has_the_issue_14_devices_and_families(reg):
    hw = reg.of("hardware")
    # "≥ 45 accelerators": the generic card (vendor generic, the budget lesson's device) is not one
    real = {hid: h for hid, h in hw.items() if h.vendor != "generic"}
    assert len(real) >= 45
    assert {h.vendor for h in real.values()} == {"NVIDIA", "AMD", "Google", "AWS", "Intel", "Apple"}
    for hid in ("t4", "a10g", "l40", "h20", "rtx-3090", "rtx-4080", "rtx-4090", "rtx-5090", "rtx-pro-6000",
                "rtx-pro-6000-max-q", "gb200", "gb300", "mi250x", "tpu-v5e", "tpu-v5p", "tpu7x", "trainium2",
                "dgx-spark", "strix-halo-128gb", "m2-ultra-192gb", "m3-ultra-512gb"):
        assert hid in hw, hid
    models = reg.of("model")
    # the families issue 14 names: DSA (V3.2, GLM-5), KDA hybrids (K3), LFM2, Llama-2 MHA and GQA
    assert any(g.index_head_dim for g in models["deepseek-v3.2"].layer_groups)
    assert any(g.index_head_dim for g in models["glm-5"].layer_groups)
    assert {g.variant for g in models["kimi-k3"].layer_groups} == {"kda", None}
    assert {g.variant for g in models["lfm2-1.2b"].layer_groups} == {"short_conv", None}
    assert models["llama-2-7b"].layer_groups[0].kv_heads == models["llama-2-7b"].attention_heads   # MHA
    assert models["llama-2-70b"].layer_groups[0].kv_heads == 8                                    # GQA
    # the models the shipped observations name that the issue lists
    for mid in ("deepseek-coder-6.7b", "starcoder2-3b", "nemotron-nano-9b-v2", "minimax-m2"):
        assert mid in models, mid


# Observations whose model is not (and cannot yet be) a registry entry, with why.
MODELS_NOT_IN_REGISTRY = {
    "qwen3.8-flash-next": "vllm-log-30/31: a checkpoint named only in an issue thread (NVFP4 experts + FP8 dense), run on a fork build; no published config to write it from",
}


def test_every_observation_model_resolves_or_is_named_unknown(reg):
    # issue 14 item 6: an observation names a registry model, or says it does not know the model
    models = reg.of("model")
    for oid, o in reg.of("observation").items():
        if o.model is None:
            assert "model" in o.unknown, f"{oid}: no model and not listed as unknown"
        elif o.model not in models:
            assert o.model in MODELS_NOT_IN_REGISTRY, f"{oid}: model {o.model} is not in the registry"
            assert not o.reproducible, oid
        else:   # ingest-log's note that the model is missing goes once the model is added
            assert "model_missing" not in o.inferred, f"{oid}: says {o.model} is missing, but it is in the registry"


def test_every_observation_gpu_resolves_or_is_named_unknown(reg):
    hw = reg.of("hardware")
    for oid, o in reg.of("observation").items():
        if o.hardware is not None:
            assert o.hardware in hw, oid
        else:
            assert "hardware" in o.unknown, f"{oid}: no hardware and not listed as unknown"


# Entry kinds that state facts (numbers about a model, a device, an engine release, a log) must cite
# them; a report definition (reports/*.yaml) states a question, not a fact, and needs none
# (registry/README.md, "Sources").
FACT_KINDS = ("model", "hardware", "engine", "observation", "throughput")   # throughput: measured speed (issue 13)


def test_every_entry_has_a_source_with_url_or_title(reg):
    assert set(reg.entries) - {"report"} <= set(FACT_KINDS), "a new entry kind: decide whether it states facts"
    for kind in FACT_KINDS:
        for eid, loaded in reg.entries.get(kind, {}).items():
            assert loaded.entry.sources, f"{kind} {eid} has no source"
            for s in loaded.entry.sources:
                assert s.url or s.title, f"{kind} {eid}: source {s.id} names nothing"


def test_every_model_and_hardware_number_cites_a_source(con):
    rows = con.execute("SELECT kind, entry_id, field FROM provenance "
                       "WHERE kind IN ('model', 'hardware') AND source_id IS NULL ORDER BY ALL").fetchall()
    assert rows == []


def test_every_number_has_a_confidence_level(con):
    levels = {r[0] for r in con.execute("SELECT DISTINCT confidence FROM provenance").fetchall()}
    assert levels <= {"measured", "read", "derived", "estimated"}


def test_every_hardware_entry_states_its_memory_basis(reg):
    for hid, loaded in reg.entries["hardware"].items():
        assert "memory_basis" in loaded.doc.data, f"{hid}: memory_basis must be written, not defaulted"
        h = loaded.entry
        if h.memory_basis == "marketed":
            # a figure not reported by a runtime is an estimate, and says how it was converted
            assert h.memory_usable.confidence == "estimated", hid
            assert h.memory_usable.note, hid


def test_no_two_entries_share_an_id(reg):
    ids = Counter(eid for entries in reg.entries.values() for eid in entries)
    assert [i for i, n in ids.items() if n > 1] == []
    for entries in reg.entries.values():
        for eid, loaded in entries.items():
            assert loaded.entry.id == eid


def test_no_two_models_share_an_hf_id(reg):
    hf = Counter(m.hf_id for m in reg.of("model").values() if m.hf_id)
    assert [h for h, n in hf.items() if n > 1] == []


def test_every_price_has_provider_date_and_source(reg):
    priced = {hid: h for hid, h in reg.of("hardware").items() if h.price}
    assert len(priced) >= 30, "the shipped registry prices 31 of its 47 devices (24 with a rental quote)"
    for hid, h in priced.items():
        for q in h.price.quotes():
            assert isinstance(q.date, dt.date), hid
            assert q.provider, hid
            assert q.usd_per_hour.source, hid
        if h.price.purchase:
            assert h.price.purchase.usd.source and h.price.purchase.kind, hid
        if h.price.tdp_w:
            assert h.price.tdp_w.source, hid


def test_every_device_has_a_rental_price_or_says_why_not(reg):
    # issue 12 item 2: a device without an on-demand quote ranks in its own list on the rental basis; its entry
    # says why (no public per-GPU rate, bought not rented, …) instead of being silently unpriced.
    import re

    for hid, h in reg.of("hardware").items():
        if hid == "generic-80gb":   # the synthetic test device
            continue
        if h.price and h.price.quotes():
            continue
        assert re.search(r"no (rental )?price", h.notes or ""), f"{hid}: no rental quote and no note why"


def test_the_q4_datacenter_devices_have_two_rental_providers(reg):
    # two public price lists where public (issue 12 item 2); the MI325X has one (TensorWave)
    hw = reg.of("hardware")
    for hid in ("h100-sxm-80gb", "h200", "b200", "b300", "mi300x", "mi355x", "rtx-pro-6000"):
        providers = {q.provider.split()[0] for q in hw[hid].price.quotes()}
        assert len(providers) >= 2, (hid, providers)
    assert {q.usd_per_hour.value for q in hw["mi355x"].price.quotes()} == {2.59, 8.60}   # Vultr, Oracle


# --- the `mlp` layer kind (added for Nemotron-H's MLP-only and MoE-only blocks) -----------------

def test_mlp_layers_count_toward_layers_but_store_nothing():
    from tests.conftest import one
    from tests.registry_factory import con_for

    con = con_for(models={"m": {"layers": 3, "groups": [
        {"kind": "full", "count": 1, "kv_heads": 8, "head_dim": 128},
        {"kind": "mlp", "count": 2}]}})
    r = one(con, "SELECT * FROM kv_sequence_costs WHERE model_id='m' AND kv_dtype='bf16' AND tp=1 AND context_tokens=1024")
    assert r["growing_token_bytes"] == 2 * 8 * 128 * 2          # the one attention layer only
    assert r["naive_token_bytes"] == 2 * 8 * 128 * 2            # a layer with no mixer is not "attention"
    assert r["state_bytes"] == 0


def test_mlp_layer_rejects_attention_fields(tmp_path):
    from kvreg.problems import KvregError
    from tests.registry_factory import write_project

    write_project(tmp_path, models={"m": {"layers": 1, "groups": [{"kind": "mlp", "count": 1, "kv_heads": 8}]}})
    with pytest.raises(KvregError) as err:
        load_registry(tmp_path)
    assert any(p.code == "field-not-for-kind" for p in err.value.problems)
