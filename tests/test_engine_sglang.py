"""SGLang's pool as its server arguments size it (docs/engine.md §5; engine_accounting.md §8): the default
mem_fraction_static per device and tp (accounting.mem_fraction_rule, 203 engine_mem_fraction, 205), the per-device
chunked_prefill_size, and available = (usable − non_torch) × fraction − weights with no activation term.
Every number below is worked by hand from ServerArgs._handle_gpu_memory_settings (python/sglang/srt/server_args.py 0.5.x):
    reserved (MiB) = 512 + 1.5 × max(chunk, 2048) + 2 × cuda_graph_max_bs + 128 × tp, ≥ 10 × 1024 above 60 GiB
    fraction = round((gpu_mem − reserved) / gpu_mem, 3)
"""

from __future__ import annotations

import math

import pytest

from tests.conftest import one

GIB = 2**30
MIB = 2**20


def _pool(con, hw: str, tp: int, model: str = "llama-3.1-8b", **knobs):
    args = ", ".join(f"{k} := {v}" for k, v in knobs.items())
    return one(con, f"SELECT * FROM engine_memory_pools_at({args}) WHERE engine_id = 'sglang-0.5' AND model_id = ?"
                    " AND hardware_id = ? AND tp = ? AND weights_dtype = 'bf16' AND default_batched",
               [model, hw, tp])


@pytest.mark.parametrize("hw, mib, tp, chunk, graph_bs, fraction", [
    # H100 SXM 80GB, 81,089 MiB: 512 + 1.5 × 8192 + 2 × 256 + 128 = 13,440 MiB (above the 10 GiB floor)
    ("h100-sxm-80gb", 81_089, 1, 8192, 256, 0.834),
    # TP 4: cuda_graph_max_bs 512 and 4 × 128: 512 + 12,288 + 1,024 + 512 = 14,336 MiB
    ("h100-sxm-80gb", 81_089, 4, 8192, 512, 0.823),
    # A100 SXM 40GB, 40,339.3 MiB (< 60 × 1024: no floor): 512 + 1.5 × 4096 + 2 × 32 + 128 = 6,848 MiB
    ("a100-sxm-40gb", 40_339.3125, 1, 4096, 32, 0.830),
    # L4, 23,034 MiB (< 35 × 1024): 512 + 1.5 × 2048 + 2 × 24 + 128 = 3,760 MiB
    ("l4", 23_034, 1, 2048, 24, 0.837),
    # B200, 182,642 MiB (≥ 160 × 1024): 512 + 1.5 × 16384 + 2 × 512 + 128 = 26,240 MiB
    ("b200", 182_642, 1, 16384, 512, 0.856),
])
def test_default_fraction_by_device_and_tp(con, hw, mib, tp, chunk, graph_bs, fraction):
    reserved = 512 + 1.5 * max(chunk, 2048) + 2 * graph_bs + 128 * tp
    if mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    assert round((mib - reserved) / mib, 3) == fraction     # the hand figure is the rule's
    p = _pool(con, hw, tp)
    assert p["usable_bytes"] / MIB == pytest.approx(mib)
    assert (p["gpu_memory_utilization"], p["util_is_default"], p["max_num_batched_tokens"]) == (fraction, True, chunk)


def test_pool_is_the_fraction_of_free_before_load_less_the_weights(con):
    """No activation or CUDA-graph term: SGLang sizes the pool before any forward (rest = avail − pre × (1 − f))."""
    p = _pool(con, "h100-sxm-80gb", 1)
    assert p["reserve_bytes"] == p["non_torch_bytes"] == 0.5 * GIB
    assert p["available_kv_bytes"] == pytest.approx((p["usable_bytes"] - 0.5 * GIB) * 0.834 - p["weights_bytes_per_rank"])
    # a user's --mem-fraction-static replaces the default and says so
    k = _pool(con, "h100-sxm-80gb", 1, gpu_memory_utilization=0.9)
    assert (k["gpu_memory_utilization"], k["util_is_default"]) == (0.9, False)


def test_public_qwen3_235b_tp4_figure(con):
    """vllm-log-13 (vllm_startup_logs.jsonl): SGLang, Qwen3-235B-A22B-FP8, TP 4 on H100, --mem-fraction-static 0.93:
    'KV Cache is allocated. #tokens: 367404' (K and V 8.23 GB each).  kvreg: (81,089 MiB − 1.5 GiB NVLink communicators)
    × 0.93 − 55.14 GiB weights per rank (its rotary cos/sin cache in fp32: 40,960 positions × 128 × 4 B = 20 MiB)
    = 17.11 GiB; ÷ 94 layers × 1 KV head per rank × 128 × 2 × 2 B = 48,128 B per token → 381,705 tokens, 3.9 % above
    the log (a checked figure, not a fitted one: no constant was set from it)."""
    r = one(con, "SELECT available_kv_bytes, weights_bytes_per_rank, block_bytes, logged_kv_tokens FROM engine_capacity_at([40960],"
                 " gpu_memory_utilization := 0.93) WHERE engine_id = 'sglang-0.5' AND model_id = 'qwen3-235b-a22b-fp8'"
                 " AND hardware_id = 'h100-sxm-80gb' AND tp = 4 AND weights_dtype = 'fp8' AND kv_dtype = 'bf16'"
                 " AND default_batched")
    assert r["block_bytes"] == 94 * 1 * 128 * 2 * 2
    avail = (81_089 * MIB - 1.5 * GIB) * 0.93 - r["weights_bytes_per_rank"]
    assert r["available_kv_bytes"] == pytest.approx(avail)
    assert r["logged_kv_tokens"] == math.floor(avail / 48_128) == 381_705
    assert abs(r["logged_kv_tokens"] / 367_404 - 1) < 0.04


def test_fit_says_why_its_weights_are_not_first_principles(con):
    from kvreg.fit import fit, render_fit

    # The trial's case: kimi-linear-48b-a3b fp32 at TP 16.  First principles divide the checkpoint by 16
    # (196,490,726,912 B ÷ 16 = 11.44 GiB); SGLang counts what a rank allocates while loading (model_runner.py
    # 0.5.23:1364-1365, free memory before − after), so its pool loses the layers every rank holds whole — the
    # MLA kv_a projection (37,158,912 B), the MoE router gates (63,700,992 B), the norms (506,880 B) and the MLA
    # layers' kv_a_layernorm (an RMSNorm, unsharded: 7 layers × kv_lora_rank 512 × 4 B = 14,336 B), 15/16 of
    # them beyond a share: 95,044,800 B = 90.64 MiB — and the rotary cos/sin cache, which SGLang keeps in fp32
    # (rotary_embedding/base.py 0.5.23:115-120): 1,048,576 positions × 64 rope dims × 4 B = 268,435,456 B = 256 MiB.
    args = dict(engine="sglang-0.5", weights_dtype="fp32", kv_dtype="bf16", tp=16, contexts=[8192])
    sg = fit(con, "kimi-linear-48b-a3b", "b200", **args)
    assert ((101_366_784 + 7 * 512 * 4) * 15 / 16, 196_490_726_912 / 16 / GIB) == (95_044_800,
                                                                                  pytest.approx(11.437, abs=1e-3))
    assert 1_048_576 * 64 * 4 == 268_435_456
    assert sg.weights_gap["engine_bytes"] == pytest.approx(196_490_726_912 / 16 + 95_044_800 + 268_435_456)
    line = ("Weights per rank as sglang-0.5 loads them: 11.78 GiB = 11.44 GiB (first principles: the checkpoint ÷ TP"
            " 16) + 90.64 MiB held whole on every rank (norms, router gates, MLA q_a/kv_a projections, k/v past the KV heads)"
            " + 256 MiB rotary cos/sin cache")
    assert line in render_fit(sg).splitlines()
    # first principles' own fit has no such line: its weights are the checkpoint ÷ TP
    fp = fit(con, "kimi-linear-48b-a3b", "b200", **dict(args, engine="first-principles"))
    assert fp.weights_gap is None and not any(ln.startswith("Weights per rank") for ln in render_fit(fp).splitlines())


def test_rotary_cache_kept_in_fp32(con):
    """SGLang keeps the rotary cos/sin cache in fp32 on CUDA (layers/rotary_embedding/base.py 0.5.23:115-120;
    engine accounting rope_cache_bytes_per_element 4), vLLM in the model dtype (rotary_embedding/base.py
    0.19.0:59-63).  llama-3.1-8b: 131,072 positions × head_dim 128 = 16,777,216 elements, 64 MiB in fp32 against
    32 MiB in bf16, so SGLang's weights per rank are 33,554,432 B above vLLM's for the same checkpoint and TP, and
    its fit says which term it is."""
    from kvreg.fit import fit, render_fit

    w = {r[0]: r[1] for r in con.execute(
        "SELECT engine_id, weights_bytes_per_rank FROM engine_memory_pools_at(only_models := ['llama-3.1-8b'],"
        " only_hardware := ['h100-sxm-80gb'], only_engines := ['sglang-0.5', 'vllm-0.17-0.19'])"
        " WHERE tp = 1 AND weights_dtype = 'bf16' AND default_batched").fetchall()}
    assert 131_072 * 128 * (4 - 2) == 33_554_432
    assert w["sglang-0.5"] - w["vllm-0.17-0.19"] == 33_554_432
    args = dict(weights_dtype="bf16", kv_dtype="bf16", tp=1, contexts=[8192])
    lines = {e: [ln for ln in render_fit(fit(con, "llama-3.1-8b", "h100-sxm-80gb", engine=e, **args)).splitlines()
                 if ln.startswith("Weights per rank")] for e in ("sglang-0.5", "vllm-0.17-0.19")}
    assert lines["sglang-0.5"] == ["Weights per rank as sglang-0.5 loads them: 15.02 GiB = 14.96 GiB (first"
                                   " principles: the checkpoint ÷ TP 1) + 64 MiB rotary cos/sin cache"]
    assert lines["vllm-0.17-0.19"] == ["Weights per rank as vllm-0.17-0.19 loads them: 14.99 GiB = 14.96 GiB (first"
                                       " principles: the checkpoint ÷ TP 1) + 32 MiB rotary cos/sin cache"]
