"""Spot checks: per-token and per-sequence bytes of ten shipped entries equal the config arithmetic.

Each expected value is written out from the model's config facts (shared/data/model_facts.yaml)
so that a wrong layer count, head count, window or state shape in a registry entry fails here.
bf16 KV and bf16 state are 2 bytes per element, fp32 state 4 (DESIGN.md "Precisions").
"""

from __future__ import annotations

import pytest

from tests.conftest import one

BF16, FP32 = 2, 4


def seq(con, model, context, kv="bf16", tp=1):
    return one(con, "SELECT * FROM kv_sequence_costs WHERE model_id=? AND kv_dtype=? AND tp=? AND context_tokens=?",
               (model, kv, tp, context))


def test_gemma_3_27b_52_sliding_at_1024_and_10_full(con):
    # 62 layers = [5 sliding + 1 full] x10 + 2 sliding; 16 KV heads x head_dim 128 (not 256), K and V
    per_layer = 2 * 16 * 128 * BF16                       # 8,192 B per token per layer
    r = seq(con, "gemma-3-27b", 32768)
    assert r["growing_token_bytes"] == 10 * per_layer     # only the 10 global layers grow
    assert r["bounded_bytes"] == 52 * per_layer * 1024    # 52 sliding layers hold 1,024 tokens each
    assert r["seq_bytes"] == 10 * per_layer * 32768 + 52 * per_layer * 1024
    assert r["naive_token_bytes"] == 62 * per_layer       # the naive reader counts every layer as full


def test_gpt_oss_120b_alternating_128_token_window_and_full(con):
    # 36 layers alternating [sliding 128, full] from layer 0; 8 KV heads x head_dim 64
    per_layer = 2 * 8 * 64 * BF16                         # 2,048 B
    r = seq(con, "gpt-oss-120b", 131072)
    assert r["growing_token_bytes"] == 18 * per_layer
    assert r["bounded_bytes"] == 18 * per_layer * 128
    assert r["seq_bytes"] == 18 * per_layer * 131072 + 18 * per_layer * 128


def test_nemotron_h_56b_10_attention_layers_of_118(con):
    # 118 layers: 10 attention (8 KV heads x 128), 54 Mamba2, 54 MLP-only (no cache)
    # Mamba2 state per layer: ssm 256 heads x 64 x 256 in fp32 (no mamba_ssm_cache_dtype in the config:
    # vLLM's NemotronH default float32, registry/README.md) + conv 3 x (256*64 + 2*8*256) in bf16
    state = 256 * 64 * 256 * FP32 + 3 * (256 * 64 + 2 * 8 * 256) * BF16
    r = seq(con, "nemotron-h-56b", 8192)
    assert r["growing_token_bytes"] == 10 * 2 * 8 * 128 * BF16    # 40,960 B per token
    assert r["state_bytes"] == 54 * state                        # 912,605,184 B per sequence
    assert r["conv_state_bytes"] == 54 * 3 * 20480 * BF16
    assert r["naive_token_bytes"] == 10 * 2 * 8 * 128 * BF16     # MLP and Mamba layers carry no KV


def test_qwen3_6_27b_gated_deltanet_hybrid(con):
    # [LLLF] x16: 16 full layers (4 KV heads x 256) + 48 Gated DeltaNet layers with
    # ssm [Hv 48, dk 128, dv 128] in fp32 (mamba_ssm_dtype) and conv [3, 2*16*128 + 48*128] in bf16
    state = 48 * 128 * 128 * FP32 + 3 * (2 * 16 * 128 + 48 * 128) * BF16
    r = seq(con, "qwen3.6-27b", 32768)
    assert r["growing_token_bytes"] == 16 * 2 * 4 * 256 * BF16   # 64 KiB per token
    assert r["state_bytes"] == 48 * state                        # 153,944,064 B, constant in context
    assert r["seq_bytes"] == 16 * 2 * 4 * 256 * BF16 * 32768 + 48 * state


@pytest.mark.parametrize("tp", [1, 8])
def test_kimi_k2_mla_latent_not_split_by_tp(con, tp):
    # MLA on all 61 layers: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per token per layer,
    # shared by all heads, so tensor parallelism does not divide it
    assert seq(con, "kimi-k2", 32768, tp=tp)["growing_token_bytes"] == 61 * (512 + 64) * BF16


def test_deepseek_v2_lite_mla_vs_naive_decompressed(con):
    # 27 MLA layers; the naive reader decompresses to 16 heads x (K 192 + V 128)
    r = seq(con, "deepseek-v2-lite", 32768)
    assert r["growing_token_bytes"] == 27 * (512 + 64) * BF16
    assert r["naive_token_bytes"] == 27 * 16 * (192 + 128) * BF16


def test_llama_4_scout_chunked_8192_on_36_layers(con):
    # [CCCF] x12: 36 chunked-attention layers bounded by attention_chunk_size 8192, 12 global NoPE layers
    per_layer = 2 * 8 * 128 * BF16                        # 4,096 B
    r = seq(con, "llama-4-scout-17b-16e", 32768)
    assert r["growing_token_bytes"] == 12 * per_layer
    assert r["bounded_bytes"] == 36 * per_layer * 8192
    assert seq(con, "llama-4-scout-17b-16e", 4096)["bounded_bytes"] == 36 * per_layer * 4096


def test_gemma_3n_e4b_shared_layers_store_nothing(con):
    # 35 layers; only layers 0-19 own KV (16 sliding at window 512 + 4 full), the last 15 reuse it;
    # 2 KV heads x 256
    per_layer = 2 * 2 * 256 * BF16                        # 2,048 B
    r = seq(con, "gemma-3n-e4b", 32768)
    assert r["growing_token_bytes"] == 4 * per_layer
    assert r["bounded_bytes"] == 16 * per_layer * 512
    assert r["naive_token_bytes"] == 35 * per_layer       # the naive reader stores all 35


def test_mixtral_8x7b_moe_attention_is_plain_gqa(con):
    # 32 full layers, 8 KV heads x 128: 128 KiB per token whatever the experts
    assert seq(con, "mixtral-8x7b", 32768)["growing_token_bytes"] == 32 * 2 * 8 * 128 * BF16 == 128 * 2**10


def test_phi_3_mini_4k_mha_with_window_2047(con):
    # full MHA: 32 KV heads x head_dim 96 on 32 layers, every layer windowed at 2,047 tokens
    per_token = 32 * 2 * 32 * 96 * BF16                   # 393,216 B = 384 KiB
    r = seq(con, "phi-3-mini-4k", 4096)
    assert r["growing_token_bytes"] == 0
    assert r["seq_bytes"] == per_token * 2047
    assert r["naive_seq_bytes"] == per_token * 4096


def test_falcon_h1_34b_attention_and_mamba2_in_every_layer(con):
    # 72 layers, each with attention (4 KV heads x 128) AND Mamba2 (32 heads x 128 x d_state 256;
    # conv 3 x (32*128 + 2*1*256)); the recurrent group shares the layers
    state = (32 * 128 * 256 + 3 * (32 * 128 + 2 * 256)) * BF16
    r = seq(con, "falcon-h1-34b", 32768)
    assert r["growing_token_bytes"] == 72 * 2 * 4 * 128 * BF16
    assert r["state_bytes"] == 72 * state
    assert r["naive_token_bytes"] == 72 * 2 * 4 * 128 * BF16
