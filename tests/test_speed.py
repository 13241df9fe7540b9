"""Speed measured: throughput observations, their roofline ceilings, fitted efficiencies, calibrate --speed.

The hand case (TensorRT-LLM 0.17 perf overview, H200, Llama 3.1 8B fp8/fp8, TP 1, 1000 in / 1000 out,
17,537.96 output tok/s) is worked below from the registry's facts, independently of the views.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import statistics
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvreg.cli import main
from tests.conftest import ROOT, one
from tests.registry_factory import SOURCE, con_for, engine_entry, hardware_entry, write_project

P_8B = 8_030_261_248                 # registry/models/llama-3.1-8b.yaml params_total (dense: all active)
H200_USABLE = 143156 * 2**20         # hardware/h200.yaml memory_usable
H200_BW, H200_FP8 = 4.8e12, 1979e12  # hardware/h200.yaml bandwidth, peak_flops.fp8


def test_ceiling_of_one_measurement_by_hand(con):
    c = one(con, "SELECT * FROM throughput_ceilings WHERE source_id = 'trtllm-perf-overview-0.17'"
                 " AND hardware_id = 'h200' AND model_id = 'llama-3.1-8b' AND input_tokens = 1000"
                 " AND output_tokens = 1000")
    kv_token = 2 * 32 * 8 * 128 * 1                  # K and V, 32 layers × 8 KV heads × 128, fp8
    ctx = 1000 + 1000 / 2                            # mean context over the decode steps
    kv_mean = kv_token * ctx
    weights = P_8B * 1                               # read per step: one byte per parameter (model_weights, derived)
    # held in memory: the served FP8 checkpoint by the per-tensor rule (model_weights_per_rank): linear weights
    # at 1 B (+ their scales), embeddings and lm_head at 2 B, the 131,072 × 128 rotary cache at 2 B
    held = one(con, "SELECT weights_bytes_per_rank AS b FROM model_weights_per_rank"
                    " WHERE checkpoint_id = 'llama-3.1-8b:fp8:generic' AND tp = 1")["b"]
    linear = 32 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336)
    assert held == pytest.approx(linear + 2 * (2 * 128256 * 4096) + 2 * 131072 * 128, rel=2e-3)
    # whole-request admission (the entry's kv_admission: TensorRT-LLM's GUARANTEED_NO_EVICT): each request holds its
    # input + output, 2,000 tokens, not its mean 1,500; in TensorRT-LLM's own KV pool (issue 13, speed7): the
    # fraction the page ran with (kv_cache_fraction 0.95, "--kv_cache_free_gpu_mem_fraction 0.95") of the memory
    # free after the weights and the release's reserve (registry/engines/trtllm-pytorch.yaml accounting.reserve:
    # non_torch 0.4 GiB + activations 26.8 B × max_num_batched_tokens 8,192 × hidden 4,096 = 1.33 GB; util_basis
    # free) → 1,012 requests (all the memory beside the weights gave 1,075)
    reserve = 0.4 * 2**30 + 26.8 * 8192 * 4096
    pool = 0.95 * (H200_USABLE - held - reserve)
    batch = min(math.floor(pool / (kv_token * 2000)), 2048)   # trtllm-pytorch max_num_seqs 2048
    assert c["batch"] == batch == 1012
    assert math.floor((H200_USABLE - held) / (kv_token * 2000)) == 1075
    decode = lambda s: 2 * P_8B + 4 * 4096 * 32 * s  # noqa: E731  chapter §2.4, full attention
    flop = decode(ctx) + 1000 * decode(1000 / 2) / 1000          # decode + causal prefill of the prompt
    byte = weights / batch + kv_mean
    assert c["flop_per_output_token"] == pytest.approx(flop)
    assert c["bytes_per_output_token"] == pytest.approx(byte)
    # kernel classes (104 expected_class_step_s), per output token: the GEMMs read the weights ÷ B (1.65 µs) and do
    # 2·P for the decoded and the 1,000 ÷ 1,000 prompt tokens (16.23 µs: compute-bound); the attention reads the mean
    # KV (20.48 µs) and does 4·d·L·(1,500 + 500) FLOP at fp8 (the KV's precision: 0.53 µs: memory-bound).  They
    # run one after the other: 16.23 + 20.48 = 36.71 µs → 27,240 tok/s (one greatest() over the totals gave
    # 22.0 µs, 45,380 tok/s: the prompt's GEMMs hidden under the KV read they in fact wait for)
    gemm = max(weights / batch / H200_BW, 2 * P_8B * 2 / H200_FP8)
    attention = max(kv_mean / H200_BW, 4 * 4096 * 32 * (ctx + 500) / H200_FP8)
    ceiling = 1 / (gemm + attention)
    assert c["ceiling_tok_per_s"] == pytest.approx(ceiling) == pytest.approx(27_240, rel=1e-4)
    assert c["bound"] == "memory"                    # 20.48 µs of memory-bound attention > 16.23 µs of GEMMs
    assert c["ratio"] == pytest.approx(17537.96 / ceiling) == pytest.approx(0.644, abs=1e-3)
    # 1,012 requests of 1,000 output tokens: ~1 arrives per step, each prompt fits one step's spare budget (8,192 −
    # 1,012 tokens): every step carries a chunk, so the two phases are one (prompt_step_share 1)
    assert c["prompt_step_share"] == 1


def test_long_prompts_ride_on_few_steps_by_hand(con):
    # Issue 13 (speed10): H100 TP 2, Llama-3.3-70B fp8, 20,000/2,000 (trtllm-perf-overview-0.20), 24 requests.
    # B ÷ output = 24 ÷ 2,000 requests finish, and as many arrive, per decode step; each 20,000-token prompt takes
    # ceil(20,000 ÷ (8,192 − 24)) = 3 steps of the budget the decode tokens leave (max_num_tokens 8,192): 3.6 % of
    # the steps carry a prompt chunk, the others decode only.
    c = one(con, "SELECT * FROM throughput_ceilings WHERE source_id = 'trtllm-perf-overview-0.20'"
                 " AND hardware_id = 'h100-sxm-80gb' AND model_id = 'llama-3.3-70b' AND tp = 2"
                 " AND input_tokens = 20000 AND output_tokens = 2000")
    assert (c["batch"], c["step_token_budget"]) == (24, 8192)
    f = 24 / 2000 * math.ceil(20000 / (8192 - 24))
    assert c["prompt_step_share"] == pytest.approx(f) == pytest.approx(0.036)
    bw, peak = 2 * 3.35e12, 2 * 1979e12                       # hardware/h100-sxm-80gb.yaml, two ranks
    p70 = 70_553_706_496                                      # registry/models/llama-3.3-70b.yaml params_total
    w = one(con, "SELECT weights_bytes AS b FROM model_weights WHERE model_id = 'llama-3.3-70b'"
                 " AND weights_dtype = 'fp8'")["b"]
    gm = w / 24 / bw                                          # the weights, read once a step, ÷ B
    gc_d, gc_p = 2 * p70 / peak, 2 * p70 * 10 / peak          # the decoded token; its 10 prompt tokens
    am = 80 * 8 * 128 * 2 * 1 * (20000 + 1000) / bw           # fp8 K and V at the mean context
    ac_d = 4 * 8192 * 80 * 21000 / peak                       # QKᵀ and PV at the mean context (fp8 KV: fp8 peak)
    ac_p = 4 * 8192 * 80 * 20000 * 10000 / 2000 / peak        # causal prefill: Σ i = n²/2 per 2,000 outputs
    ar = 2 * 80 * 2 * (2 - 1) / 2 * 8192 * 2 / 450e9          # ring all-reduce of one token, bf16, 450 GB/s
    for col, v in (("gemm_memory_s", gm), ("gemm_compute_prompt_s", gc_p), ("attention_memory_s", am),
                   ("allreduce_prompt_s", 10 * ar)):
        assert c[col] == pytest.approx(v, rel=1e-3), col
    assert c["gemm_compute_s"] == pytest.approx(gc_d + gc_p, rel=1e-3)
    assert c["attention_compute_s"] == pytest.approx(ac_d + ac_p, rel=1e-3)
    # decode-only steps: weights and KV reads (memory-bound); prompt steps: their GEMMs' FLOPs (compute-bound)
    decode = (1 - f) * (max(gm, gc_d) + ar + max(am, ac_d))
    prompt = max(f * gm, f * gc_d + gc_p) + f * ar + 10 * ar + max(f * am, f * ac_d + ac_p)
    assert c["ceiling_tok_per_s"] == pytest.approx(1 / (decode + prompt), rel=1e-3) == pytest.approx(704.5, rel=1e-3)
    # one greatest() over the average step gave 971 tok/s: the prompt's 357 µs of GEMM FLOPs per output token hidden
    # under 452 µs of weight reads that run in the other 96 % of the steps
    old = max(gm, gc_d + gc_p) + 11 * ar + max(am, ac_d + ac_p)
    assert 1 / old == pytest.approx(971.2, rel=1e-3)
    assert c["bound"] == "memory" and c["ratio"] == pytest.approx(416.13 / 704.5, rel=1e-3)


def test_no_measurement_exceeds_its_ceiling(con):
    rows = con.execute("SELECT source_id, measurement_idx, ratio FROM throughput_ceilings").fetchall()
    n = con.execute("SELECT count(*) FROM throughput_measurements").fetchone()[0]
    assert len(rows) == n > 0, "every measurement has a ceiling (hardware, model, engine and precision resolve)"
    over = [r for r in rows if r[2] > 1]
    assert not over, f"measured above the roofline ceiling (a modelling error): {over[:5]}"


def test_the_evidence_is_broad_enough(con):
    # Issue 13: ≥ 40 measurements, ≥ 5 accelerators, ≥ 3 architecture families, dense and MoE.
    n, hw, arch, moe, dense = con.execute(
        "SELECT count(*), count(DISTINCT hardware_id), count(DISTINCT architecture), count(*) FILTER (WHERE moe),"
        " count(*) FILTER (WHERE NOT moe) FROM throughput_ceilings").fetchone()
    assert n >= 40 and hw >= 5 and arch >= 3 and moe > 0 and dense > 0


def _classes_s(r, eb: float = 1.0, ec: float = 1.0) -> float:
    """Seconds per output token at efficiencies eb (bandwidth) and ec (compute): the decode-only steps and the steps
    that carry prompt chunks apart (104 expected_mixed_step_s, a share prompt_step_share of the steps), each the
    kernel classes one after the other at the greater of their roofs, the all-reduce with the dense GEMMs."""
    f = r["prompt_step_share"]
    ar, arp = r["allreduce_s"] or 0, r["allreduce_prompt_s"] or 0

    def step(gm, gc, em, ec_, am, ac, a):
        return max((gm + a) / eb, (gc + a) / ec) + max(em / eb, ec_ / ec) + max(am / eb, ac / ec)

    decode = (r["gemm_memory_s"], r["gemm_compute_s"] - r["gemm_compute_prompt_s"],
              r["expert_memory_s"] - r["expert_memory_prompt_s"], r["expert_compute_s"] - r["expert_compute_prompt_s"],
              r["attention_memory_s"], r["attention_compute_s"] - r["attention_compute_prompt_s"], ar - arp)
    prompt = (0, r["gemm_compute_prompt_s"], r["expert_memory_prompt_s"], r["expert_compute_prompt_s"], 0,
              r["attention_compute_prompt_s"], arp)
    return step(*[(1 - f) * x for x in decode]) + step(*[f * x + y for x, y in zip(decode, prompt)])


def _implied(con, where: str, holdout: str = "") -> dict[str, list[float]]:
    """Implied efficiency per roof, computed here in Python from the kernel classes' components (252: one figure per
    row, the classes' time over the measured time per output token less the host's per-sequence step time of the
    hardware × engine family in that holdout — speed_seq_step_pick, checked on its own by
    test_seq_step_term_is_the_weighted_intercept — lent to the roof that holds most of it)."""
    t = {(h, f): s for h, f, s in con.execute("SELECT hardware_id, engine_family, seq_step_s FROM speed_seq_step_pick"
                                              " WHERE holdout = ?", [holdout]).fetchall()}
    out: dict[str, list[float]] = {"memory": [], "compute": []}
    cur = con.execute(f"SELECT * FROM throughput_ceilings WHERE {where} AND in_fit AND bound IS NOT NULL")
    cols = [d[0] for d in cur.description]
    for row in cur.fetchall():                                 # the fit sees in_fit sources only
        r = dict(zip(cols, row))
        host = t.get((r["hardware_id"], r["engine_family"]), 0.0)
        out[r["bound"]].append(_classes_s(r) / (1 / r["output_tok_per_s"] - host))
    return out


def _seq_step_lstsq(con, holdout: str, family: str, where: str = "TRUE") -> tuple[float, int]:
    """252 speed_seq_step_fit solved by numpy's least squares, not by the closed form: 1/rate = roof_s ÷ eff_g + t,
    one slope per hardware × roof, t shared, weights 1/y² (each row scaled by 1/y); groups of one row left out."""
    import numpy as np
    rows = con.execute("SELECT hardware_id || '/' || roof AS g, roof_s, 1 / output_tok_per_s FROM speed_evidence"
                       f" WHERE holdout = ? AND engine_family = ? AND roof IN ('memory', 'compute') AND {where}"
                       " QUALIFY count(*) OVER (PARTITION BY g) >= 2", [holdout, family]).fetchall()
    groups = sorted({g for g, _, _ in rows})
    a = np.zeros((len(rows), len(groups) + 1))
    for i, (g, x, y) in enumerate(rows):
        a[i, groups.index(g)] = x / y
        a[i, -1] = 1 / y
    return float(np.linalg.lstsq(a, np.ones(len(rows)), rcond=None)[0][-1]), len(rows)


def test_seq_step_term_is_the_weighted_intercept(con):
    def fit(holdout, level, key):
        return one(con, "SELECT * FROM speed_seq_step_fit WHERE holdout = ? AND engine_family = 'trtllm'"
                        " AND level = ? AND key = ?", [holdout, level, key])
    # the family's figure: 5.4 µs per sequence per step over 435 rows (docs/calibration.md)
    t, n = _seq_step_lstsq(con, "", "trtllm")
    f = fit("", "engine", "trtllm")
    assert f["n"] == n and f["seq_step_s"] == pytest.approx(t, rel=1e-6) and 4e-6 < t < 7e-6
    # B200's own (DGX B200, x86 host): 8.5 µs; and it carries between the two pages that measured it — fitted on
    # the 1.0 page alone (0.20 held out) 7.5 µs, on the 0.20 page alone (1.0 held out) 9.0 µs
    t, n = _seq_step_lstsq(con, "", "trtllm", "hardware_id = 'b200'")
    assert fit("", "hardware", "b200")["seq_step_s"] == pytest.approx(t, rel=1e-6) == pytest.approx(8.5e-6, abs=3e-7)
    only_10 = fit("trtllm-perf-overview-0.20", "hardware", "b200")["seq_step_s"]
    only_20 = fit("trtllm-perf-overview-1.0", "hardware", "b200")["seq_step_s"]
    assert 7e-6 < only_10 < 8e-6 and 8.5e-6 < only_20 < 9.5e-6
    # GB200 (one page) 18.5 µs; GH200, the same Grace CPU beside Hopper, 3.7 µs: not the CPU alone
    assert fit("", "hardware", "gb200")["seq_step_s"] == pytest.approx(1.85e-5, abs=3e-7)
    assert fit("", "hardware", "gh200")["seq_step_s"] == pytest.approx(3.7e-6, abs=3e-7)
    # a negative fit counts 0 (A100: −5.3 µs)
    assert fit("", "hardware", "a100-sxm-80gb")["seq_step_s"] == 0
    # held out by its only page, GB200 has no figure of its own and takes Blackwell's (B200's, 9.0 µs)
    q = one(con, "SELECT * FROM speed_seq_step_pick WHERE holdout = 'trtllm-perf-overview-1.0'"
                 " AND hardware_id = 'gb200' AND engine_family = 'trtllm'")
    assert q["level"] == "architecture" and q["seq_step_s"] == pytest.approx(only_20)


def test_fitted_efficiency_is_the_median_implied_efficiency(con):
    e = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'h200' AND engine_family = 'trtllm'")
    imp = _implied(con, "hardware_id = 'h200' AND engine_family = 'trtllm'")
    assert e["bandwidth_basis"] == e["compute_basis"] == "measured"
    assert e["bandwidth_n"] == len(imp["memory"]) and e["compute_n"] == len(imp["compute"])
    assert e["bandwidth_efficiency"] == pytest.approx(statistics.median(imp["memory"]))
    assert e["compute_efficiency"] == pytest.approx(statistics.median(imp["compute"]))
    assert "measured (n=" in e["evidence"]


def test_hardware_without_measurements_borrows_its_architecture(con):
    # H100 PCIe has no throughput entry: it takes the Hopper family's fit, labelled derived.
    e = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'h100-pcie-80gb' AND engine_family = 'trtllm'")
    imp = _implied(con, "architecture = 'hopper' AND engine_family = 'trtllm'")
    assert e["bandwidth_basis"] == "derived" and e["bandwidth_level"] == "architecture"
    assert e["bandwidth_efficiency"] == pytest.approx(statistics.median(imp["memory"]))


def test_leave_one_source_out_fits_without_the_source(con):
    src = "trtllm-perf-overview-1.0"
    f = one(con, "SELECT * FROM speed_fit WHERE holdout = ? AND roof = 'memory' AND level = 'hardware'"
                 " AND key = 'h200' AND engine_family = 'trtllm'", [src])
    # h200 × trtllm only: vLLM and SGLang on H200 (llm-ie, vLLM recipes) are fitted per engine family
    imp = _implied(con, f"hardware_id = 'h200' AND engine_family = 'trtllm' AND source_id <> '{src}'", src)
    assert f["n"] == len(imp["memory"]) and f["sources"] == 2
    assert f["efficiency"] == pytest.approx(statistics.median(imp["memory"]))
    # The left-out prediction of a source's measurement uses that fit, never its own source's rows.
    p = one(con, "SELECT * FROM speed_calibration WHERE mode = 'leave-one-source-out' AND source_id = ?"
                 " AND hardware_id = 'h200' AND bound = 'memory' ORDER BY measurement_idx LIMIT 1", [src])
    assert p["bandwidth_efficiency"] == pytest.approx(f["efficiency"])


def test_the_host_roof_comes_only_from_rows_that_show_a_host_bound(con):
    # 252_speed_fit, HOST ROOF: a row is host evidence when (a) a row of its series with more GPU work per request
    # reaches more than twice its measured ÷ ceiling ratio and (b) it turns requests over fastest of its source on
    # that engine × hardware.  TensorRT-LLM 1.0 perf overview, Qwen3-30B-A3B nvfp4 TP 1 at 128 in / 128 out:
    src = "trtllm-perf-overview-1.0"
    def row(hw, i, o):
        return one(con, "SELECT *, output_tok_per_s / output_tokens AS rps FROM throughput_ceilings"
                        " WHERE source_id = ? AND hardware_id = ? AND model_id = 'qwen3-30b-a3b' AND input_tokens = ?"
                        " AND output_tokens = ?", [src, hw, i, o])
    b, b4k = row("b200", 128, 128), row("b200", 128, 4096)
    # B200: 39,827 tok/s ÷ 128 = 311.1 requests/s; ratio 0.203 against 0.446 at 128/4096 (0.45×, under ½)
    assert b["rps"] == pytest.approx(39827 / 128) and b4k["ratio"] > 2 * b["ratio"]
    assert b4k["output_tokens"] / b4k["ceiling_tok_per_s"] > b["output_tokens"] / b["ceiling_tok_per_s"]
    fastest = con.execute("SELECT max(output_tok_per_s / output_tokens) FROM throughput_ceilings"
                          " WHERE source_id = ? AND hardware_id = 'b200' AND engine_family = 'trtllm'", [src]).fetchone()[0]
    assert b["rps"] == pytest.approx(fastest)
    e = one(con, "SELECT * FROM speed_efficiency_by_holdout WHERE holdout = '' AND hardware_id = 'b200'"
                 " AND engine_family = 'trtllm'")
    assert (e["host_level"], e["host_n"]) == ("hardware", 1) and e["host_request_s"] == pytest.approx(128 / 39827)
    p = one(con, "SELECT * FROM speed_calibration WHERE mode = 'in-sample' AND source_id = ? AND hardware_id = 'b200'"
                 " AND model_id = 'qwen3-30b-a3b' AND input_tokens = 128 AND output_tokens = 128", [src])
    assert p["host_bound"] and p["predicted_tok_per_s"] == pytest.approx(39827)
    # GB200 (a Grace host): 24,110 ÷ 128 = 188.3 requests/s, its own roof, slower than the x86 B200's.
    g = one(con, "SELECT * FROM speed_efficiency_by_holdout WHERE holdout = '' AND hardware_id = 'gb200'"
                 " AND engine_family = 'trtllm'")
    assert g["host_level"] == "hardware" and 1 / g["host_request_s"] == pytest.approx(row("gb200", 128, 128)["rps"])
    # Not host evidence: the RTX PRO 6000 row of the same model (218.8 requests/s, ratio 0.616 vs 0.664 at
    # 128/4096: 0.93×, not under ½), the Qwen 2048/128 rows (0.243 vs 0.437 at 2048/2048 on B200: 0.56×; and
    # 49-52 requests/s while the same machines did 188-311: not the host's pace), and every GPU-bound fastest run
    # (H100/H200 Llama-3.1-8B 128/128 at ~220 requests/s, 0.77× of 128/4096).  So only the two rows above hold roofs:
    roofs = con.execute("SELECT level, key, engine_family, n FROM speed_fit WHERE holdout = '' AND roof = 'host'"
                        " ORDER BY ALL").fetchall()
    assert roofs == [("architecture", "blackwell", "trtllm", 2), ("hardware", "b200", "trtllm", 1),
                     ("hardware", "gb200", "trtllm", 1)]
    r = one(con, "SELECT * FROM speed_efficiency_by_holdout WHERE holdout = '' AND hardware_id = 'rtx-pro-6000'"
                 " AND engine_family = 'trtllm'")
    assert r["host_request_s"] is None
    # Left out, the 1.0 source's rows are not seen and no other TensorRT-LLM source shows a host bound: no roof
    # (the old rule took the 0.20 page's GPU-bound Llama-3.3-70B TP 8 run, 213 requests/s, whose ratio 0.39 is
    # 1.3× its 128/4096 series', as B200's host pace).
    l = one(con, "SELECT * FROM speed_calibration WHERE mode = 'leave-one-source-out' AND source_id = ?"
                 " AND hardware_id = 'b200' AND model_id = 'qwen3-30b-a3b' AND input_tokens = 128"
                 " AND output_tokens = 128", [src])
    assert l["host_request_s"] is None and not l["host_bound"]
    # ... and the calibration says so: host-bound in-sample on its own source's evidence alone, so not predictable
    # held out (255 predictable_held_out) — the two rows above, and no other
    assert l["predictable_held_out"] is False and "not predictable held out" in l["held_out_note"]
    marked = con.execute("SELECT hardware_id FROM speed_calibration WHERE mode = 'leave-one-source-out'"
                         " AND NOT predictable_held_out ORDER BY 1").fetchall()
    assert marked == [("b200",), ("gb200",)]
    assert con.execute("SELECT count(*) FROM speed_calibration WHERE mode = 'in-sample'"
                       " AND predictable_held_out IS NOT NULL").fetchone()[0] == 0
    # A host-bound row gives no GPU efficiency: B200 × TensorRT-LLM's bandwidth fit leaves it out.
    f = one(con, "SELECT * FROM speed_fit WHERE holdout = '' AND roof = 'memory' AND level = 'hardware'"
                 " AND key = 'b200' AND engine_family = 'trtllm'")
    imp = _implied(con, "hardware_id = 'b200' AND engine_family = 'trtllm' AND NOT (source_id = '" + src + "'"
                        " AND model_id = 'qwen3-30b-a3b' AND input_tokens = 128 AND output_tokens = 128)")
    assert f["n"] == len(imp["memory"]) and f["efficiency"] == pytest.approx(statistics.median(imp["memory"]))
    # Host time is the engine's: a family with no measurements has no host roof.
    v = one(con, "SELECT * FROM speed_efficiency_by_holdout WHERE holdout = '' AND hardware_id = 'b200'"
                 " AND engine_family = 'first-principles'")
    assert v["host_request_s"] is None


def test_mi300x_vllm_is_measured_from_amd_pages(con):
    # AMD's vLLM pages (3 sources × 8 rows, TP 8, Llama 3.1 70B/405B fp8/fp8) set MI300X × vLLM, measured.  The
    # bandwidth efficiency rests on the 3 memory-bound rows (70B, 128 in / 4096 out, max_batch 1500), worked here:
    kv_token = 2 * 80 * 8 * 128 * 1                  # K and V, 80 layers × 8 KV heads × 128, fp8 (1 KV head per rank)
    ctx = 128 + 4096 / 2                             # mean context over the decode steps
    w = one(con, "SELECT weights_bytes AS b FROM model_weights WHERE model_id = 'llama-3.1-70b'"
                 " AND weights_dtype = 'fp8'")["b"]
    # kernel classes (104 expected_class_step_s), per output token over 8 × 5.3 TB/s and 8 × 2,614.9 TFLOP/s fp8
    # (hardware/mi300x.yaml): the GEMMs read w ÷ 1,500 (1.11 µs) but do 2·P·(1 + 128/4096) (6.96 µs: compute-bound),
    # the attention reads the mean KV (8.41 µs: memory-bound, the larger part: bound 'memory'), the all-reduce
    # (10.56 µs) rides with the GEMMs: 6.96 + 10.56 + 8.41 = 25.93 µs at efficiency 1
    gemm_s = max(w / 1500 / (8 * 5.3e12), 2 * 70_553_706_496 * (1 + 128 / 4096) / (8 * 2614.9e12))
    attention_s = kv_token * ctx / (8 * 5.3e12)
    ar_s = (1 + 128 / 4096) * 2 * 80 * 2 * 7 / 8 * 8192 * 2 / 448e9  # 2 per layer, ring, bf16, 448 GB/s xGMI
    assert gemm_s == pytest.approx(6.956e-6, rel=1e-3) and attention_s == pytest.approx(8.408e-6, rel=1e-3)
    measured = {"amd-rocm-perf-vllm-0.9": 13667.3, "amd-rocm-perf-vllm-0.10": 11312.8,
                "amd-rocm-perf-vllm-0.11": 11449.7}
    implied = sorted((gemm_s + ar_s + attention_s) * m for m in measured.values())   # 0.293, 0.297, 0.354
    e = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'mi300x' AND engine_family = 'vllm'")
    assert (e["bandwidth_basis"], e["bandwidth_level"], e["bandwidth_n"]) == ("measured", "hardware", 3)
    assert e["bandwidth_efficiency"] == pytest.approx(implied[1], rel=1e-3) == pytest.approx(0.297, abs=5e-4)
    imp = _implied(con, "hardware_id = 'mi300x'")
    assert (e["compute_basis"], e["compute_n"]) == ("measured", len(imp["compute"])) == ("measured", 21)
    assert e["compute_efficiency"] == pytest.approx(statistics.median(imp["compute"])) == pytest.approx(0.315, abs=1e-3)
    # MI325X (CDNA3, no measurement) borrows them, derived; MI355X (CDNA4) keeps its stated 0.45 bandwidth (a
    # figure stated for the part beats pooled measurements).  vLLM is measured on two architectures for the
    # MEMORY roof (CDNA3 here; Hopper: llm-ie and the vLLM recipe on H200), but every compute-bound vLLM row in the
    # fit is on MI300X: one architecture cannot tell vLLM's share of a compute efficiency from CDNA3's (252,
    # engine level), so vLLM has no engine-level compute figure and MI355X's compute (none stated) is the pool of
    # every compute-bound row, level 'all' (before the per-roof rule it was MI300X's 0.271, "engine").
    e325 = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'mi325x' AND engine_family = 'vllm'")
    assert (e325["bandwidth_level"], e325["bandwidth_basis"]) == ("architecture", "derived")
    assert e325["bandwidth_efficiency"] == pytest.approx(e["bandwidth_efficiency"])
    e355 = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'mi355x' AND engine_family = 'vllm'")
    assert (e355["bandwidth_level"], e355["bandwidth_efficiency"], e355["compute_level"]) == ("stated", 0.45, "all")
    archs = con.execute("SELECT bound, count(DISTINCT architecture) FROM throughput_ceilings WHERE in_fit"
                        " AND engine_family = 'vllm' AND bound IS NOT NULL GROUP BY ALL").fetchall()
    assert dict(archs) == {"memory": 2, "compute": 1}
    assert one(con, "SELECT count(*) AS n FROM speed_fit WHERE holdout = '' AND level = 'engine'"
                    " AND key = 'vllm'")["n"] == 1                       # memory only
    pooled = one(con, "SELECT efficiency, n FROM speed_fit WHERE holdout = '' AND level = 'all' AND roof = 'compute'")
    assert (e355["compute_efficiency"], e355["compute_n"]) == (pytest.approx(pooled["efficiency"]), pooled["n"])
    assert pooled["n"] > 21
    # Left out, each AMD source is predicted from the other two: within 26 % (the release moves it 0.9 → 0.11:
    # implied 0.354 for 0.9 against 0.293-0.297 for 0.10/0.11; 0.9's rows held out are under-predicted by ~26 %).
    # (the AMD pages only: the held-out MLPerf MI300X rows, on an assumed input length, are not "the other two")
    worst = con.execute("SELECT max(abs_error) FROM speed_calibration WHERE mode = 'leave-one-source-out'"
                        " AND hardware_id = 'mi300x' AND source_id LIKE 'amd-rocm-perf-vllm-%'").fetchone()[0]
    assert worst == pytest.approx(0.256, abs=2e-3)


def _fit_con(tmp_path: Path, entries: list[dict], hardware: dict):
    from kvreg.build import memory_connection

    write_project(tmp_path, models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 8,
                                                                    "head_dim": 128}]}},
                  hardware=hardware, engines={"first-principles": engine_entry()})
    (tmp_path / "registry/throughput").mkdir(parents=True)
    for e in entries:
        (tmp_path / f"registry/throughput/{e['id']}.yaml").write_text(yaml.safe_dump(e, sort_keys=False))
    return memory_connection(tmp_path)


def _source(sid: str, hw: str, tok_per_s: float, **extra) -> dict:
    e = _throughput(hw=hw)
    e["id"] = sid
    e["measurements"][0]["output_tok_per_s"] = tok_per_s
    e.update(extra)
    return e


def test_a_source_out_of_the_fit_is_only_predicted(tmp_path):
    # in_fit: false — predicted (as if left out) and never fitted to: both modes give it the same prediction.
    hw = {"hw": hardware_entry("hw", architecture="a1", peak_flops={"bf16": "100 TFLOP/s"})}
    con = _fit_con(tmp_path, [_source("t1", "hw", 1000), _source("t2", "hw", 100, in_fit=False)], hw)
    f = con.execute("SELECT roof, n, sources FROM speed_fit WHERE holdout = '' AND level = 'hardware'"
                    " AND roof <> 'host'").fetchall()
    assert [(n, s) for _, n, s in f] == [(1, 1)]                      # t1 only
    (p1, p2), = con.execute("SELECT list(predicted_tok_per_s ORDER BY mode) FROM speed_calibration"
                            " WHERE source_id = 't2' AND mode IN ('in-sample', 'leave-one-source-out')"
                            ).fetchone()[0:1]
    assert p1 == pytest.approx(p2)
    r = one(con, "SELECT * FROM speed_calibration WHERE source_id = 't2' AND mode = 'in-sample'")
    assert r["error"] == pytest.approx(r["predicted_tok_per_s"] / 100 - 1) and r["error"] > 5   # t1's fit: ~1000


def test_an_engine_level_needs_two_architectures(tmp_path):
    # One architecture's measurements cannot tell the engine's share from the hardware's: no engine level, so
    # hardware of another architecture (h2) falls to its stated figure, not to h1's fit; a second architecture
    # measured (h3) makes the engine level, which h2 then takes (nothing stated for compute).
    hw = {h: hardware_entry(h, architecture=a, peak_flops={"bf16": "100 TFLOP/s"})
          for h, a in (("h1", "a1"), ("h2", "a2"), ("h3", "a3"))}
    hw["h2"]["efficiency"] = {"bandwidth": 0.5}
    con = _fit_con(tmp_path / "one", [_source("t1", "h1", 1000)], hw)
    assert con.execute("SELECT count(*) FROM speed_fit WHERE level = 'engine'").fetchone()[0] == 0
    e = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'h2' AND engine_family = 'first-principles'")
    assert (e["bandwidth_level"], e["bandwidth_efficiency"], e["compute_level"]) == ("stated", 0.5, "all")
    con = _fit_con(tmp_path / "two", [_source("t1", "h1", 1000), _source("t3", "h3", 1000)], hw)
    e = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'h2' AND engine_family = 'first-principles'")
    assert e["compute_level"] == "engine" and e["bandwidth_level"] == "stated"


def test_prediction_is_the_ceiling_at_the_efficiencies(con):
    p = one(con, "SELECT c.*, s.predicted_tok_per_s, s.bandwidth_efficiency, s.compute_efficiency, s.error,"
                 " s.host_seq_step_s"
                 " FROM throughput_ceilings c JOIN speed_calibration s USING (source_id, measurement_idx)"
                 " WHERE s.mode = 'in-sample' AND c.hardware_id = 'h200' AND c.model_id = 'llama-3.1-8b'"
                 " AND c.input_tokens = 1000 AND c.output_tokens = 1000 AND c.source_id = 'trtllm-perf-overview-0.17'")
    ar = p["allreduce_s"] or 0                      # 0 at TP 1
    eb, ec = p["bandwidth_efficiency"], p["compute_efficiency"]
    # the kernel classes one after the other, each at its roofs' efficiencies (104 expected_class_step_s): here
    # GEMMs compute-bound (16.23 µs ÷ ec) and attention memory-bound (20.48 µs ÷ eb), no expert class (dense),
    # then the host's time per sequence per step (252 speed_seq_step_fit: TensorRT-LLM's, per output token)
    host = p["host_seq_step_s"]
    assert 1e-6 < host < 1e-5
    pred = 1 / (max((p["gemm_memory_s"] + ar) / eb, (p["gemm_compute_s"] + ar) / ec)
                + max(p["expert_memory_s"] / eb, p["expert_compute_s"] / ec)
                + max(p["attention_memory_s"] / eb, p["attention_compute_s"] / ec) + host)
    assert p["expert_memory_s"] == p["expert_compute_s"] == 0
    assert p["predicted_tok_per_s"] == pytest.approx(pred)
    assert p["predicted_tok_per_s"] == pytest.approx(1 / (p["gemm_compute_s"] / ec + p["attention_memory_s"] / eb
                                                          + host))
    assert p["error"] == pytest.approx(pred / 17537.96 - 1)


def test_tp8_prediction_scales_the_all_reduce_with_its_roof(con):
    # H200 TP 8, Llama 3.1 405B fp8: the all-reduce (2 per layer, ring, 450 GB/s) is serial with the step, rides
    # with the dense GEMMs (it follows their output projections) and runs at their binding roof's share:
    # predicted = 1 / (greatest(gemm_memory + ar, gemm_compute + ar) ÷ its efficiency + attention ÷ its efficiency).
    p = one(con, "SELECT c.*, s.predicted_tok_per_s, s.bandwidth_efficiency, s.compute_efficiency,"
                 " s.host_seq_step_s"
                 " FROM throughput_ceilings c JOIN speed_calibration s USING (source_id, measurement_idx)"
                 " WHERE s.mode = 'in-sample' AND c.source_id = 'trtllm-perf-overview-0.17'"
                 " AND c.hardware_id = 'h200' AND c.model_id = 'llama-3.1-405b' AND c.input_tokens = 1000"
                 " AND c.output_tokens = 1000")
    ar_token = 2 * 126 * 2 * 7 / 8 * 16384 * 2 / 450e9      # 126 layers, d_model 16,384, bf16, one direction
    assert p["allreduce_s"] == pytest.approx((1 + 1000 / 1000) * ar_token)
    eb, ec, ar = p["bandwidth_efficiency"], p["compute_efficiency"], p["allreduce_s"]
    gemm = max((p["gemm_memory_s"] + ar) / eb, (p["gemm_compute_s"] + ar) / ec)
    attention = max(p["attention_memory_s"] / eb, p["attention_compute_s"] / ec)
    assert p["predicted_tok_per_s"] == pytest.approx(1 / (gemm + attention + p["host_seq_step_s"]))
    assert gemm > attention                         # 405B: the GEMMs (and their all-reduce) hold most of the step


def test_roofline_and_plans_use_the_fitted_efficiency(con):
    e = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'h200' AND engine_family = 'trtllm'")
    r = one(con, "SELECT * FROM roofline WHERE model_id = 'llama-3.1-8b' AND hardware_id = 'h200'"
                 " AND engine_id = 'trtllm-pytorch' AND weights_dtype = 'fp8' AND kv_dtype = 'bf16' AND tp = 1"
                 " AND context_tokens = 8192 AND batch = 1")
    assert r["bandwidth_efficiency"] == pytest.approx(e["bandwidth_efficiency"])
    assert r["efficiency_evidence"] == e["evidence"]
    # one sequence: its step at the efficiencies plus the host's time for that sequence (104 decode_step_s)
    assert e["host_seq_step_s"] > 0
    assert r["expected_decode_step_s"] == pytest.approx(
        max(r["decode_memory_s"] / e["bandwidth_efficiency"], r["decode_compute_s"] / e["compute_efficiency"])
        + e["host_seq_step_s"])
    p = one(con, "SELECT * FROM plans(10, 8192, 0.05) WHERE model_id = 'llama-3.1-8b' AND hardware_id = 'h200'"
                 " AND engine_id = 'trtllm-pytorch' AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp = 1")
    assert p["bandwidth_efficiency"] == pytest.approx(e["bandwidth_efficiency"]) and p["rate_basis"] == "expected"


def test_without_measurements_the_stated_efficiency_stays():
    con = con_for(models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 8, "head_dim": 128}]}},
                  hardware={"hw": hardware_entry("hw", efficiency={"bandwidth": 0.5})})
    e = one(con, "SELECT * FROM speed_efficiency WHERE hardware_id = 'hw'")
    assert (e["bandwidth_efficiency"], e["bandwidth_level"], e["bandwidth_n"]) == (0.5, "stated", None)
    assert e["compute_efficiency"] is None


def _throughput(hw: str = "hw", model: str = "m") -> dict:
    return {"id": "t", "engine": "first-principles", "engine_version": "1", "scenario": "offline",
            "date": dt.date(2025, 1, 1), "sources": SOURCE, "field_sources": {"fixture": ["measurements"]},
            "measurements": [{"hardware": hw, "model": model, "weights_dtype": "bf16", "input_tokens": 128,
                              "output_tokens": 128, "output_tok_per_s": 1000}]}


def _project(tmp_path: Path, entry: dict) -> Path:
    write_project(tmp_path, models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 8,
                                                                    "head_dim": 128}]}},
                  hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    (tmp_path / "registry/throughput").mkdir(parents=True)
    (tmp_path / "registry/throughput/t.yaml").write_text(yaml.safe_dump(entry, sort_keys=False))
    return tmp_path


def test_a_throughput_entry_naming_unknown_hardware_is_reported_at_its_line(tmp_path):
    r = CliRunner().invoke(main, ["validate", "--project", str(_project(tmp_path, _throughput(hw="nope"))),
                                  "--format", "json"])
    assert r.exit_code == 1
    (p,) = json.loads(r.stdout)
    assert p["code"] == "unknown-throughput-reference" and p["file"] == "registry/throughput/t.yaml"
    assert p["key"] == "measurements.0.hardware" and "nope" in p["message"] and p["line"] > 1


def test_a_measurement_without_its_rate_is_a_missing_key(tmp_path):
    e = _throughput()
    del e["measurements"][0]["output_tok_per_s"]
    r = CliRunner().invoke(main, ["validate", "--project", str(_project(tmp_path, e)), "--format", "json"])
    assert r.exit_code == 1
    (p,) = json.loads(r.stdout)
    assert (p["code"], p["key"]) == ("missing-key", "measurements.0.output_tok_per_s")


def test_a_throughput_number_without_a_source_is_unsourced(tmp_path):
    # Every number of a throughput entry rests on a source (kvreg/provenance.py FACT_KINDS), like hardware's.
    e = _throughput()
    del e["field_sources"]
    r = CliRunner().invoke(main, ["validate", "--project", str(_project(tmp_path, e)), "--format", "json"])
    assert r.exit_code == 1
    got = {(p["code"], p["key"]) for p in json.loads(r.stdout)}
    assert got == {("unsourced-number", f"measurements.0.{k}") for k in ("input_tokens", "output_tokens",
                                                                         "output_tok_per_s")}


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_calibrate_speed_renders(fmt, root_db):
    r = CliRunner().invoke(main, ["calibrate", "--speed", "--format", fmt, "--project", str(ROOT),
                                  "--db", root_db])
    assert r.exit_code == 0, r.output
    if fmt == "json":
        rep = json.loads(r.output)
        modes = {o["mode"]: o for o in rep["overall"]}
        assert set(modes) == {"in-sample", "leave-one-source-out", "leave-one-architecture-out"}
        assert modes["in-sample"]["n"] == len(rep["measurements"]) >= 40
    else:
        assert "leave-one-source-out" in r.output and "h200" in r.output


def test_plan_states_the_efficiency_and_its_evidence(root_db):
    r = CliRunner().invoke(main, ["plan", "--model", "qwen3-30b-a3b", "--users", "64", "--context", "8Ki",
                                  "--tpot-ms", "50", "--hardware", "l40s", "--weights-dtype", "fp8",
                                  "--project", str(ROOT), "--db", root_db])
    assert r.exit_code == 0, r.output
    assert "Efficiency used: l40s: bandwidth 0." in r.output and "(n=" in r.output
