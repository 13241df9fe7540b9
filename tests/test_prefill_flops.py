"""Prefill and decode FLOPs as the engines run them: MLA decompressed for prefill, absorbed for decode.

Hand-worked from DeepSeek-R1's shipped config (registry/models/deepseek-r1.config.json):
num_hidden_layers 61, num_attention_heads n_q = 128, qk_nope_head_dim 128, qk_rope_head_dim 64,
v_head_dim 128, kv_lora_rank 512; params_active 37,552,282,624 (registry, computed from the config).

PREFILL (vLLM 0.11.0 v1/attention/backends/mla/common.py _forward_prefill :1563): kv_b_proj up-projects each
token's 512-wide latent to 128 heads × (128 nope + 128 v) — a GEMM of kv_b_proj's weights, already in 2·P_active —
then flash-attention runs multi-head attention, q·k over 128 + 64 = 192 dims and v over 128 (causal=True):
  per (query, key) pair per layer: QKᵀ 2·128·192 = 49,152 + PV 2·128·128 = 32,768 = 81,920 FLOP
  × 61 layers = 4,997,120 FLOP per prompt token per token attended
DECODE (_forward_decode :1620, bmm with W_UK_T :1747): q_nope is absorbed into the latent, each of the 128 heads
attends over the cached 512 + 64 latent (MQA), the output stays 512 wide until W_UV:
  per pair per layer: QKᵀ 2·128·576 = 147,456 + PV 2·128·512 = 131,072 = 278,528 FLOP
  × 61 layers = 16,990,208 FLOP per decoded token per token of context
The old count, the chapter's 4·d_model per layer, was 4·7168·61 = 1,748,992 for both: 2.86× short for prefill.
"""

from __future__ import annotations

import pytest

from tests.conftest import one

R1_ACTIVE = 37_552_282_624
R1_PREFILL_A = 61 * (2 * 128 * (128 + 64) + 2 * 128 * 128)      # 61 × 81,920
R1_DECODE_A = 61 * (2 * 128 * (512 + 64) + 2 * 128 * 512)       # 61 × 278,528


def coeff(con, model, kv="bf16", tp=1):
    return one(con, "SELECT * FROM decode_coefficients WHERE model_id=? AND kv_dtype=? AND tp=?", (model, kv, tp))


def test_deepseek_r1_mla_flop_per_attended_token(con):
    assert R1_PREFILL_A == 4_997_120
    assert R1_DECODE_A == 16_990_208
    for model in ("deepseek-r1", "deepseek-v3"):
        k = coeff(con, model)
        assert k["prefill_attn_flop_per_context_token"] == R1_PREFILL_A
        assert k["decode_attn_flop_per_context_token"] == R1_DECODE_A
        # geometry only: the same at every TP size and KV precision
        assert coeff(con, model, kv="fp8", tp=8)["prefill_attn_flop_per_context_token"] == R1_PREFILL_A


def test_deepseek_r1_prefill_flop_per_token(con):
    # decode_costs' prefill_flop (the chapter's form, every prompt token charged the whole prompt):
    # n·(2·P_active + a_prefill·n) at n = 8,192:
    #   2·37,552,282,624 = 75,104,565,248;  4,997,120 × 8,192 = 40,936,407,040
    #   per token 116,040,972,288 → × 8,192 = 950,607,644,983,296 FLOP (0.95 PFLOP; the old 4·d form gave 0.73)
    r = one(con, "SELECT * FROM decode_costs WHERE model_id='deepseek-r1' AND kv_dtype='bf16' AND tp=1"
                 " AND context_tokens=8192")
    assert r["prefill_flop"] == 8192 * (2 * R1_ACTIVE + R1_PREFILL_A * 8192) == 950_607_644_983_296
    # decoding one token at 8,192 of context: 75,104,565,248 + 16,990,208 × 8,192 = 214,288,349,184
    assert r["decode_flop_per_token"] == 2 * R1_ACTIVE + R1_DECODE_A * 8192 == 214_288_349_184
    assert r["attention_flop_per_token"] == R1_DECODE_A * 8192


def test_full_attention_decode_stays_as_it_was(con):
    # Llama-3.1-70B (80 layers, d_model 8192, 64 heads × 128): 4·d per layer = 2·64·128 + 2·64·128, prefill = decode,
    # so the seed's 163 GFLOP per decoded token at 8K (tests/test_roofline.py) is unchanged.
    k = coeff(con, "llama-3.1-70b")
    assert k["decode_attn_flop_per_context_token"] == k["prefill_attn_flop_per_context_token"] == 4 * 8192 * 80
    r = one(con, "SELECT * FROM decode_costs WHERE model_id='llama-3.1-70b' AND kv_dtype='bf16' AND tp=1"
                 " AND context_tokens=8192")
    assert r["decode_flop_per_token"] == 2 * 70_553_706_496 + 4 * 80 * 8192 * 8192
    assert r["prefill_flop"] == 8192 * r["decode_flop_per_token"]


def test_r1_30k_ceiling_by_hand(con):
    # llm-ie vLLM 0.8.4, 8 × H200, DeepSeek-R1 FP8 weights, bf16 latent cache, 30,000 in / 100 out.
    # Per output token (throughput_ceilings):
    #   decode at the mean context 30,050:     75,104,565,248 + 16,990,208 × 30,050      =   585,660,315,648
    #   prompt, causal (token i attends to i): 30,000 × (75,104,565,248 + 4,997,120 × 15,000) ÷ 100
    #                                          = 300 × 150,061,365,248                   = 45,018,409,574,400
    #   FLOP per output token                                                             = 45,604,069,890,048
    #   attention part: 16,990,208 × 30,050 + 300 × 4,997,120 × 15,000 = 510,555,750,400 + 22,487,040,000,000
    #                                                                   = 22,997,595,750,400
    #   compute_s: weights' matmuls at the FP8 peak, attention at the bf16 peak (the cache's precision):
    #     (45,604,069,890,048 − 22,997,595,750,400) ÷ (8 × 1,979e12) + 22,997,595,750,400 ÷ (8 × 989e12)
    #     = 1.42790e-3 + 2.90667e-3 = 4.33457e-3 s  (was 30,529,495,349,248 ÷ 8 × 1,979e12 = 1.92834e-3 s)
    r = one(con, "SELECT * FROM throughput_ceilings WHERE source_id='llm-ie-vllm-0.8.4-h200-deepseek-r1-30k'"
                 " AND measurement_idx=0")
    assert r["flop_per_output_token"] == pytest.approx(45_604_069_890_048, rel=1e-12)
    assert r["attn_flop_per_output_token"] == pytest.approx(22_997_595_750_400, rel=1e-12)
    gemm = 45_604_069_890_048 - 22_997_595_750_400
    assert r["compute_s"] == pytest.approx(gemm / (8 * 1979e12) + 22_997_595_750_400 / (8 * 989e12), rel=1e-12)
    assert r["compute_s"] == pytest.approx(4.33457e-3, rel=1e-5)
    assert r["bound"] == "compute"
    # the ceiling holds: measured 37.76 tok/s under 1 ÷ (compute_s + all-reduce)
    assert r["ratio"] < 1


def test_attention_at_the_kv_precision_peak(con):
    # TensorRT-LLM, B200, Qwen3-30B-A3B NVFP4 weights, FP8 KV, 2,048 in / 128 out: the weights' matmuls at the
    # NVFP4 peak (9,000 TFLOP/s), attention at the FP8 peak (4,500 TFLOP/s): never faster than the weights' roof.
    r = one(con, "SELECT * FROM throughput_ceilings WHERE source_id='trtllm-perf-overview-1.0' AND hardware_id='b200'"
                 " AND model_id='qwen3-30b-a3b' AND input_tokens=2048 AND output_tokens=128")
    gemm = r["flop_per_output_token"] - r["attn_flop_per_output_token"]
    assert r["compute_s"] == pytest.approx(gemm / 9000e12 + r["attn_flop_per_output_token"] / 4500e12, rel=1e-12)
    # attention by hand (full layers, the chapter's 4·d_model: 48 layers × 4 × 2,048 = 393,216 per attended token):
    #   decode at 2,112: 393,216 × 2,112 = 830,472,192;  prompt: 2,048 × 393,216 × 1,024 ÷ 128 = 6,442,450,944
    assert r["attn_flop_per_output_token"] == pytest.approx(830_472_192 + 6_442_450_944, rel=1e-12)
