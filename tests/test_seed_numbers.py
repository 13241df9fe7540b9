"""The seeds' worked numbers, exactly (kv-cache-chapter, kv-budget-lesson, kv-arithmetic-hybrid-attention)."""

from __future__ import annotations

import pytest

from tests.conftest import one

KiB, MiB, GiB = 2**10, 2**20, 2**30


def seq(con, model, context, kv="bf16", tp=1):
    return one(con, "SELECT * FROM kv_sequence_costs WHERE model_id=? AND kv_dtype=? AND tp=? AND context_tokens=?",
               (model, kv, tp, context))


def layer(con, model, kind, kv="bf16", tp=1):
    return one(con, "SELECT * FROM kv_layer_costs WHERE model_id=? AND kind=? AND kv_dtype=? AND tp=?",
               (model, kind, kv, tp))


def cap(con, model, hw, context, weights, kv, tp=1, engine="first-principles"):
    return one(con, "SELECT * FROM capacity WHERE model_id=? AND hardware_id=? AND engine_id=? AND weights_dtype=?"
               " AND kv_dtype=? AND tp=? AND context_tokens=?", (model, hw, engine, weights, kv, tp, context))


# --- Gemma 4 31B (kv-arithmetic-hybrid-attention.txt) ------------------------------------------

def test_gemma4_sliding_layer_16_kib_per_token(con):
    assert layer(con, "gemma-4-31b", "sliding")["token_bytes"] == 16 * KiB


def test_gemma4_bounded_part_800_mib(con):
    assert seq(con, "gemma-4-31b", 32768)["bounded_bytes"] == 800 * MiB
    assert seq(con, "gemma-4-31b", 262144)["bounded_bytes"] == 800 * MiB


def test_gemma4_full_layers_k_eq_v_40_kib_per_token(con):
    assert layer(con, "gemma-4-31b", "full")["token_bytes"] == 4 * KiB
    assert seq(con, "gemma-4-31b", 32768)["growing_token_bytes"] == 40 * KiB


def test_gemma4_naive_960_kib_per_token(con):
    assert seq(con, "gemma-4-31b", 32768)["naive_token_bytes"] == 960 * KiB


def test_gemma4_32k_2080_mib_vs_30_gib_naive(con):
    r = seq(con, "gemma-4-31b", 32768)
    assert r["seq_bytes"] == 2080 * MiB
    assert r["naive_seq_bytes"] == 30 * GiB
    assert round(r["naive_seq_ratio"], 1) == 14.8


def test_gemma4_256k_naive_240_gib(con):
    assert seq(con, "gemma-4-31b", 262144)["naive_seq_bytes"] == 240 * GiB


@pytest.mark.parametrize("context,expected", [(32768, 19), (131072, 6), (262144, 3)])
def test_gemma4_sessions_in_a_40_gib_pool(con, context, expected):
    r = one(con, "SELECT * FROM capacity_for_pool(?) WHERE model_id='gemma-4-31b' AND kv_dtype='bf16' AND tp=1"
                 " AND context_tokens=?", (40 * GiB, context))
    assert r["max_seqs"] == expected


def test_gemma4_fp8_growing_part_20_kib(con):
    assert seq(con, "gemma-4-31b", 32768, kv="fp8")["growing_token_bytes"] == 20 * KiB


def test_m3_ultra_residents_leave_roughly_40_gb(con):
    r = cap(con, "gemma-4-31b", "m3-ultra-96gb", 32768, "int8", "bf16")
    assert r["weights_bytes_per_rank"] == 29e9
    assert 38e9 <= r["pool_bytes"] <= 42e9


# --- Qwen3.8-27B on the lesson's 80 GB card (kv-budget-lesson.txt) -------------------------------

def test_qwen_budget_lines(con):
    r = cap(con, "qwen3.8-27b", "generic-80gb", 8192, "bf16", "bf16")
    assert r["weights_bytes_per_rank"] == 54e9 and round(r["weights_bytes_per_rank"] / GiB, 1) == 50.3
    assert r["reserve_bytes"] == 6 * GiB
    assert r["growing_bytes"] == 512 * MiB
    ssm = r["state_bytes"] - r["conv_state_bytes"]
    assert ssm == 144 * MiB            # 48 layers × 3 MiB fp32
    assert round(r["conv_state_bytes"] / MiB, 1) == 2.8


@pytest.mark.parametrize("context,expected", [(8192, 36), (32768, 10), (262144, 1)])
def test_qwen_bf16_concurrency(con, context, expected):
    assert cap(con, "qwen3.8-27b", "generic-80gb", context, "bf16", "bf16")["max_seqs"] == expected


def test_qwen_naive_48(con):
    assert cap(con, "qwen3.8-27b", "generic-80gb", 8192, "bf16", "bf16")["naive_max_seqs"] == 48


def _without_conv(r):
    return int(r["pool_bytes"] // (r["seq_bytes"] - r["conv_state_bytes"]))


def _without_state(r):
    return int(r["pool_bytes"] // (r["seq_bytes"] - r["state_bytes"]))


def test_qwen_fp8_lesson_124_and_complete_123(con):
    r = cap(con, "qwen3.8-27b", "generic-80gb", 8192, "fp8", "fp8")
    assert r["growing_bytes"] + r["state_bytes"] - r["conv_state_bytes"] == 400 * MiB
    assert _without_conv(r) == 124      # the lesson, which leaves out the conv state
    assert r["max_seqs"] == 123         # kvreg, complete


def test_qwen_fp8_native_context_5(con):
    assert cap(con, "qwen3.8-27b", "generic-80gb", 262144, "fp8", "fp8")["max_seqs"] == 5


def test_qwen_without_recurrent_state_46_and_193(con):
    assert _without_state(cap(con, "qwen3.8-27b", "generic-80gb", 8192, "bf16", "bf16")) == 46
    assert _without_state(cap(con, "qwen3.8-27b", "generic-80gb", 8192, "fp8", "fp8")) == 193


# --- The chapter's dense and MLA examples (kv-cache-chapter.txt) --------------------------------

def test_llama70b_per_token_and_per_sequence(con):
    assert seq(con, "llama-3.1-70b", 8192)["growing_token_bytes"] == 327_680
    assert round(seq(con, "llama-3.1-70b", 8192)["seq_bytes"] / 1e9, 2) == 2.68
    assert round(seq(con, "llama-3.1-70b", 131072)["seq_bytes"] / 1e9, 2) == 42.95
    assert round(4 * seq(con, "llama-3.1-70b", 131072)["seq_bytes"] / 1e9, 1) == 171.8


def test_llama8b_16_sequences_of_8k(con):
    assert seq(con, "llama-3.1-8b", 8192)["growing_token_bytes"] == 131_072
    assert round(16 * seq(con, "llama-3.1-8b", 8192)["seq_bytes"] / 1e9, 1) == 17.2
    assert round(16 * seq(con, "llama-3.1-8b", 8192, kv="fp8")["seq_bytes"] / 1e9, 1) == 8.6


def test_llama405b_is_1575x_an_80_layer_model(con):
    r405 = seq(con, "llama-3.1-405b", 8192)["growing_token_bytes"]
    r70 = seq(con, "llama-3.1-70b", 8192)["growing_token_bytes"]   # 80 layers, same KV width
    assert r405 / r70 == 1.575


def test_deepseek_v3_mla_70272_bytes_per_token(con):
    assert seq(con, "deepseek-v3", 8192)["growing_token_bytes"] == 70_272


def test_70b_with_mha_2_62_mb_per_token():
    # The chapter's counterfactual: Llama-3.1-70B with 64 KV heads instead of 8, via a fixture registry.
    from tests.registry_factory import con_for

    c = con_for(models={"mha-70b": {"layers": 80, "groups": [dict(kind="full", count=80, kv_heads=64, head_dim=128)]}})
    r = one(c, "SELECT * FROM kv_sequence_costs WHERE model_id='mha-70b' AND kv_dtype='bf16' AND tp=1"
               " AND context_tokens=131072")
    assert round(r["growing_token_bytes"] / 1e6, 2) == 2.62
    assert round(r["seq_bytes"] / 1e9, 1) == 343.6


# --- Tensor parallelism -------------------------------------------------------------------------

def test_llama70b_tp4_80_kib_per_rank(con):
    assert seq(con, "llama-3.1-70b", 8192, tp=4)["growing_token_bytes"] == 80 * KiB


def test_llama70b_tp16_heads_replicated_not_halved(con):
    assert layer(con, "llama-3.1-70b", "full", tp=16)["kv_heads_per_rank"] == 1
    assert seq(con, "llama-3.1-70b", 8192, tp=16)["growing_token_bytes"] == 80 * 1 * 128 * 2 * 2


def test_mla_latent_not_split_by_tp(con):
    assert seq(con, "deepseek-v3", 8192, tp=8)["growing_token_bytes"] == 70_272
