"""kvreg import-hf: every fixture config imports to a valid entry with hand-checked KV bytes.

Fixtures are config.json files rebuilt from ../shared/data/model_facts.yaml
(tests/fixtures/hf/SOURCES.md).  Expected numbers are written as arithmetic
from the config fields (p = 2 bytes per element, bf16 KV cache), never read
back from the code under test.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvreg.cli import main
from kvreg.importhf import import_config
from kvreg.problems import KvregError
from tests.conftest import ROOT, one
from tests.registry_factory import engine_entry, hardware_entry, write_project

FIX = ROOT / "tests" / "fixtures" / "hf"
FIXTURES = sorted(p.stem for p in FIX.glob("*.json"))
CONTEXTS = (4096, 32768, 131072)
# Falcon-H1's docs table gives no vocab_size or intermediate_size: its count is the published 34B.
# DeepSeek-V4 has no parameter rule: the published 284B (Flash) and 1.6T (Pro) (model card, as
# featherless.ai/models/deepseek-ai/DeepSeek-V4-Flash quotes it: "284 billion total parameters and
# 13 billion activated"; venicestats.com/venice-models/deepseek-v4-flash: "Pro ... 1.6 trillion").
# Nemotron 3 Super: a latent MoE (moe_latent_size) kvreg does not count; the name's 120B.
EXTRA = {"falcon-h1-34b": {"params_total": 34e9}, "deepseek-v4-flash": {"params_total": 284e9},
         "deepseek-v4-pro": {"params_total": 1.6e12},
         "nemotron-3-super-120b-a12b": {"params_total": 120e9}}


def imported(name: str, **kw):
    return import_config(FIX / f"{name}.json", **{**EXTRA.get(name, {}), **kw})


@pytest.fixture(scope="module")
def hfcon():
    """One database over a temp project holding every imported fixture plus the shipped seed entries."""
    from kvreg.build import memory_connection

    root = Path(tempfile.mkdtemp(prefix="kvreg-import-hf-"))
    models = {n: imported(n).entry for n in FIXTURES}
    from kvreg.configfill import filled_data

    for p in (ROOT / "registry" / "models").glob("*.yaml"):
        seed = filled_data(p)  # written in full: its copy has another id, so no config beside it
        seed["id"] = "seed-" + seed["id"]
        models[seed["id"]] = seed
    write_project(root, models, {"hw": hardware_entry("hw")}, {"first-principles": engine_entry()})
    c = memory_connection(root)
    yield c
    c.close()


def seq(con, model, context):
    return one(con, "SELECT * FROM kv_sequence_costs WHERE model_id=? AND kv_dtype='bf16' AND tp=1"
                    " AND context_tokens=?", (model, context))


# Expected per sequence: (growing bytes per token, [(bytes per token, window)], constant state bytes).
# Each line: config fields used, then the arithmetic.  K and V: ×2; bf16: ×2 bytes.
EXPECTED = {
    # num_hidden_layers 32, num_key_value_heads 8, head_dim = 4096/32 = 128
    "llama-3.1-8b": (32 * 2 * 8 * 128 * 2, [], 0),
    # 80 layers × 2 × 8 kv × 128 × 2 B = 327,680 B/token (kv-cache-chapter §2.3)
    "llama-3.1-70b": (80 * 2 * 8 * 128 * 2, [], 0),
    # 126 layers, 8 kv heads, head_dim 16384/128 = 128
    "llama-3.1-405b": (126 * 2 * 8 * 128 * 2, [], 0),
    # sliding_window 4096 on all 32 layers, 8 kv × 128
    "mistral-7b-v0.1": (0, [(32 * 2 * 8 * 128 * 2, 4096)], 0),
    # sliding_window null: 32 full layers
    "mistral-7b-v0.3": (32 * 2 * 8 * 128 * 2, [], 0),
    # use_sliding_window false: 28 full layers, 4 kv × 128 (3584/28)
    "qwen2.5-7b": (28 * 2 * 4 * 128 * 2, [], 0),
    # head_dim 128 explicit (5120/64 would be 80), 64 layers, 8 kv
    "qwen3-32b": (64 * 2 * 8 * 128 * 2, [], 0),
    # MHA 32 kv heads × 96 (3072/32), sliding_window 2047 on all 32 layers
    "phi-3-mini-4k": (0, [(32 * 2 * 32 * 96 * 2, 2047)], 0),
    # 60 layers, 8 kv, 7168/56 = 128
    "yi-34b": (60 * 2 * 8 * 128 * 2, [], 0),
    # MHA: 64 kv heads × 128 (8192/64), 40 layers
    "command-r-v01": (40 * 2 * 64 * 128 * 2, [], 0),
    # 32 layers, 8 kv × 128; experts do not change KV
    "mixtral-8x7b": (32 * 2 * 8 * 128 * 2, [], 0),
    # 94 layers, 4 kv × head_dim 128
    "qwen3-235b-a22b": (94 * 2 * 4 * 128 * 2, [], 0),
    # layer_types [SF]x12: 12 full + 12 sliding (window 128), 8 kv × head_dim 64
    "gpt-oss-20b": (12 * 2 * 8 * 64 * 2, [(12 * 2 * 8 * 64 * 2, 128)], 0),
    # [SF]x18
    "gpt-oss-120b": (18 * 2 * 8 * 64 * 2, [(18 * 2 * 8 * 64 * 2, 128)], 0),
    # Gemma 2 alternates from a sliding layer 0: 21 full + 21 sliding (4096), 8 kv × 256
    "gemma-2-9b": (21 * 2 * 8 * 256 * 2, [(21 * 2 * 8 * 256 * 2, 4096)], 0),
    # sliding_window_pattern 6 over 26 layers: 4 full + 22 sliding (512), 1 kv × 256
    "gemma-3-1b": (4 * 2 * 1 * 256 * 2, [(22 * 2 * 1 * 256 * 2, 512)], 0),
    # gemma-3-4b-it's sparse config: 34 layers, window 1024; heads 8, kv 4, head_dim 256 and 131,072
    # positions are the Gemma3TextConfig defaults; pattern 6 → full at 5, 11, 17, 23, 29: 5 full + 29 sliding
    "gemma-3-4b": (5 * 2 * 4 * 256 * 2, [(29 * 2 * 4 * 256 * 2, 1024)], 0),
    # default pattern 6 over 62 layers: 10 full + 52 sliding (1024), 16 kv × head_dim 128
    "gemma-3-27b": (10 * 2 * 16 * 128 * 2, [(52 * 2 * 16 * 128 * 2, 1024)], 0),
    # 30 layers, last 10 shared; owners 0-19 with full every 5th: 4 full + 16 sliding (512), 2 kv × 256
    "gemma-3n-e2b": (4 * 2 * 2 * 256 * 2, [(16 * 2 * 2 * 256 * 2, 512)], 0),
    # 35 layers, last 15 shared; owners 0-19 with full every 5th: 4 full + 16 sliding (512), 2 kv × 256
    "gemma-3n-e4b": (4 * 2 * 2 * 256 * 2, [(16 * 2 * 2 * 256 * 2, 512)], 0),
    # 35 layers, last 20 shared; owners 0-14 [SSSSF]: 3 full (1 kv × global_head_dim 512) + 12 sliding (1 kv × 256)
    "gemma-4-e2b": (3 * 2 * 1 * 512 * 2, [(12 * 2 * 1 * 256 * 2, 512)], 0),
    # 42 layers, last 18 shared; owners 0-23 [SSSSSF]: 4 full (2 kv × 512) + 20 sliding (2 kv × 256)
    "gemma-4-e4b": (4 * 2 * 2 * 512 * 2, [(20 * 2 * 2 * 256 * 2, 512)], 0),
    # 5 full: num_global_key_value_heads 2 × global_head_dim 512, K=V one tensor; 25 sliding 8 kv × 256 (1024)
    "gemma-4-26b-a4b": (5 * 1 * 2 * 512 * 2, [(25 * 2 * 8 * 256 * 2, 1024)], 0),
    # 10 full: 4 global kv × 512, K=V; 50 sliding: 16 kv × 256, window 1024 (kv-arithmetic-hybrid-attention)
    "gemma-4-31b": (10 * 1 * 4 * 512 * 2, [(50 * 2 * 16 * 256 * 2, 1024)], 0),
    # no layer_types: every 4th of 48 layers global (12), 36 chunked at attention_chunk_size 8192; 8 kv × 128
    "llama-4-scout-17b-16e": (12 * 2 * 8 * 128 * 2, [(36 * 2 * 8 * 128 * 2, 8192)], 0),
    # MLA: 27 layers × (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 B
    "deepseek-v2-lite": (27 * (512 + 64) * 2, [], 0),
    # 61 × 576 × 2 = 70,272 B/token (kv-cache-chapter §2.6)
    "deepseek-v3": (61 * (512 + 64) * 2, [], 0),
    # DSA: the latent plus the lightning indexer's key, 128 fp8 values + one fp32 scale = 132 B,
    # per layer whatever the KV dtype (vLLM deepseek_v2.py Indexer): 61 × (1,152 + 132) = 78,324 B
    "deepseek-v3.2": (61 * ((512 + 64) * 2 + 128 + 4), [], 0),
    # DeepSeek-V4-Flash, compress_ratios (first 43 of 44; the last is the MTP layer): 0 ×2, then 4/128
    # alternating, layer 42 = 4 → 21 layers at 4, 20 at 128.  Every layer: a 128-token sliding window of
    # one 512 vector (K = V, 1 kv head): 43 × 512 × 2 B.  Ratio 4: one 512 entry per 4 tokens plus the
    # indexer key (128 fp8 + 4 B scale) per 4 tokens: (1,024 + 132) / 4 = 289 B/token; ratio 128:
    # 1,024 / 128 = 8 B/token.  State (fp32, bounded): the ratio-4 compressors keep 2·4 tokens ×
    # 2·2·512 (KV) and × 2·2·128 (indexer), ratio 128 keeps 128 tokens × 2·512 (compressor.py).
    "deepseek-v4-flash": (21 * (512 * 2 + 128 + 4) // 4 + 20 * 512 * 2 // 128, [(43 * 512 * 2, 128)],
                          21 * (8 * 2048 * 4 + 8 * 512 * 4) + 20 * 128 * 1024 * 4),
    # DeepSeek-V4-Pro: 61 layers (62 ratios, the last MTP): no sliding-only layer, 30 at ratio 4, 31 at 128;
    # the same per-layer arithmetic as Flash
    "deepseek-v4-pro": (30 * (512 * 2 + 128 + 4) // 4 + 31 * 512 * 2 // 128, [(61 * 512 * 2, 128)],
                        30 * (8 * 2048 * 4 + 8 * 512 * 4) + 31 * 128 * 1024 * 4),
    # GLM-5: 78 MLA layers (512 + 64) plus the same 132 B indexer key
    "glm-5": (78 * ((512 + 64) * 2 + 128 + 4), [], 0),
    # Llama 2: MHA at 7B (32 layers × 32 kv × 128) and 13B (40 × 40 × 128), GQA at 70B (80 × 8 × 128)
    "llama-2-7b": (32 * 2 * 32 * 128 * 2, [], 0),
    "llama-2-13b": (40 * 2 * 40 * 128 * 2, [], 0),
    "llama-2-70b": (80 * 2 * 8 * 128 * 2, [], 0),
    # LFM2: attention at full_attn_idxs [2, 5, 8, 10, 12, 14] (8 kv × 2048/32 = 64), the 10 others short
    # convolutions whose state is (conv_L_cache 3 − 1) × 2048 in bf16 (vLLM short_conv_state_shape)
    "lfm2-1.2b": (6 * 2 * 8 * 64 * 2, [], 10 * 2 * 2048 * 2),
    # LFM2-350M from layer_types: the same layout at 1024 wide (16 heads of 64, 8 kv)
    "lfm2-350m": (6 * 2 * 8 * 64 * 2, [], 10 * 2 * 1024 * 2),
    # Kimi-K3 (kimi_linear text backbone): 24 MLA layers (512 + 64) and 69 Kimi Delta Attention layers whose
    # state is q, k, v conv windows 3 × (96·128) bf16 plus a 96 × 128 × 128 fp32 recurrent state (vLLM kda_state_shape)
    "kimi-k3": (24 * (512 + 64) * 2, [], 69 * (3 * 3 * 96 * 128 * 2 + 96 * 128 * 128 * 4)),
    # Kimi-Linear-48B-A3B: linear_attn_config full_attn_layers (1-based) 4, 8, …, 24, 27 → 7 MLA layers of
    # (512 + 64) × 2 B; the 20 kda_layers keep q, k, v conv windows (4 − 1) × 32·128 bf16 and a
    # 32 × 128 × 128 fp32 state each (vLLM kda_state_shape / kda_state_dtype)
    "kimi-linear-48b-a3b": (7 * (512 + 64) * 2, [], 20 * (3 * 3 * 32 * 128 * 2 + 32 * 128 * 128 * 4)),
    "kimi-k2": (61 * (512 + 64) * 2, [], 0),
    # Phi-2, the remote-code phi-msft spelling: n_layer 32, n_head 32, n_head_kv null (MHA), head_dim
    # n_embd 2560 / 32 = 80 → 327,680 B/token, the vLLM 0.19.0 H100 log's 69.0 GiB / 226,112 tokens
    "phi-2": (32 * 2 * 32 * 80 * 2, [], 0),
    # StarCoder2-7B: sliding_window 4096 on all 32 layers, 4 kv × 4608/36 = 128
    "starcoder2-7b": (0, [(32 * 2 * 4 * 128 * 2, 4096)], 0),
    # OLMo-2-7B: MHA, 32 layers × 32 kv × 4096/32 = 128
    "olmo2-7b": (32 * 2 * 32 * 128 * 2, [], 0),
    # GLM-4.7 (glm4_moe; aiconfigurator's trimmed copy): 92 full layers, 8 kv × head_dim 128
    "glm-4.7": (92 * 2 * 8 * 128 * 2, [], 0),
    # Nemotron 3 Super (verbatim FP8 config): hybrid_override_pattern of 88 blocks, 8 '*' attention
    # (2 kv × 128), 40 'M' Mamba-2: ssm 128 heads × 64 × state 128 in fp32 (mamba_ssm_cache_dtype float32),
    # conv (4 − 1) × (128·64 + 2·8 groups·128) bf16 (no torch_dtype: bf16); 40 'E' MoE blocks store nothing;
    # mtp_hybrid_override_pattern (the MTP module) left out
    "nemotron-3-super-120b-a12b": (8 * 2 * 2 * 128 * 2, [],
                                   40 * (128 * 64 * 128 * 4 + 3 * (128 * 64 + 2 * 8 * 128) * 2)),
    # Granite 3.3 8B: 40 layers × 8 kv × 4096/32 = 128 → 163,840 B/token, what the vLLM 0.19.0 H100 log
    # measured (58.66 GiB for 384,432 tokens)
    "granite-3.3-8b": (40 * 2 * 8 * 128 * 2, [], 0),
    # SmolLM3-3B: no_rope_layers (every 4th layer NoPE) changes no storage: 36 full layers, 4 kv × 128
    "smollm3-3b": (36 * 2 * 4 * 128 * 2, [], 0),
    # MiniMax-M2.5 / M2.7: attn_type_list all 1 → 62 full layers, 8 kv × head_dim 128
    "minimax-m2.5": (62 * 2 * 8 * 128 * 2, [], 0),
    "minimax-m2.7": (62 * 2 * 8 * 128 * 2, [], 0),
    "deepseek-r1": (61 * (512 + 64) * 2, [], 0),
    # full_attention_interval 4 over 48 layers: 12 full (2 kv × 256) + 36 Gated DeltaNet;
    # state per linear layer: ssm 32 Hv × 128 dk × 128 dv, no mamba_ssm_dtype → bf16;
    # conv (4−1) × (2·16·128 + 32·128) bf16
    "qwen3-next-80b-a3b": (12 * 2 * 2 * 256 * 2, [], 36 * (32 * 128 * 128 * 2 + 3 * (2 * 16 * 128 + 32 * 128) * 2)),
    # layer_types [LLLF]x16: 16 full (4 kv × 256) + 48 DeltaNet: ssm 48×128×128 fp32 (3 MiB), conv 3 × 10,240 bf16
    "qwen3.6-27b": (16 * 2 * 4 * 256 * 2, [], 48 * (48 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 48 * 128) * 2)),
    # [LLLF]x10: 10 full (2 kv × 256) + 30 DeltaNet: ssm 32×128×128 fp32, conv 3 × (2·16·128 + 32·128) bf16
    "qwen3.5-35b-a3b": (10 * 2 * 2 * 256 * 2, [], 30 * (32 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 32 * 128) * 2)),
    # hybrid_override_pattern: 10 '*' (8 kv × attention_head_dim 128), 54 'M' Mamba-2:
    # ssm 256 heads × 64 head_dim × 256 state, fp32 (no mamba_ssm_cache_dtype: vLLM's NemotronH default, registry/README.md);
    # conv (4−1) × (256·64 + 2·8 groups·256) bf16
    "nemotron-h-56b": (10 * 2 * 8 * 128 * 2, [], 54 * (256 * 64 * 256 * 4 + 3 * (256 * 64 + 2 * 8 * 256) * 2)),
    # hybrid_override_pattern MEMEM*E…: 6 '*' (2 kv × head_dim 128), 23 'M' Mamba-2, 23 'E' MoE-only (no cache):
    # ssm 64 heads × 64 head_dim × 128 state in fp32 (mamba_ssm_cache_dtype float32); conv (4−1) × (64·64 + 2·8·128) bf16
    "nemotron-3-nano-30b-a3b": (6 * 2 * 2 * 128 * 2, [], 23 * (64 * 64 * 128 * 4 + 3 * (64 * 64 + 2 * 8 * 128) * 2)),
    # attn_layer_period 8 offset 4: 4 attention (8 kv × 128); 28 Mamba-1: I = 2·4096; ssm I × 16, conv 3 × I, bf16
    "jamba-1.5-mini": (4 * 2 * 8 * 128 * 2, [], 28 * (8192 * 16 * 2 + 3 * 8192 * 2)),
    # 4 attention (4 kv × 1536/12 = 128) + 36 Mamba-2: 48 heads × head_dim 2·1536/48 = 64 × state 128;
    # conv (4−1) × (48·64 + 2·1·128) — groups 1 and kernel 4 are transformers defaults; bf16
    "granite-4.0-h-tiny": (4 * 2 * 4 * 128 * 2, [], 36 * (48 * 64 * 128 * 2 + 3 * (48 * 64 + 2 * 1 * 128) * 2)),
    # every one of 72 layers has attention (4 kv × 128) AND Mamba-2: 32 heads × 128 × state 256;
    # conv (4−1) × (32·128 + 2·1·256) — groups 1, kernel 4 are transformers defaults; bf16
    "falcon-h1-34b": (72 * 2 * 4 * 128 * 2, [], 72 * (32 * 128 * 256 * 2 + 3 * (32 * 128 + 2 * 1 * 256) * 2)),
    # the configs shipped in the fifth session (registry/models/CONFIGS.md):
    # 48 layers, sliding_window_pattern 6 → every 6th global: 8 full + 40 sliding (W 1,024), 8 kv × head_dim 256
    "gemma-3-12b": (8 * 2 * 8 * 256 * 2, [(40 * 2 * 8 * 256 * 2, 1024)], 0),
    # the same config with the pattern spelled _sliding_window_pattern (newer transformers): the same layers
    "gemma-3-12b-resaved": (8 * 2 * 8 * 256 * 2, [(40 * 2 * 8 * 256 * 2, 1024)], 0),
    # layer_types: 4 attention (8 kv × 4096/32 = 128) + 36 Mamba-2: 128 heads × head_dim 2·4096/128 = 64 × state
    # 128; conv (4−1) × (128·64 + 2·1·128) — groups 1 is the transformers default; bf16 (as granite-4.0-h-tiny)
    "granite-4.0-h-small": (4 * 2 * 8 * 128 * 2, [], 36 * (128 * 64 * 128 * 2 + 3 * (128 * 64 + 2 * 1 * 128) * 2)),
    # hybrid_override_pattern: 4 '*' attention (8 kv × 4096/32 = 128) + 24 'M' Mamba-2: 128 heads × 64 × state 128
    # in fp32 (NemotronHConfig's mamba_ssm_cache_dtype default, as nemotron-h-56b); conv (4−1) × (128·64 + 2·8·128) bf16
    "nemotron-h-8b": (4 * 2 * 8 * 128 * 2, [], 24 * (128 * 64 * 128 * 4 + 3 * (128 * 64 + 2 * 8 * 128) * 2)),
    # 40 layers, 10 kv heads, head_dim 5120/40 = 128 (sliding_window null)
    "phi-4": (40 * 2 * 10 * 128 * 2, [], 0),
    # 24 layers, 2 kv heads, head_dim 896/14 = 64; use_sliding_window false → every layer full
    "qwen2.5-0.5b": (24 * 2 * 2 * 64 * 2, [], 0),
    # 40 layers, 8 kv heads, head_dim 128 (explicit)
    "qwen3-14b": (40 * 2 * 8 * 128 * 2, [], 0),
    # 30 layers, all sliding (sliding_window 4,096), 2 kv heads, head_dim 3072/24 = 128
    "starcoder2-3b": (0, [(30 * 2 * 2 * 128 * 2, 4096)], 0),
}


def test_every_fixture_has_expected_numbers():
    assert sorted(EXPECTED) == FIXTURES


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_imports_and_validates(name):
    from kvreg.schema.model import ModelEntry

    r = imported(name)
    entry = ModelEntry.model_validate(r.entry)
    assert entry.id == name
    assert r.entry["sources"][0]["title"].startswith("config.json (")
    assert r.text.startswith("# yaml-language-server: $schema=../../kvreg/schemas/model.schema.json\n")
    assert yaml.safe_load(r.text) == r.entry


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("context", CONTEXTS)
def test_fixture_bytes_per_token_and_sequence(hfcon, name, context):
    growing, bounded, state = EXPECTED[name]
    r = seq(hfcon, name, context)
    assert r["growing_token_bytes"] == growing
    assert r["state_bytes"] == state
    assert r["seq_bytes"] == growing * context + sum(b * min(context, w) for b, w in bounded) + state


# --- round trip: the seed entries written by hand ---------------------------------------------------

@pytest.mark.parametrize("fixture,seed", [("gemma-4-31b", "gemma-4-31b"), ("qwen3.6-27b", "qwen3.8-27b"),
                                          ("llama-3.1-70b", "llama-3.1-70b"), ("deepseek-v3", "deepseek-v3"),
                                          ("llama-3.1-8b", "llama-3.1-8b"), ("llama-3.1-405b", "llama-3.1-405b")])
def test_round_trip_reproduces_seed_entries(hfcon, fixture, seed):
    cols = ("growing_token_bytes", "bounded_bytes", "state_bytes", "conv_state_bytes", "seq_bytes",
            "naive_token_bytes", "naive_seq_bytes")
    for ctx in (4096, 32768, 131072, 262144):
        a, b = seq(hfcon, fixture, ctx), seq(hfcon, "seed-" + seed, ctx)
        assert {c: a[c] for c in cols} == {c: b[c] for c in cols}, ctx


def test_round_trip_gemma4_31b_groups():
    g = imported("gemma-4-31b").entry["layer_groups"]
    assert [(x["kind"], x["count"]) for x in g] == [("sliding", 50), ("full", 10)]
    assert g[1]["kv_heads"] == 4 and g[1]["head_dim"] == 512 and g[1]["k_eq_v"] is True


def test_round_trip_qwen36_state_3_mib_fp32(hfcon):
    g = imported("qwen3.6-27b").entry["layer_groups"]
    assert [(x["kind"], x["count"]) for x in g] == [("recurrent", 48), ("full", 16)]
    ssm = g[0]["state"][0]
    assert ssm == {"role": "ssm", "shape": [48, 128, 128], "dtype": "fp32"}
    row = one(hfcon, "SELECT * FROM kv_layer_costs WHERE model_id='qwen3.6-27b' AND kind='recurrent'"
                     " AND kv_dtype='bf16' AND tp=1")
    assert row["state_bytes"] - row["conv_state_bytes"] == 3 * 2**20


def test_round_trip_llama70b_and_deepseek_per_token(hfcon):
    assert seq(hfcon, "llama-3.1-70b", 32768)["growing_token_bytes"] == 327_680
    assert seq(hfcon, "deepseek-v3", 32768)["growing_token_bytes"] == 70_272


# --- the mistakes seen in the wild ------------------------------------------------------------------

def test_head_dim_not_hidden_over_heads(hfcon):
    g = imported("qwen3-32b").entry["layer_groups"]
    assert g == [{"kind": "full", "count": 64, "kv_heads": 8, "head_dim": 128, "note": "layers 0-63"}]
    assert 5120 // 64 == 80  # what hidden/heads would have given
    assert seq(hfcon, "qwen3-32b", 4096)["growing_token_bytes"] == 64 * 2 * 8 * 128 * 2 != 64 * 2 * 8 * 80 * 2


def test_gpt_oss_sliding_layers_counted(hfcon):
    g = imported("gpt-oss-20b").entry["layer_groups"]
    assert g[0]["kind"] == "sliding" and g[0]["window"] == 128 and g[0]["count"] == 12
    assert g[0]["note"] == "layers 0-22 step 2"  # alternation starts with a sliding layer 0
    r = seq(hfcon, "gpt-oss-20b", 131072)
    assert r["bounded_bytes"] == 12 * 2 * 8 * 64 * 2 * 128
    assert r["seq_bytes"] < r["naive_seq_bytes"] / 1.9


def test_gemma3n_shared_layers_store_nothing(hfcon):
    g = imported("gemma-3n-e2b").entry["layer_groups"]
    shared = [x for x in g if x["kind"] == "shared"]
    assert sum(x["count"] for x in shared) == 10
    assert {x["reuses"] for x in shared} == {"layer 18 (sliding)", "layer 19 (full)"}
    rows = hfcon.execute("SELECT token_bytes, state_bytes FROM kv_layer_costs WHERE model_id='gemma-3n-e2b'"
                         " AND kind='shared' AND kv_dtype='bf16' AND tp=1").fetchall()
    assert rows and all(r == (0.0, 0.0) for r in rows)


def test_gemma4_small_shared_tail_and_global_head_dim():
    g = imported("gemma-4-e4b").entry["layer_groups"]
    owners = {x["kind"]: x for x in g if x["kind"] != "shared"}
    assert owners["full"]["count"] == 4 and owners["full"]["head_dim"] == 512 and "k_eq_v" not in owners["full"]
    assert owners["sliding"]["count"] == 20
    assert sum(x["count"] for x in g if x["kind"] == "shared") == 18


def test_moe_weights_use_total_params(hfcon):
    e = imported("mixtral-8x7b").entry
    assert e["params_total"]["value"] == 46_702_792_704      # model_facts params_computed
    assert e["params_active"]["value"] == 12_879_925_248
    assert e["moe"] == {"experts": 8, "experts_per_token": 2, "shared_experts": 0}
    w = one(hfcon, "SELECT weights_bytes FROM model_weights WHERE model_id='mixtral-8x7b' AND weights_dtype='bf16'")
    assert w["weights_bytes"] == 46_702_792_704 * 2


def test_qwen25_use_sliding_window_false_means_full(tmp_path):
    e = imported("qwen2.5-7b").entry
    assert [x["kind"] for x in e["layer_groups"]] == ["full"]
    assert e["notes"] == "sliding_window 131072 not applied: use_sliding_window is False."
    cfg = json.loads((FIX / "qwen2.5-7b.json").read_text())
    cfg.update(use_sliding_window=True, max_window_layers=20)   # transformers: layers ≥ 20 then slide
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    g = import_config(tmp_path / "config.json").entry["layer_groups"]
    assert [(x["kind"], x["count"]) for x in g] == [("full", 20), ("sliding", 8)]


def test_hybrid_recurrent_layers_not_charged_kv(hfcon):
    rows = dict(hfcon.execute("SELECT kind, token_bytes FROM kv_layer_costs WHERE model_id='qwen3-next-80b-a3b'"
                              " AND kv_dtype='bf16' AND tp=1").fetchall())
    assert rows == {"recurrent": 0.0, "full": 2 * 2 * 256 * 2}
    r = seq(hfcon, "qwen3-next-80b-a3b", 131072)
    assert r["growing_token_bytes"] == 12 * 2 * 2 * 256 * 2   # 12 of 48 layers, not 48


def test_mla_not_undercounted(hfcon):
    e = imported("deepseek-v3").entry
    g = e["layer_groups"][0]
    assert (g["kind"], g["kv_lora_rank"], g["qk_rope_head_dim"]) == ("mla", 512, 64)
    r = seq(hfcon, "deepseek-v3", 4096)
    assert r["growing_token_bytes"] == 61 * (512 + 64) * 2 > 61 * 512 * 2     # the rope key is cached too
    assert r["naive_token_bytes"] == 61 * 128 * (192 + 128) * 2              # decompressed, naive column only


def test_mistral_v01_slides_on_every_layer():
    g = imported("mistral-7b-v0.1").entry["layer_groups"]
    assert g == [{"kind": "sliding", "count": 32, "kv_heads": 8, "head_dim": 128, "window": 4096,
                  "note": "layers 0-31"}]


def test_llama4_chunked_layers_derived_without_layer_types():
    r = imported("llama-4-scout-17b-16e")
    g = r.entry["layer_groups"]
    assert [(x["kind"], x["count"]) for x in g] == [("chunked", 36), ("full", 12)]
    assert g[0]["chunk"] == 8192 and g[1]["note"] == "layers 3-47 step 4"
    assert "layer_groups" in r.entry["derived_fields"] and "no_rope_layer_interval" in r.derived["layer_groups"]


def test_falcon_h1_attention_and_mamba_in_same_layer():
    r = imported("falcon-h1-34b")
    g = r.entry["layer_groups"]
    assert r.entry["layers"] == 72
    assert [(x["kind"], x["count"], x.get("shares_layers", False)) for x in g] == [
        ("full", 72, False), ("recurrent", 72, True)]
    # conv kernel and n_groups are not in model_facts: defaults are marked, not silent
    assert "layer_groups.state.conv" in r.entry["derived_fields"]
    assert "mamba_d_conv" in r.entry["notes"] and "mamba_n_groups" in r.entry["notes"]


def test_nemotron_h_mlp_blocks_are_layers_that_store_nothing(hfcon):
    # hybrid_override_pattern of 118 characters: 54 'M', 10 '*', 54 '-' -> layers = num_hidden_layers = 118,
    # the 54 '-' blocks a group of kind mlp (schema: no mixer, no cache), not dropped from the count.
    r = imported("nemotron-h-56b")
    assert r.entry["layers"] == 118
    assert sorted((g["kind"], g["count"]) for g in r.entry["layer_groups"]) == [
        ("full", 10), ("mlp", 54), ("recurrent", 54)]
    mlp = next(g for g in r.entry["layer_groups"] if g["kind"] == "mlp")
    assert set(mlp) == {"kind", "count", "note"}          # no geometry: it stores nothing
    assert "no sequence mixer" in r.entry["notes"]
    rows = hfcon.execute("SELECT token_bytes, state_bytes, naive_token_bytes FROM kv_layer_costs"
                         " WHERE model_id='nemotron-h-56b' AND kind='mlp'").fetchall()
    assert rows and set(rows) == {(0.0, 0, None)}


def test_nemotron_h_experts_are_plain_mlps(tmp_path):
    # Nemotron-H MLPs are up/down (relu2), experts included: one more routed expert adds, in each of the
    # 23 'E' blocks, up 2688·1856 + down 1856·2688 + one router row of 2688 — not a gated 3·h·I.
    cfg = json.loads((FIX / "nemotron-3-nano-30b-a3b.json").read_text())
    base = imported("nemotron-3-nano-30b-a3b").entry["params_total"]["value"]
    cfg["n_routed_experts"] += 1
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    more = import_config(tmp_path / "config.json").entry["params_total"]["value"]
    assert more - base == 23 * (2 * 2688 * 1856 + 2688)


def test_nemotron_h_moe_blocks_are_mlp_layers(tmp_path):
    # 'E' (MoE-only) blocks have no sequence mixer either: same layer plan as '-' blocks.
    cfg = json.loads((FIX / "nemotron-h-56b.json").read_text())
    cfg["hybrid_override_pattern"] = cfg["hybrid_override_pattern"].replace("-", "E")
    cfg.update(n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    e = import_config(tmp_path / "config.json").entry
    assert e["layers"] == 118
    assert sorted((g["kind"], g["count"]) for g in e["layer_groups"]) == [("full", 10), ("mlp", 54), ("recurrent", 54)]


def test_jamba_attention_period_and_offset():
    g = imported("jamba-1.5-mini").entry["layer_groups"]
    assert g[1] == {"kind": "full", "count": 4, "kv_heads": 8, "head_dim": 128, "note": "layers 4-28 step 8"}
    assert g[0]["variant"] == "mamba1" and g[0]["state"][0]["shape"] == [8192, 16]


# --- parameter counts against published figures ------------------------------------------------------

@pytest.mark.parametrize("name,total,active", [
    ("llama-3.1-8b", 8_030_261_248, None),        # model_facts params_computed; published 8.03B
    ("llama-3.1-70b", 70_553_706_496, None),      # published 70.6B
    ("llama-3.1-405b", 405_853_388_800, None),    # published 405.9B
    ("qwen3-235b-a22b", 235_093_634_560, 22_190_763_520),
    ("deepseek-v3", 671_026_419_200, 37_552_282_624),   # published 671B / 37B (MTP excluded)
    ("deepseek-r1", 671_026_419_200, 37_552_282_624),
    ("mixtral-8x7b", 46_702_792_704, 12_879_925_248),   # ~46.7B
    ("deepseek-v2-lite", 15_706_484_224, 2_661_150_208),
    ("qwen3-32b", 32_762_123_264, None),
    ("qwen2.5-7b", 7_615_616_512, None),
    ("yi-34b", 34_388_917_248, None),
])
def test_params_match_model_facts(name, total, active):
    e = imported(name).entry
    assert abs(e["params_total"]["value"] - total) <= 0.01 * total
    if active:
        assert abs(e["params_active"]["value"] - active) <= 0.01 * active
    assert e["params_total"]["confidence"] == "derived" and "params_total" in e["derived_fields"]


@pytest.mark.parametrize("name,total", [
    ("llama-3.1-8b", 8_030_261_248), ("llama-3.1-70b", 70_553_706_496), ("llama-3.1-405b", 405_853_388_800),
    ("qwen3-235b-a22b", 235_093_634_560), ("deepseek-v3", 671_026_419_200), ("mixtral-8x7b", 46_702_792_704),
    ("deepseek-v2-lite", 15_706_484_224), ("qwen3-32b", 32_762_123_264), ("qwen2.5-7b", 7_615_616_512),
    ("yi-34b", 34_388_917_248), ("kimi-k2", 1_026_408_232_448)])
def test_params_total_exact_as_model_facts(name, total):
    # model_facts params_computed: the same components counted from the same config dims
    assert imported(name).entry["params_total"]["value"] == total


def test_kimi_linear_params_equal_the_checkpoint_tensors():
    # 49,122,681,728: the parameter total of the 20 safetensors files of moonshotai/Kimi-Linear-48B-A3B-Instruct
    # (a public model-info report, SOURCES.md); it includes 26 MoE layers × 256 e_score_correction_bias
    # values, which sigmoid routing (moe_router_activation_func) carries.
    e = imported("kimi-linear-48b-a3b").entry
    assert e["params_total"]["value"] == 49_122_681_728
    assert e["native_context"] == {"value": 1_048_576, "source": "config", "confidence": "read",
                                   "note": "model_max_length"}


def test_deepseek_v3_active_counts_router_bias():
    # model_facts active 37,552,282,624 leaves out the 58 MoE layers × 256 e_score_correction_bias values
    assert imported("deepseek-v3").entry["params_active"]["value"] == 37_552_282_624 + 58 * 256


def test_published_totals_within_one_percent():
    for name, published in [("llama-3.1-70b", 70.6e9), ("llama-3.1-405b", 405.9e9), ("deepseek-v3", 671e9),
                            ("mixtral-8x7b", 46.7e9), ("qwen3-235b-a22b", 235e9), ("gpt-oss-120b", 116.8e9),
                            ("gpt-oss-20b", 20.9e9)]:
        assert abs(imported(name).entry["params_total"]["value"] / published - 1) < 0.01, name


# --- failures are loud ----------------------------------------------------------------------------

def test_unknown_architecture_fails_with_fields_and_hint(tmp_path):
    # MiMo-V2-Flash (XiaomiMiMo--MiMo-V2-Flash_config.json in aiconfigurator, keys trimmed): sliding layers
    # with their own head counts (swa_*) and a hybrid_layer_pattern — no family rule reads them, so the
    # importer refuses and names the memory keys it could not interpret.
    cfg = {"architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 4096,
           "num_hidden_layers": 48, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192,
           "v_head_dim": 128, "sliding_window": 128, "swa_num_key_value_heads": 8,
           "hybrid_layer_pattern": [0] + [1] * 47, "max_position_embeddings": 262144}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    p = err.value.problems[0]
    assert p.code == "unsupported-architecture"
    assert "mimo_v2_flash" in p.message and "MiMoV2FlashForCausalLM" in p.message
    assert "hybrid_layer_pattern" in p.message and "sliding_window" in p.message
    assert "by hand" in p.hint


def test_deepseek_v4_groups_and_refusals(tmp_path):
    # Layer plan of the verbatim DeepSeek-V4-Flash config: a sliding window on all 43 layers; compressed KV
    # (and compressor state) on the 21 ratio-4 and 20 ratio-128 layers, inside those layers (shares_layers);
    # each compressor-state group names its compressor's ratio (the engine sizes that state's block by it).
    g = imported("deepseek-v4-flash").entry["layer_groups"]
    assert [(x["kind"], x["count"], x.get("compress"), x.get("shares_layers", False)) for x in g] == [
        ("sliding", 43, None, False), ("full", 21, 4, True), ("recurrent", 21, 4, True),
        ("full", 20, 128, True), ("recurrent", 20, 128, True)]
    assert g[1]["index_head_dim"] == 128 and "index_head_dim" not in g[3]
    assert g[1]["note"] == "layers 2-42 step 2" and g[3]["note"] == "layers 3-41 step 2"
    cfg = json.loads((FIX / "deepseek-v4-flash.json").read_text())
    # No parameter rule: without --params-total the import says what to pass.
    with pytest.raises(KvregError) as err:
        import_config(FIX / "deepseek-v4-flash.json")
    assert err.value.problems[0].code == "missing-dimension" and "--params-total" in err.value.problems[0].hint
    # The upstream transformers spelling (layer_types + compress_rates) gives the same layers.
    names = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}
    alt = {k: v for k, v in cfg.items() if k != "compress_ratios"}
    alt["layer_types"] = [names[r] for r in cfg["compress_ratios"][:43]]
    alt["compress_rates"] = {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}
    (tmp_path / "alt.json").write_text(json.dumps(alt))
    assert import_config(tmp_path / "alt.json", params_total=284e9).entry["layer_groups"] == g
    # A ratio vLLM's compressor does not take is refused, never priced.
    cfg["compress_ratios"][5] = 16
    (tmp_path / "bad.json").write_text(json.dumps(cfg))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "bad.json", params_total=284e9)
    p = err.value.problems[0]
    assert p.code == "unsupported-architecture" and "[16]" in p.message and p.key == "compress_ratios"


def test_underscore_sliding_window_pattern_is_the_same_rule(tmp_path):
    # Gemma 3 12B, 48 layers, pattern 6 spelled _sliding_window_pattern: full where (i + 1) % 6 == 0, i.e. layers
    # 5, 11, …, 47 = 8 full, the other 40 sliding (window 1,024); the groups are gemma-3-12b's exactly.
    g = imported("gemma-3-12b-resaved").entry["layer_groups"]
    assert [(x["kind"], x["count"], x.get("window")) for x in g] == [("sliding", 40, 1024), ("full", 8, None)]
    assert g == imported("gemma-3-12b").entry["layer_groups"]
    cfg = json.loads((FIX / "gemma-3-12b-resaved.json").read_text())
    # Pattern 4 under the new spelling moves the layers: 48 / 4 = 12 full, 36 sliding.
    cfg["text_config"]["_sliding_window_pattern"] = 4
    (tmp_path / "p4.json").write_text(json.dumps(cfg))
    g4 = import_config(tmp_path / "p4.json").entry["layer_groups"]
    assert sorted((x["kind"], x["count"]) for x in g4) == [("full", 12), ("sliding", 36)]
    # With layer_types the pattern is superseded but still read (not an uninterpreted key).
    cfg["text_config"]["_sliding_window_pattern"] = 6
    cfg["text_config"]["layer_types"] = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention"
                                         for i in range(48)]
    (tmp_path / "lt.json").write_text(json.dumps(cfg))
    assert import_config(tmp_path / "lt.json").entry["layer_groups"] == g
    # Both spellings, disagreeing: refused, naming both values.
    del cfg["text_config"]["layer_types"]
    cfg["text_config"]["sliding_window_pattern"] = 4
    (tmp_path / "two.json").write_text(json.dumps(cfg))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "two.json")
    p = err.value.problems[0]
    assert "sliding_window_pattern 4" in p.message and "_sliding_window_pattern 6" in p.message


def test_uninterpreted_memory_key_fails(tmp_path):
    cfg = json.loads((FIX / "llama-3.1-8b.json").read_text())
    cfg["compress_ratios"] = [0, 4, 128] * 10 + [0, 4]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    assert err.value.problems[0].code == "uninterpreted-field"
    assert "compress_ratios" in err.value.problems[0].message


def test_unknown_layer_type_fails(tmp_path):
    cfg = json.loads((FIX / "gpt-oss-20b.json").read_text())
    cfg["layer_types"][3] = "sparse_attention"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    assert "sparse_attention" in err.value.problems[0].message


def test_explain_lists_fields_read_but_not_used():
    r = imported("gemma-3n-e2b")
    assert "text_config.altup_num_inputs" in r.unused and "text_config.laurel_rank" in r.unused
    assert "text_config.num_kv_shared_layers" not in r.unused
    assert "altup_num_inputs" in r.explain()


# --- the command ----------------------------------------------------------------------------------

def test_cli_writes_refuses_overwrite_and_forces(tmp_path):
    runner = CliRunner()
    args = ["import-hf", str(FIX / "llama-3.1-8b.json"), "--hf-id", "meta-llama/Llama-3.1-8B", "--out", str(tmp_path)]
    r = runner.invoke(main, args)
    assert r.exit_code == 0, r.output
    path = tmp_path / "llama-3.1-8b.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../../kvreg/schemas/model.schema.json\n")
    e = yaml.safe_load(text)
    assert e["hf_id"] == "meta-llama/Llama-3.1-8B"
    assert e["sources"][0]["url"] == "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json"
    r = runner.invoke(main, args)
    assert r.exit_code == 1 and "entry-exists" in r.output
    assert runner.invoke(main, args + ["--force"]).exit_code == 0
    assert [p.name for p in tmp_path.iterdir()] == ["llama-3.1-8b.yaml"]  # no temp files left behind


def test_cli_stdout_weights_index_and_explain(tmp_path):
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 16060522496}, "weight_map": {}}))
    r = CliRunner().invoke(main, ["import-hf", str(FIX / "llama-3.1-8b.json"), "--id", "l8", "--stdout",
                                  "--weights-index", str(index), "--explain"])
    assert r.exit_code == 0, r.output
    assert "read from config.json but not used:" in r.output and "rope_scaling" in r.output
    body = r.output[r.output.index("# yaml-language-server"):]
    e = yaml.safe_load(body)
    assert e["id"] == "l8"
    assert e["checkpoints"] == [{"weights_dtype": "bf16",
                                 "bytes": {"value": 16060522496, "source": "index", "confidence": "read",
                                           "note": "model.safetensors.index.json metadata.total_size"}}]
    assert e["tied_embeddings"] is False
    assert not list(tmp_path.glob("*.yaml"))


def test_cli_unsupported_exits_1(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mystery", "architectures": ["MysteryLM"],
                                                      "num_hidden_layers": 2, "sliding_window": 5}))
    r = CliRunner().invoke(main, ["import-hf", str(tmp_path / "config.json"), "--stdout"])
    assert r.exit_code == 1
    assert "unsupported-architecture" in r.output and "mystery" in r.output and "sliding_window" in r.output


def test_nemotron_h_new_style_layers_block_type_matches_pattern(tmp_path):
    cfg = json.loads((FIX / "nemotron-h-56b.json").read_text())
    names = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}   # NemotronHConfig mapping
    cfg["layers_block_type"] = [names[c] for c in cfg.pop("hybrid_override_pattern")]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    new, old = import_config(tmp_path / "config.json").entry, imported("nemotron-h-56b").entry
    assert new["layer_groups"] == old["layer_groups"] and new["params_total"] == old["params_total"]


def test_granite_without_layer_types_is_all_mamba_and_marked_derived(tmp_path):
    cfg = json.loads((FIX / "granite-4.0-h-tiny.json").read_text())
    del cfg["layer_types"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    r = import_config(tmp_path / "config.json")
    assert [(g["kind"], g["count"]) for g in r.entry["layer_groups"]] == [("recurrent", 40)]
    assert "every layer Mamba" in r.derived["layer_groups"]


def test_window_longer_than_native_context_is_full(tmp_path):
    # Phi-3-mini-128k style: sliding_window 262144 > max_position_embeddings 131072 never bounds a layer.
    cfg = json.loads((FIX / "phi-3-mini-4k.json").read_text())
    cfg.update(sliding_window=262144, max_position_embeddings=131072)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    r = import_config(tmp_path / "config.json")
    assert [(g["kind"], g["count"]) for g in r.entry["layer_groups"]] == [("full", 32)]
    assert "exceeds max_position_embeddings" in r.derived["layer_groups"]


def test_null_memory_keys_are_not_uninterpreted(tmp_path):
    cfg = json.loads((FIX / "nemotron-h-56b.json").read_text())
    cfg["sliding_window"] = None   # as in the NemotronH configs on the hub
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert import_config(tmp_path / "config.json").entry["layers"] == 118


def test_gpt_oss_mxfp4_experts_priced_in_mxfp4(tmp_path):
    e = imported("gpt-oss-20b").entry
    assert e["dtype"] == "mxfp4"
    assert e["checkpoints"] == [{"weights_dtype": "mxfp4", "quantization": {
        "method": "mxfp4", "weight_bits": 4, "group_size": 32, "scale_dtype": "fp8", "quantized": ["mlp"]}}]
    assert "checkpoints" in e["derived_fields"]
    # Priced in SQL by the per-tensor rule: routed experts at 0.53125 B, everything else bf16.
    # routed experts: 24 layers × 32 experts × (gate_up 2880·5760 + bias 5760 + down 2880·2880 + bias 2880)
    routed = 24 * 32 * (2880 * 5760 + 5760 + 2880 * 2880 + 2880)
    assert routed == 19_116_933_120
    rest = e["params_total"]["value"] - routed          # attention, router, norms, embeddings, head: bf16
    write_project(tmp_path, models={"gpt-oss-20b-imp": {**e, "id": "gpt-oss-20b-imp"}})
    from kvreg.build import memory_connection

    con = memory_connection(tmp_path)
    w = con.execute("SELECT weights_bytes, checkpoint_basis FROM model_weights WHERE model_id='gpt-oss-20b-imp' "
                    "AND weights_dtype='mxfp4'").fetchone()
    assert w[1] == "rule"
    # the rule's closure puts expert biases and attention sinks with the experts (kvreg/weights.py)
    assert w[0] == pytest.approx(routed * 0.53125 + rest * 2, rel=0.002)


def test_quantization_configs_priced_per_group():
    from kvreg.importhf.checkpoint import quantization

    # ModelOpt NVFP4 excluding every attention and linear-attention module (Qwen3.5-MoE style)
    dtype, q, notes = quantization({"quant_method": "modelopt", "quantization": {
        "quant_algo": "NVFP4", "group_size": 16,
        "exclude_modules": ["lm_head", "model.visual*", "*.self_attn*", "*.linear_attn*", "*mlp.gate"]}}, 40, "bf16")
    assert dtype == "nvfp4" and q == {"method": "modelopt", "weight_bits": 4, "group_size": 16, "scale_dtype": "fp8",
                                      "quantized": ["mlp"]} and not notes
    # llm-compressor W4A16 (group 128, symmetric) → int4 with bf16 group scales
    dtype, q, _ = quantization({"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {
        "group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                                       "group_size": 128, "symmetric": True}}}}, 32, "bf16")
    assert dtype == "int4" and q == {"method": "compressed-tensors", "weight_bits": 4, "scale_dtype": "bf16",
                                     "group_size": 128}
    # DeepSeek/Qwen block fp8
    assert quantization({"quant_method": "fp8", "weight_block_size": [128, 128]}, 48, "bf16")[1]["group_size"] == 16384
    # AWQ keeps zero points; a partial exclusion is named, not silently dropped
    dtype, q, notes = quantization({"quant_method": "awq", "bits": 4, "group_size": 128,
                                    "modules_to_not_convert": ["model.layers.0.self_attn"]}, 40, "bf16")
    assert q["zero_points"] is True and "quantized" not in q and notes == [
        "attention left unquantized in 1 of 40 layers: priced as quantized"]


def test_unknown_quantization_is_a_note_not_a_guess():
    cfg = json.loads((FIX / "llama-3.1-8b.json").read_text())
    cfg["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "config.json"
        p.write_text(json.dumps(cfg))
        e = import_config(p).entry
    assert "checkpoints" not in e and "bitsandbytes" in e["notes"] and "--weights-index" in e["notes"]


def test_weights_index_flags_towers_and_mtp(tmp_path):
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 70_000_000_000}, "weight_map": {
        "model.visual.blocks.0.attn.qkv.weight": "a", "mtp.layers.0.mlp.gate.weight": "b",
        "lm_head.weight": "c", "model.language_model.embed_tokens.weight": "c"}}))
    e = imported("qwen3.5-35b-a3b", weights_index=index).entry
    assert e["checkpoints"][0]["bytes"]["value"] == 70_000_000_000
    assert "tower tensors (model.visual)" in e["notes"] and "MTP tensors" in e["notes"]


def test_source_never_carries_an_absolute_path(tmp_path):
    cfg = tmp_path / "Some-Model" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text((FIX / "llama-3.1-8b.json").read_text())
    r = import_config(cfg)
    assert r.entry["id"] == "some-model"
    # outside the working directory: marked as such, not cut to a relative-looking "Some-Model/config.json"
    assert r.entry["sources"][0]["title"] == "config.json (a local copy of Some-Model/config.json)"
    assert "# Imported by kvreg import-hf from a local copy of Some-Model/config.json." in r.text
    assert str(tmp_path) not in r.text


def test_a_problem_outside_the_cwd_points_at_the_path_as_given(tmp_path):
    # the new-user trial (F10): "/tmp/t8_bad.json" was reported as "tmp/t8_bad.json:1:1: ..."
    bad = tmp_path / "bad.json"
    bad.write_text("{\n")
    with pytest.raises(KvregError) as exc:
        import_config(bad)
    assert [p.file for p in exc.value.problems] == [bad.as_posix()]


def test_llama4_explicit_no_rope_layers_win_over_the_interval(tmp_path):
    cfg = json.loads((FIX / "llama-4-scout-17b-16e.json").read_text())
    cfg["text_config"]["no_rope_layers"] = [0 if i in (0, 47) else 1 for i in range(48)]   # 0 = NoPE global
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    g = import_config(tmp_path / "config.json").entry["layer_groups"]
    assert [(x["kind"], x["count"], x["note"]) for x in g] == [
        ("full", 2, "layers 0, 47"), ("chunked", 46, "layers 1-46")]


def test_missing_basic_dimension_fails(tmp_path):
    cfg = json.loads((FIX / "llama-3.1-8b.json").read_text())
    del cfg["num_attention_heads"], cfg["max_position_embeddings"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    p = err.value.problems[0]
    assert p.code == "missing-dimension" and p.key == "num_attention_heads,max_position_embeddings"


def test_cli_refuses_a_second_entry_for_the_same_hf_id(tmp_path):
    runner = CliRunner()
    base = ["import-hf", str(FIX / "llama-3.1-8b.json"), "--hf-id", "meta-llama/Llama-3.1-8B", "--out", str(tmp_path)]
    assert runner.invoke(main, base).exit_code == 0
    r = runner.invoke(main, base + ["--id", "llama-8b-again"])
    assert r.exit_code == 1 and "duplicate-hf-id" in r.output and "llama-3.1-8b.yaml" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["llama-3.1-8b.yaml"]


def test_minimax_lightning_layers_refused(tmp_path):
    # attn_type_list 0 is MiniMax-Text-01's lightning (linear) attention: its state is not priced, so refused.
    cfg = json.loads((FIX / "minimax-m2.7.json").read_text())
    cfg["attn_type_list"][0] = 0
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    p = err.value.problems[0]
    assert p.code == "unsupported-architecture" and p.key == "attn_type_list" and "lightning" in p.message


def test_phi_msft_keys_read_under_their_old_names():
    # n_embd → hidden_size, n_layer → layers, n_positions → native context; n_inner null → 4 × n_embd MLP
    e = imported("phi-2").entry
    assert (e["layers"], e["hidden_size"], e["attention_heads"], e["native_context"]["value"]) == (32, 2560, 32, 2048)
    assert e["family"] == "phi" and e["tied_embeddings"] is False


def test_gemma3_sparse_config_takes_the_config_class_defaults():
    # The published gemma-3-4b-it config names no heads, head_dim, vocab or positions: the Gemma3TextConfig
    # defaults fill them, each listed as derived (never silently).
    e = imported("gemma-3-4b").entry
    assert (e["attention_heads"], e["vocab_size"], e["native_context"]["value"]) == (8, 262_208, 131_072)
    assert {"config.num_attention_heads", "config.num_key_value_heads", "config.head_dim", "config.vocab_size",
            "config.max_position_embeddings"} <= set(e["derived_fields"])


def test_deepseek_v4_cache_is_replicated_across_tp_ranks(hfcon):
    # One KV vector per token (num_kv_heads 1, max_tp_shards 1 in every DeepSeek-V4 KV-cache spec) and
    # compressor state TP never divides: each rank holds the whole per-sequence cache at TP 8.
    q = ("SELECT seq_bytes, state_bytes FROM kv_sequence_costs WHERE model_id = 'deepseek-v4-flash' "
         "AND kv_dtype = 'bf16' AND context_tokens = 131072 AND tp = ?")
    assert hfcon.execute(q, (8,)).fetchone() == hfcon.execute(q, (1,)).fetchone()



def test_phi_msft_counts_are_checked_like_their_new_spellings(tmp_path):
    # n_layer is num_hidden_layers under another name: an absurd value is refused at its line, never
    # looped over (the fuzz test found a 10^9-layer phi-msft config building 15 GB of layer plans).
    cfg = json.loads((FIX / "phi-2.json").read_text())
    cfg["n_layer"] = 10**9
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    p = err.value.problems[0]
    assert (p.code, p.key) == ("bad-config-value", "n_layer") and "at most 10,000" in p.message


@pytest.mark.parametrize("bad", ["../../tmp/x", "Bad_ID", "-x"])
def test_an_id_that_is_not_an_id_is_a_usage_error(tmp_path, bad):
    # trial10: --id ../../tmp/x was an invalid-import "kvreg bug" located at config.json:1:1
    r = CliRunner().invoke(main, ["import-hf", str(FIX / "llama-3.1-8b.json"), "--id", bad, "--out", str(tmp_path)])
    assert r.exit_code == 2 and f"--id {bad!r} is not a valid id" in r.output, r.output
    assert not list(tmp_path.iterdir())


def test_kv_heads_not_dividing_the_heads_points_at_the_config(tmp_path):
    cfg = json.loads((FIX / "llama-3.1-8b.json").read_text())
    cfg["num_key_value_heads"] = 7
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    r = CliRunner().invoke(main, ["import-hf", str(path), "--id", "l8", "--stdout"])
    assert r.exit_code == 1 and "invalid-import" in r.output
    assert "check it against the model card" in r.output and "kvreg bug or an unusual config" not in r.output


@pytest.mark.parametrize("key, value, message", [
    # trial11 #6: a string "false" is truthy: tied embeddings, params_total 7,504,924,672 instead of 8,030,261,248
    ("tie_word_embeddings", "false", "tie_word_embeddings is 'false'; it must be a boolean"),
    ("torch_dtype", "float8", "torch_dtype is 'float8', not a torch dtype kvreg knows"),
    ("torch_dtype", 16, "torch_dtype is '16', not a torch dtype kvreg knows"),
])
def test_a_flag_or_dtype_of_the_wrong_kind_is_located(tmp_path, key, value, message):
    cfg = json.loads((FIX / "llama-3.1-8b.json").read_text())
    assert key in cfg
    cfg[key] = value
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    (p,) = err.value.problems
    assert (p.code, p.key) == ("bad-config-value", key) and message in p.message
    assert p.line == next(i for i, ln in enumerate((tmp_path / "config.json").read_text().splitlines(), 1)
                          if f'"{key}"' in ln)
    # the value transformers writes imports: untied, 8,030,261,248 parameters
    cfg[key] = False if key == "tie_word_embeddings" else "bfloat16"
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    e = import_config(tmp_path / "config.json").entry
    assert e["tied_embeddings"] is False and e["params_total"]["value"] == 8_030_261_248


def test_zero_experts_is_dense_only_where_transformers_reads_it_so(tmp_path):
    # Mixtral builds MixtralSparseMoeBlock whatever num_local_experts says: 0 experts with 2 per token is refused
    cfg = json.loads((FIX / "mixtral-8x7b.json").read_text())
    cfg["num_local_experts"] = 0
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    (p,) = err.value.problems
    assert (p.code, p.key) == ("bad-config-value", "num_local_experts")
    assert "num_local_experts is 0 with num_experts_per_tok 2" in p.message
    cfg["num_local_experts"] = 1                                   # 2 of 1 expert: refused too
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    with pytest.raises(KvregError) as err:
        import_config(tmp_path / "config.json")
    (p,) = err.value.problems
    assert p.key == "num_experts_per_tok" and "num_experts_per_tok is 2, more than the 1 experts" in p.message


def test_a_relative_path_outside_the_working_directory_is_recorded_as_given(tmp_path, monkeypatch):
    # trial11 #12: `import-hf ../cfg/base.json` recorded "a local copy of cfg/base.json", dropping the "../"
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "base.json").write_text((FIX / "llama-3.1-8b.json").read_text())
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    r = import_config(Path("../cfg/base.json"))
    assert r.entry["sources"][0]["title"] == "config.json (../cfg/base.json)"
    assert "# Imported by kvreg import-hf from ../cfg/base.json." in r.text and str(tmp_path) not in r.text
