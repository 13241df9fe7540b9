"""`kvreg import-hf` and the shipped registry agree, model by model, through the build's views.

Every config fixture in tests/fixtures/hf/ whose model also has a hand-written entry in
registry/models/ is imported into a temporary project beside that entry (the imported copy is
renamed ``<registry id>--imported`` and carries no ``hf_id``, so the duplicate-hf_id check does
not fire).  One database is built over the project with ``kvreg.build.memory_connection``, and
the two sides are compared on what the views compute — never on Python arithmetic:

- ``kv_sequence_costs`` (growing_token_bytes, bounded_bytes, state_bytes, conv_state_bytes,
  seq_bytes, naive_seq_bytes) at 4Ki / 32Ki / 128Ki, KV bf16 and fp8, TP 1 / 2 / 8: equal;
- ``models.layers`` and ``models.native_context_tokens``: equal;
- ``models.params_total``: within 1 % where both sides derived it from the config
  (``provenance.confidence = 'derived'``); the others are listed in PARAMS_NOT_COMPARED with why;
  ``params_active`` likewise for the MoE models in ACTIVE_COMPARED;
- hidden size, attention heads, vocabulary (where both state it) and MoE routing: equal.

Disagreements found when this test was written, and how each was resolved, are in
docs/import-hf.md ("Agreement with the registry").
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from kvreg.importhf import import_config
from tests.conftest import ROOT
from tests.registry_factory import engine_entry, hardware_entry, write_project

FIX = ROOT / "tests" / "fixtures" / "hf"
REG = ROOT / "registry" / "models"

# fixture (tests/fixtures/hf/<name>.json) -> registry id (registry/models/<id>.yaml).
# Written out, not derived from file names, so a renamed entry or fixture fails here.
MATCHES: list[tuple[str, str]] = [
    ("command-r-v01", "command-r-v01"),
    ("deepseek-r1", "deepseek-r1"),
    ("deepseek-v2-lite", "deepseek-v2-lite"),
    ("deepseek-v3", "deepseek-v3"),
    ("deepseek-v3.2", "deepseek-v3.2"),
    ("glm-5", "glm-5"),
    ("llama-2-7b", "llama-2-7b"),
    ("llama-2-13b", "llama-2-13b"),
    ("llama-2-70b", "llama-2-70b"),
    ("lfm2-1.2b", "lfm2-1.2b"),
    ("lfm2-350m", "lfm2-350m"),
    ("kimi-k3", "kimi-k3"),
    ("kimi-linear-48b-a3b", "kimi-linear-48b-a3b"),
    ("minimax-m2.5", "minimax-m2.5"),
    ("minimax-m2.7", "minimax-m2.7"),
    ("phi-2", "phi-2"),
    ("granite-3.3-8b", "granite-3.3-8b"),
    ("glm-4.7", "glm-4.7"),
    ("nemotron-3-super-120b-a12b", "nemotron-3-super-120b-a12b"),
    ("falcon-h1-34b", "falcon-h1-34b"),
    ("gemma-2-9b", "gemma-2-9b"),
    ("gemma-3-1b", "gemma-3-1b"),
    ("gemma-3-27b", "gemma-3-27b"),
    ("gemma-3-4b", "gemma-3-4b"),
    ("gemma-3n-e2b", "gemma-3n-e2b"),
    ("gemma-3n-e4b", "gemma-3n-e4b"),
    ("gemma-4-26b-a4b", "gemma-4-26b-a4b"),
    ("gemma-4-31b", "gemma-4-31b"),
    ("gemma-4-e2b", "gemma-4-e2b"),
    ("gemma-4-e4b", "gemma-4-e4b"),
    ("gpt-oss-120b", "gpt-oss-120b"),
    ("gpt-oss-20b", "gpt-oss-20b"),
    ("granite-4.0-h-tiny", "granite-4.0-h-tiny"),
    ("jamba-1.5-mini", "jamba-1.5-mini"),
    ("kimi-k2", "kimi-k2"),
    ("llama-3.1-405b", "llama-3.1-405b"),
    ("llama-3.1-70b", "llama-3.1-70b"),
    ("llama-3.1-8b", "llama-3.1-8b"),
    ("llama-4-scout-17b-16e", "llama-4-scout-17b-16e"),
    ("mistral-7b-v0.1", "mistral-7b-v0.1"),
    ("mistral-7b-v0.3", "mistral-7b-v0.3"),
    ("mixtral-8x7b", "mixtral-8x7b"),
    ("nemotron-h-56b", "nemotron-h-56b"),
    ("nemotron-3-nano-30b-a3b", "nemotron-3-nano-30b-a3b"),
    ("phi-3-mini-4k", "phi-3-mini-4k"),
    ("qwen2.5-7b", "qwen2.5-7b"),
    ("qwen3-235b-a22b", "qwen3-235b-a22b"),
    ("qwen3-32b", "qwen3-32b"),
    ("qwen3-next-80b-a3b", "qwen3-next-80b-a3b"),
    ("qwen3.5-35b-a3b", "qwen3.5-35b-a3b"),
    ("qwen3.6-27b", "qwen3.6-27b"),
    # The budget lesson's Qwen3.8-27B has Qwen3.6-27B's text config (kv-budget-lesson.txt).
    ("qwen3.6-27b", "qwen3.8-27b"),
    ("yi-34b", "yi-34b"),
    # published configs shipped beside their entries (registry/models/CONFIGS.md)
    ("starcoder2-3b", "starcoder2-3b"),
    ("phi-4", "phi-4"),
    ("qwen2.5-0.5b", "qwen2.5-0.5b"),
    ("qwen3-14b", "qwen3-14b"),
    ("gemma-3-12b", "gemma-3-12b"),
    ("nemotron-h-8b", "nemotron-h-8b"),
    ("granite-4.0-h-small", "granite-4.0-h-small"),
    ("deepseek-v4-flash", "deepseek-v4-flash"),
    ("deepseek-v4-pro", "deepseek-v4-pro"),
]
# Fixtures with no registry entry of their own to compare against.  (Registry entries with
# no fixture — e.g. gemma-2-27b, qwen3-8b — are checked only by the spot tests.)
UNMATCHED: dict[str, str] = {
    "gemma-3-12b-resaved": "gemma-3-12b's config with the pattern spelled _sliding_window_pattern; test_import_hf "
                           "checks its layer groups equal gemma-3-12b's",
    "starcoder2-7b": "family fixture (the registry's StarCoder2 is the 3B)",
    "olmo2-7b": "family fixture: no OLMo 2 entry in the registry",
    "smollm3-3b": "family fixture: no SmolLM3 entry in the registry",
}

# Import arguments a fixture needs: Falcon-H1's docs table has no vocab_size / intermediate_size,
# so its count is the published 34B (the importer records it as estimated).
IMPORT_ARGS = {"falcon-h1-34b": {"params_total": 34e9}, "nemotron-3-super-120b-a12b": {"params_total": 120e9},
               "deepseek-v4-flash": {"params_total": 284e9}, "deepseek-v4-pro": {"params_total": 1.6e12}}

# params_total is compared only where both sides derived it from the config.  Elsewhere one side
# is a published or name-based figure, and the reason is written here (the test checks it).
PARAMS_NOT_COMPARED = {
    "falcon-h1-34b": "both sides use the published 34B (no vocab_size in the docs table)",
    "nemotron-3-super-120b-a12b": "both sides use the name's 120B (a latent MoE kvreg does not count)",
    "gemma-3-1b": "registry: from the model name",
    "gemma-3-4b": "registry: from the model name (includes the vision tower)",
    "gemma-3n-e2b": "registry: effective parameters (E2B)",
    "gemma-3n-e4b": "registry: effective parameters (E4B)",
    "gemma-4-26b-a4b": "registry: from the model name",
    "gemma-4-31b": "registry: from the model name (the seed's 62 GB of bf16 weights agree)",
    "gemma-4-e2b": "registry: effective parameters (E2B)",
    "gemma-4-e4b": "registry: effective parameters (E4B)",
    "gpt-oss-120b": "registry: the model card's published total",
    "gpt-oss-20b": "registry: the model card's published total",
    "granite-4.0-h-tiny": "registry: the model card's published total",
    "jamba-1.5-mini": "registry: the published 52B",
    "llama-4-scout-17b-16e": "registry: the published 109B",
    "nemotron-h-56b": "registry: from the model name",
    "qwen3.8-27b": "registry: the budget lesson's 54 GB of bf16 weights",
    "starcoder2-3b": "registry: the model card's 3B",
    "qwen2.5-0.5b": "registry: the model card's 0.49B",
    "qwen3-14b": "registry: the model card's 14.8B",
    "nemotron-h-8b": "registry: from the model name",
    "granite-4.0-h-small": "registry: the model card's published total",
    "deepseek-v4-flash": "both sides use the published 284B (no DeepSeek-V4 parameter rule)",
    "deepseek-v4-pro": "both sides use the published 1.6T (no DeepSeek-V4 parameter rule)",
}

# MoE models whose params_active both sides derived from the config (the rest are published or
# name-based on the registry side: Granite, Llama 4, Qwen3-Next/3.5, Gemma 4 26B-A4B).
ACTIVE_COMPARED = {"deepseek-r1", "deepseek-v2-lite", "deepseek-v3", "kimi-k2", "mixtral-8x7b", "qwen3-235b-a22b",
                   "gpt-oss-20b", "gpt-oss-120b", "nemotron-3-nano-30b-a3b", "qwen3-next-80b-a3b",
                   "deepseek-v3.2", "glm-5", "kimi-k3", "kimi-linear-48b-a3b",
                   "minimax-m2.5", "minimax-m2.7", "glm-4.7"}

CONTEXTS = (4096, 32768, 131072)        # 4Ki, 32Ki, 128Ki
KV_DTYPES = ("bf16", "fp8")
TPS = (1, 2, 8)
COLUMNS = ("growing_token_bytes", "bounded_bytes", "state_bytes", "conv_state_bytes", "seq_bytes",
           "naive_seq_bytes")


def imported_id(reg: str) -> str:
    return f"{reg}--imported"


@pytest.fixture(scope="module")
def con():
    """One in-memory database over a temp project: each matched registry entry + its imported twin."""
    from kvreg.build import memory_connection

    root = Path(tempfile.mkdtemp(prefix="kvreg-import-vs-registry-"))
    models = {}
    for fixture, reg in MATCHES:
        entry = import_config(FIX / f"{fixture}.json", entry_id=imported_id(reg), **IMPORT_ARGS.get(fixture, {}))
        models[imported_id(reg)] = entry.entry
    write_project(root, models, {"hw": hardware_entry("hw")}, {"first-principles": engine_entry()})
    for _, reg in MATCHES:                       # the shipped entry, byte for byte
        shutil.copy(REG / f"{reg}.yaml", root / "registry" / "models" / f"{reg}.yaml")
        if (REG / f"{reg}.config.json").exists():  # with the config that gives the geometry it omits
            shutil.copy(REG / f"{reg}.config.json", root / "registry" / "models")
    c = memory_connection(root)
    yield c
    c.close()
    shutil.rmtree(root, ignore_errors=True)


def test_table_covers_every_fixture():
    fixtures = {p.stem for p in FIX.glob("*.json")}
    assert {f for f, _ in MATCHES} | set(UNMATCHED) == fixtures
    assert all((REG / f"{reg}.yaml").exists() for _, reg in MATCHES)


def _costs(con, model: str) -> dict:
    rows = con.execute(
        f"SELECT kv_dtype, tp, context_tokens, {', '.join(COLUMNS)} FROM kv_sequence_costs"
        " WHERE model_id = ? AND kv_dtype IN ('bf16', 'fp8') AND tp IN (1, 2, 8)"
        " AND context_tokens IN (4096, 32768, 131072) ORDER BY ALL", [model]).fetchall()
    return {r[:3]: dict(zip(COLUMNS, r[3:])) for r in rows}


@pytest.mark.parametrize("fixture,reg", MATCHES, ids=[f"{f}->{r}" for f, r in MATCHES])
def test_sequence_costs_equal(con, fixture, reg):
    mine, theirs = _costs(con, imported_id(reg)), _costs(con, reg)
    assert len(theirs) == len(KV_DTYPES) * len(TPS) * len(CONTEXTS)   # every scenario is there
    assert sorted(mine) == sorted(theirs)
    for key in theirs:
        assert mine[key] == theirs[key], f"{reg} at kv {key[0]}, tp {key[1]}, {key[2]} tokens"


DIMENSIONS = ("hidden_size", "attention_heads", "vocab_size", "moe_experts", "moe_experts_per_token",
              "moe_shared_experts")


def _model(con, model: str) -> dict:
    cols = ("layers", "native_context_tokens", "params_total", "params_active") + DIMENSIONS
    row = con.execute(f"SELECT {', '.join(cols)} FROM models WHERE model_id = ?", [model]).fetchone()
    out = dict(zip(cols, row))
    for field in ("params_total", "params_active"):
        conf = con.execute("SELECT confidence FROM provenance WHERE entry_id = ? AND field = ?",
                           [model, field]).fetchone()
        out[field + "_confidence"] = conf[0] if conf else None
    return out


@pytest.mark.parametrize("fixture,reg", MATCHES, ids=[f"{f}->{r}" for f, r in MATCHES])
def test_layers_and_native_context_equal(con, fixture, reg):
    mine, theirs = _model(con, imported_id(reg)), _model(con, reg)
    assert (mine["layers"], mine["native_context_tokens"]) == (theirs["layers"], theirs["native_context_tokens"])


@pytest.mark.parametrize("fixture,reg", MATCHES, ids=[f"{f}->{r}" for f, r in MATCHES])
def test_dimensions_and_moe_routing_equal(con, fixture, reg):
    mine, theirs = _model(con, imported_id(reg)), _model(con, reg)
    for d in DIMENSIONS:
        # A registry entry may leave out a vocabulary its sources do not state (Granite-4.0-H-Tiny).
        if d == "vocab_size" and theirs[d] is None:
            continue
        assert mine[d] == theirs[d], d


@pytest.mark.parametrize("fixture,reg", MATCHES, ids=[f"{f}->{r}" for f, r in MATCHES])
def test_params_total_within_one_percent_where_both_derived(con, fixture, reg):
    mine, theirs = _model(con, imported_id(reg)), _model(con, reg)
    both_derived = mine["params_total_confidence"] == theirs["params_total_confidence"] == "derived"
    # The exemption list and the entries' stated confidence must agree: no silent skips.
    assert both_derived == (reg not in PARAMS_NOT_COMPARED), (reg, mine["params_total_confidence"],
                                                              theirs["params_total_confidence"])
    if both_derived:
        assert mine["params_total"] == pytest.approx(theirs["params_total"], rel=0.01)


@pytest.mark.parametrize("fixture,reg", MATCHES, ids=[f"{f}->{r}" for f, r in MATCHES])
def test_params_active_within_one_percent_where_both_derived(con, fixture, reg):
    mine, theirs = _model(con, imported_id(reg)), _model(con, reg)
    both_derived = mine["params_active_confidence"] == theirs["params_active_confidence"] == "derived"
    assert both_derived == (reg in ACTIVE_COMPARED), (reg, mine["params_active_confidence"],
                                                      theirs["params_active_confidence"])
    if both_derived:
        assert mine["params_active"] == pytest.approx(theirs["params_active"], rel=0.01)
