"""The batch an unfixed-concurrency throughput row is costed at: the engine's own KV pool (issue 13, speed7).

Until speed7 the ceiling's batch was the most requests ALL the memory beside the weights could hold.  TensorRT-LLM
gives its KV cache a fraction of the memory free after the weights and its activation reserve
(KvCacheConfig.free_gpu_memory_fraction; registry/engines/trtllm-pytorch.yaml accounting util_basis free), and the
performance-overview pages ran trtllm-bench with --kv_cache_free_gpu_mem_fraction 0.95 "in majority of cases"
(the entries' kv_cache_fraction).  Worked by hand on the row issue 13 named: Llama-3.3-70B FP8 on ONE H100, 5,000
in / 500 out (trtllm-perf-overview-0.20), 204.94 output tok/s.
"""

from __future__ import annotations

import math

import pytest

from tests.conftest import one

H100_BW, H100_FP8 = 3.35e12, 1979e12       # hardware/h100-sxm-80gb.yaml bandwidth, peak_flops.fp8
P_70B = 70_553_706_496                      # registry/models/llama-3.3-70b.yaml params_total (dense)
CKPT = 72_689_795_072                       # RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic (model_weights, checkpoint)


def test_h100_70b_fp8_tp1_batch_is_tensorrt_llm_pool(con):
    c = one(con, "SELECT * FROM throughput_ceilings WHERE source_id = 'trtllm-perf-overview-0.20'"
                 " AND hardware_id = 'h100-sxm-80gb' AND model_id = 'llama-3.3-70b' AND tp = 1"
                 " AND input_tokens = 5000 AND output_tokens = 500")
    p = one(con, "SELECT * FROM memory_pools_at(only_models := ['llama-3.3-70b'], only_hardware := ['h100-sxm-80gb'])"
                 " WHERE engine_id = 'trtllm-pytorch' AND weights_dtype = 'fp8' AND tp = 1")
    assert p["usable_bytes"] / 2**30 == pytest.approx(79.19, abs=5e-3)   # hardware/h100-sxm-80gb.yaml, as torch reports
    # held: the checkpoint + the 131,072 × 128 rotary cos/sin cache at 2 B (model_weights_per_rank, 035)
    held = CKPT + 131072 * 128 * 2
    assert p["weights_bytes_per_rank"] == pytest.approx(held) == pytest.approx(72_723_349_504)
    # the release's reserve (accounting.reserve): non_torch 0.4 GiB + 26.8 B × 8,192 tokens × hidden 8,192
    reserve = 0.4 * 2**30 + 26.8 * 8192 * 8192
    assert p["reserve_bytes"] == pytest.approx(reserve, rel=1e-9) == pytest.approx(2.228e9, rel=1e-3)
    # TensorRT-LLM's pool at the page's 0.95 of the free memory: 0.95 × 10.08 GB = 9.57 GB per H100
    pool = 0.95 * (p["usable_bytes"] - held - reserve)
    assert pool == pytest.approx(9.573e9, rel=1e-3)
    # each request reserves its 5,500 tokens of FP8 KV (whole_request: GUARANTEED_NO_EVICT):
    # 2 (K, V) × 80 layers × 8 KV heads × 128 × 1 B = 163,840 B per token → 901.1 MB per request
    per_request = 5500 * 2 * 80 * 8 * 128 * 1
    assert math.floor(pool / per_request) == c["batch"] == 10
    # all the memory beside the weights (the old rule) held 13: a batch TensorRT-LLM cannot run
    assert math.floor((p["usable_bytes"] - held) / per_request) == 13
    # the ceiling at batch 10, per output token: the GEMMs read the FP8 weights once per step ÷ 10 (2.170 ms); their
    # 2·P FLOP per decoded token take 71.3 µs and the 5,000 ÷ 500 prompt tokens' 713 µs; attention reads the mean KV,
    # 163,840 B × 5,250 (0.257 ms).  Decode and prompt steps apart (issue 13, speed10; 104 expected_mixed_step_s):
    # 10 ÷ 500 requests arrive per step, each prompt in ceil(5,000 ÷ (8,192 − 10)) = 1 step, so 2 % of the steps carry
    # a prompt: they are compute-bound on its FLOPs, the other 98 % memory-bound on the weights and the KV
    f = 10 / 500 * math.ceil(5000 / (8192 - 10))
    assert c["prompt_step_share"] == pytest.approx(f) == pytest.approx(0.02)
    gm, gc_d, gc_p = CKPT / 10 / H100_BW, 2 * P_70B / H100_FP8, 2 * P_70B * 5000 / 500 / H100_FP8
    am = 163840 * 5250 / H100_BW
    ac_d, ac_p = 4 * 8192 * 80 * 5250 / H100_FP8, 4 * 8192 * 80 * 5000 * 2500 / 500 / H100_FP8
    assert gm == pytest.approx(2.170e-3, rel=1e-3) and am == pytest.approx(2.568e-4, rel=1e-3)
    decode = (1 - f) * (max(gm, gc_d) + max(am, ac_d))
    prompt = max(f * gm, f * gc_d + gc_p) + max(f * am, f * ac_d + ac_p)
    assert c["ceiling_tok_per_s"] == pytest.approx(1 / (decode + prompt)) == pytest.approx(319.9, rel=1e-3)
    # one greatest() over the average step (until speed10) hid the prompt's 0.78 ms of FLOPs under the weight reads:
    # 412.1 tok/s
    assert 1 / (max(gm, gc_d + gc_p) + max(am, ac_d + ac_p)) == pytest.approx(412.1, rel=1e-3)
    assert c["bound"] == "memory"
    # implied efficiency 204.94 ÷ 319.9 = 0.641, within the H100 × TensorRT-LLM TP 1 scatter (0.497 with one
    # greatest(); at 13 requests it was 0.395: the ceiling was sized on memory the engine keeps for itself)
    assert c["ratio"] == pytest.approx(204.94 / 319.9, rel=1e-3) == pytest.approx(0.641, abs=1e-3)


def test_kv_cache_fraction_follows_the_release_rule(con):
    # Every row of the three perf-overview entries is sized at 0.95 of TensorRT-LLM's free memory: its pool is the
    # default-fraction pool (0.9, memory_pools_at) scaled by 0.95 ÷ 0.9 (util_basis free: pool linear in the fraction)
    rows = con.execute(
        "SELECT t.batch, t.input_tokens + t.output_tokens AS len, t.concurrency, m.kv_cache_fraction,"
        "       p.pool_bytes, p.gpu_memory_utilization, k.growing_token_bytes"
        " FROM throughput_ceilings t"
        " JOIN throughput_measurements m USING (source_id, measurement_idx)"
        " JOIN memory_pools p ON p.model_id = t.model_id AND p.hardware_id = t.hardware_id"
        "  AND p.engine_id = t.engine_id AND p.weights_dtype = t.weights_dtype AND p.tp = t.tp"
        " JOIN decode_coefficients k ON k.model_id = t.model_id AND k.kv_dtype = t.kv_dtype AND k.tp = t.tp"
        " WHERE t.source_id LIKE 'trtllm-perf-overview-%' AND k.bounded_groups = [] AND k.state_bytes = 0"
    ).fetchall()
    assert len(rows) > 300
    for batch, length, conc, frac, pool, util, token_bytes in rows:
        assert conc is None and frac == 0.95 and util == 0.9
        want = min(max(1, math.floor(pool * 0.95 / 0.9 / (token_bytes * length))), 2048)
        assert batch == want
