"""vLLM's CUDA-graph memory estimate (profile_cudagraph_memory) as kvreg models it (204, 205, 230).

Checked against the "Estimated CUDA graph memory: X GiB total" line of the 18 vLLM 0.19.0 H100 logs
(registry observations v0.19-h100-*; 0.19 logs the estimate without subtracting it).  The two per-layer
constants are measured from those logs' per-mode DEBUG lines, so the in-sample figures below are also
reported leave-one-log-out in docs/engine.md (median 0.15, worst 0.42 GiB).  Before this model kvreg
used a flat 0.8 GiB: median 0.20, worst 1.02 GiB on the same logs.
"""

from __future__ import annotations

import statistics

import pytest

from tests.conftest import one

GIB = 2**30
MIB = 2**20


def pools(con, engine="vllm-0.22-0.26", model="llama-3.1-8b", hw="h100-sxm-80gb", tp=1, **knobs):
    args = ", ".join(f"{k} := {v}" for k, v in knobs.items())
    return one(con, f"SELECT p.* FROM engine_memory_pools_at({args}) p JOIN models m USING (model_id)"
                    " WHERE p.engine_id = ? AND p.model_id = ? AND p.hardware_id = ? AND p.tp = ?"
                    " AND p.weights_dtype = m.dtype", [engine, model, hw, tp])


def test_estimate_against_the_logged_estimates(con):
    rows = con.execute("SELECT observation_id, e2e_cuda_graph_estimate_bytes, logged_cuda_graph_estimated_bytes,"
                       " cuda_graph_estimate_error_bytes, engine_id FROM calibration"
                       " WHERE logged_cuda_graph_estimated_bytes IS NOT NULL").fetchall()
    # the per-layer constants are measured on the 18 H100 logs: the accuracy claim is theirs (other GPUs below)
    h100 = [r for r in rows if r[0].startswith("v0.19-h100-")]
    assert len(h100) == 18
    err = [abs(r[3]) / GIB for r in h100]
    flat = [abs(0.8 * GIB - r[2]) / GIB for r in h100]
    assert statistics.median(err) <= 0.15 and max(err) <= 0.45, (statistics.median(err), max(err))
    assert statistics.median(err) < statistics.median(flat) and max(err) < max(flat) / 2
    # the release's summary row counts its own observations (club-3090#1087, a 0.2x log, is another release's)
    s = one(con, "SELECT * FROM calibration_summary WHERE engine_id = 'vllm-0.17-0.19'")
    every = [abs(r[3]) / GIB for r in rows if r[4] == "vllm-0.17-0.19"]
    assert s["cuda_graph_estimate_checked"] == len(every) == len(rows) - 1
    assert s["cuda_graph_estimate_median_abs_error_bytes"] / GIB == pytest.approx(statistics.median(every))
    assert s["cuda_graph_estimate_worst_abs_error_bytes"] / GIB == pytest.approx(max(every))


def test_a100_estimate_is_outside_the_measured_constants(con):
    # Known miss, recorded rather than fitted: Qwen3-8B on an A100-SXM4-40GB (0.19.1, all defaults: the small-GPU
    # batch defaults T = 2,048, N = 256, so 51 PIECEWISE + 35 FULL graphs) logs an estimate of 2.35 GiB (2.44 actual).
    # kvreg, by hand: first PIECEWISE 64 MiB + 512 × 98,304 B (forward at S = 512) + 7.56 = 119.6 MiB; per graph
    # 36 layers × 0.21 = 7.56 MiB (PIECEWISE) and × 0.14 = 5.04 MiB (FULL): 119.6 + 50 × 7.56 + 34 × 5.04 = 669 MiB
    # = 0.65 GiB.  What is not the cause (read in 0.19.0): attention buffers in the FULL graphs.  On Ampere FlashAttention
    # is FA2: no AOT scheduler metadata and max_num_splits stays 0 (FA2's own heuristic), FA3 only
    # (v1/attention/backends/flash_attn.py 0.19.0:267-271, 304-305, 326-346, 391-401); and the first FULL capture runs
    # at seq_len min(max_model_len, T // S) = 2,048 // 256 = 8 tokens (gpu_model_runner.py 0.19.0:5905-5913), one KV
    # block, so FA2 takes one split and allocates no accumulators.  The missing 1.70 GiB is then in the per-graph
    # term (≈ 20 MiB more per graph over 84 graphs, ≈ 0.75 MiB per layer per graph against the H100's 0.21 / 0.14) or
    # the PIECEWISE first capture: the logged total alone cannot tell them apart; an Ampere log with the per-mode
    # DEBUG lines ("first-capture + (n-1) × per-graph", VLLM_LOGGING_LEVEL=DEBUG) would.  0.19 does not subtract the
    # estimate, so the pool is unaffected here (end to end −0.4 %); from 0.20 on it would be 1.7 GiB of available
    # memory on this GPU.
    r = one(con, "SELECT e2e_cuda_graph_estimate_bytes, logged_cuda_graph_estimated_bytes FROM calibration"
                 " WHERE observation_id = 'vllm-gh-a100-40gb-qwen3-8b'")
    assert r["logged_cuda_graph_estimated_bytes"] / GIB == pytest.approx(2.35)
    assert r["e2e_cuda_graph_estimate_bytes"] / GIB == pytest.approx(0.65, abs=0.01)


def test_dense_tp_logs_within_a_hundredth(con):
    # Kimi-Dev-72B (Qwen2.5-72B geometry) TP 2 / 4: 1.63 / 1.51 GiB logged
    for oid, logged in (("v0.19-h100-kimi-dev-72b-tp2", 1.63), ("v0.19-h100-kimi-dev-72b-tp4", 1.51)):
        r = one(con, "SELECT e2e_cuda_graph_estimate_bytes FROM calibration WHERE observation_id = ?", [oid])
        assert abs(r["e2e_cuda_graph_estimate_bytes"] / GIB - logged) < 0.01, oid


def test_codellama_worked_by_hand(con):
    # CodeLlama-7B, H100, TP 1, max_num_seqs 1024, T 8192: ceiling min(2·1024, 512, 8192) = 512 → 51 sizes, all
    # ≤ 1024 → 51 FULL.  g_pw = 32 layers × 0.21 MiB, g_full = 32 × 0.14 MiB.
    # first PIECEWISE = 64 MiB (capture-stream cuBLAS + cuBLASLt) + 512 × 3 × 4096 × 2 B (registry has no FFN width) + g_pw
    # first FULL = 32 splits × 512 × 32 heads × 128 × 4 B = 256 MiB + g_full   (the log: 262 MiB)
    # total = max(first) + 50·g_pw + 50·g_full = 256 + 4.48 + 50 × 11.2 = 820.5 MiB = 0.80 GiB (the log: 0.84)
    p = pools(con, model="codellama-7b", max_num_seqs=1024, max_num_batched_tokens=8192)
    assert (p["cudagraph_piecewise_graphs"], p["cudagraph_full_graphs"]) == (51, 51)
    g_pw, g_full = p["cudagraph_per_graph_piecewise_bytes"], p["cudagraph_per_graph_full_bytes"]
    assert g_pw == pytest.approx(32 * 0.21 * MIB, abs=32) and g_full == pytest.approx(32 * 0.14 * MIB, abs=32)
    assert p["cudagraph_split_kv_bytes_per_token"] == 32 * 32 * 128 * 4
    first_full = 32 * 512 * 32 * 128 * 4 + g_full
    first_pw = 64 * MIB + 512 * 3 * 4096 * 2 + g_pw
    assert first_full > first_pw
    assert p["cudagraph_estimate_bytes"] == pytest.approx(first_full + 50 * g_pw + 50 * g_full, abs=64)
    assert p["cudagraph_estimate_bytes"] / MIB == pytest.approx(820.5, abs=0.5)
    assert p["cudagraph_bytes"] == p["cudagraph_estimate_bytes"]          # ≥ 0.20 subtracts it


def test_max_num_seqs_8_captures_fewer_graphs(con):
    # ceiling min(2·8, 512) = 16 → sizes [1, 2, 4, 8, 16]; FULL (uniform decode) only up to 8 → [1, 2, 4, 8]
    small, big = pools(con, max_num_seqs=8), pools(con, max_num_seqs=1024)
    assert (small["cudagraph_piecewise_graphs"], small["cudagraph_full_graphs"]) == (5, 4)
    assert (big["cudagraph_piecewise_graphs"], big["cudagraph_full_graphs"]) == (51, 51)
    assert small["cudagraph_estimate_bytes"] < big["cudagraph_estimate_bytes"] / 4
    assert con.execute("SELECT engine_cudagraph_capture_sizes(8, 0, 8192, 512, false, false)").fetchone()[0] \
        == [1, 2, 4, 8, 16]


def test_enforce_eager_captures_nothing(con):
    p = pools(con, enforce_eager="true")
    assert p["cudagraph_estimate_bytes"] == 0 and p["cudagraph_bytes"] == 0
    assert p["cudagraph_piecewise_graphs"] == 0


def test_0_19_estimates_but_does_not_subtract(con):
    p = pools(con, engine="vllm-0.17-0.19", max_num_seqs=1024)
    assert p["cudagraph_estimate_bytes"] > 0.5 * GIB and p["cudagraph_bytes"] == 0
    assert pools(con, engine="vllm-0.9-0.16")["cudagraph_estimate_bytes"] is None


def test_split_kv_accumulators_only_where_fa3_is_chosen(con):
    # FA3 on Hopper only (FA2 elsewhere); Gemma-3 multimodal (bidirectional image prefix) gets TRITON_ATTN
    assert pools(con, hw="a100-sxm-80gb")["cudagraph_split_kv_bytes_per_token"] == 0
    assert pools(con, model="gemma-3-27b")["cudagraph_split_kv_bytes_per_token"] == 0
    assert pools(con, model="gemma-2-9b")["cudagraph_split_kv_bytes_per_token"] == 32 * 16 * 256 * 4
    # MLA decodes in the 512-wide latent: DeepSeek-V2-Lite, 16 heads
    assert pools(con, model="deepseek-v2-lite")["cudagraph_split_kv_bytes_per_token"] == 32 * 16 * 512 * 4
    # A100 (max_num_seqs default 256): PIECEWISE 51 sizes up to 512, FULL the 35 up to 256
    a = pools(con, hw="a100-sxm-80gb")
    assert (a["max_num_seqs"], a["cudagraph_piecewise_graphs"], a["cudagraph_full_graphs"]) == (256, 51, 35)


def test_spec_decode_widens_the_ceiling_and_the_full_sizes(con):
    # q = 1 + 2: ceiling min(8·3·2, 512) = 48 → [1, 2, 4, 8, …, 48] (9); FULL: 3 ≤ size ≤ 24 → [4, 8, 16, 24]
    sizes = con.execute("SELECT engine_cudagraph_capture_sizes(8, 2, 8192, 512, false, false)").fetchone()[0]
    assert sizes == [1, 2, 4, 8, 16, 24, 32, 40, 48]
    assert con.execute("SELECT engine_cudagraph_full_sizes(?, 8, 2)", [sizes]).fetchone()[0] == [4, 8, 16, 24]


def test_0_33_captures_max_num_seqs_itself(con):
    # max_num_seqs 100: ceiling 200 → 28 sizes; 0.33 adds 100 (uniform_decode_sizes), which is off the 8-stride
    assert pools(con, max_num_seqs=100)["cudagraph_piecewise_graphs"] == 28
    assert pools(con, engine="vllm-0.33", max_num_seqs=100)["cudagraph_piecewise_graphs"] == 29
    # T below the ceiling is captured too
    assert con.execute("SELECT engine_cudagraph_capture_sizes(1024, 0, 100, 512, false, false)").fetchone()[0][-2:] \
        == [96, 100]
