"""What each engine release runs on which device (engine_support, kvreg/sql/058_engine_support.sql): the shipped
releases' support blocks as read from the engines' code, the plans that refuse, fit's warning, fixture rules."""

from __future__ import annotations

import pytest

from kvreg.problems import KvregError
from tests.registry_factory import con_for, engine_entry, hardware_entry


def verdict(con, engine, hardware, weights, kv):
    row = con.execute("SELECT runs, supported, sized, reason, cite, platform_id FROM engine_support"
                      " WHERE engine_id = ? AND hardware_id = ? AND weights_dtype = ? AND kv_dtype = ?",
                      [engine, hardware, weights, kv]).fetchone()
    assert row is not None, (engine, hardware, weights, kv)
    return dict(zip(["runs", "supported", "sized", "reason", "cite", "platform"], row))


def test_t4_fp8_weights_refused_where_the_release_needs_8_0(con):
    # vLLM 0.11.0 Fp8Config.get_min_capability() = 80 (fp8.py:114-115); the T4 is 7.5
    v = verdict(con, "vllm-0.9-0.16", "t4", "fp8", "bf16")
    assert not v["runs"] and not v["supported"]
    assert v["reason"] == ("fp8 weights need compute capability ≥ 8.0 in vllm-0.9-0.16 on CUDA platform (fp8:"
                           " model_executor/layers/quantization/fp8.py 0.11.0:114-115; checked at config/__init__.py"
                           " 0.11.0:261): t4 is 7.5")
    assert verdict(con, "vllm-0.9-0.16", "t4", "bf16", "bf16")["runs"]


def test_t4_fp8_weights_allowed_where_the_code_says_7_5(con):
    # from 0.19.0 Fp8Config.get_min_capability() = 75: FP8 Marlin (weight-only) takes Turing
    for eid, cite in (("vllm-0.17-0.19", "fp8.py 0.19.0:145-146"), ("vllm-0.33", "fp8.py 0.33.0:146-147")):
        v = verdict(con, eid, "t4", "fp8", "bf16")
        assert v["runs"] and v["reason"] is None and cite in v["cite"], (eid, v)


def test_trtllm_needs_ampere_and_fp8_needs_ada(con):
    t4 = verdict(con, "trtllm-pytorch", "t4", "bf16", "bf16")
    assert not t4["runs"] and "needs compute capability ≥ 8.0" in t4["reason"] and t4["reason"].endswith("t4 is 7.5")
    a100 = verdict(con, "trtllm-pytorch", "a100-sxm-80gb", "fp8", "bf16")
    assert not a100["runs"] and "fp8 weights need compute capability ≥ 8.9" in a100["reason"]
    assert not verdict(con, "trtllm-pytorch", "a100-sxm-80gb", "bf16", "fp8")["runs"]    # an fp8 KV cache too
    assert verdict(con, "trtllm-pytorch", "a100-sxm-80gb", "bf16", "bf16")["runs"]
    assert verdict(con, "trtllm-pytorch", "l40s", "fp8", "fp8")["runs"]                 # Ada, 8.9
    assert not verdict(con, "trtllm-pytorch", "h100-sxm-80gb", "nvfp4", "bf16")["runs"]  # FP4 from Blackwell
    assert verdict(con, "trtllm-pytorch", "b200", "nvfp4", "fp8")["runs"]


@pytest.mark.parametrize("eid", ["vllm-0.9-0.16", "vllm-0.17-0.19", "vllm-0.20", "vllm-0.21", "vllm-0.22-0.26",
                                 "vllm-0.33", "sglang-0.5", "trtllm-pytorch", "first-principles"])
def test_h100_fp8_allowed_everywhere(con, eid):
    v = verdict(con, eid, "h100-sxm-80gb", "fp8", "fp8")
    assert v["runs"] and v["reason"] is None, v


def test_the_mac_runs_vllm_only_on_its_cpu_backend(con):
    rows = con.execute("SELECT weights_dtype, kv_dtype, supported, runs, platform_id, reason FROM engine_support"
                       " WHERE engine_id = 'vllm-0.33' AND hardware_id = 'm3-ultra-96gb'").fetchall()
    assert rows and not any(r[3] for r in rows)                    # nothing runs on the GPU memory model
    assert {r[4] for r in rows} == {"cpu"}
    bf16 = {(w, k): (s, why) for w, k, s, _, _, why in rows}
    assert bf16[("bf16", "bf16")][0] and not bf16[("fp8", "bf16")][0]   # bf16 weights run there, fp8 do not
    why = bf16[("fp8", "fp8")][1]
    assert why.startswith("vllm-0.33 runs m3-ultra-96gb only on its CPU backend (platforms/__init__.py 0.33.0:193")
    assert "vLLM has no Metal backend" in why and "VLLM_CPU_KVCACHE_SPACE" in why
    assert verdict(con, "first-principles", "m3-ultra-96gb", "fp8", "fp8")["runs"]   # not an engine: unchecked


def test_rocm_fp8_by_architecture_moves_with_the_release(con):
    # supports_fp8(): gfx94/gfx95/gfx12 in 0.19.0 (rocm.py:748-749); on_gfx9() (gfx90a too) from 0.20.0
    old = verdict(con, "vllm-0.17-0.19", "mi250x", "fp8", "bf16")
    assert not old["runs"] and "one of cdna3, cdna4" in old["reason"] and old["reason"].endswith("mi250x is cdna2")
    assert verdict(con, "vllm-0.20", "mi250x", "fp8", "bf16")["runs"]
    assert verdict(con, "vllm-0.17-0.19", "mi300x", "fp8", "fp8")["runs"]


def test_a_device_no_platform_takes(con):
    v = verdict(con, "vllm-0.33", "gaudi3", "bf16", "bf16")
    assert v["reason"] == ("vllm-0.33 has no platform for gaudi3 (Intel gaudi): it runs on CUDA platform, ROCm"
                           " platform, TPU platform, CPU backend only (platforms/__init__.py 0.33.0:231-237"
                           " builtin_platform_plugins (tpu, cuda, rocm, xpu, cpu))")
    assert verdict(con, "vllm-0.33", "generic-80gb", "fp8", "fp8")["runs"]      # no architecture: not judged


def test_plans_refuse_with_the_reason(con):
    rows = con.execute(
        "SELECT weights_dtype, feasible, reason, max_context_tokens FROM plans(10, 8192, 0.05)"
        " WHERE model_id = 'llama-3.1-8b' AND hardware_id = 't4' AND engine_id = 'vllm-0.9-0.16' AND tp = 1"
        " AND kv_dtype = 'bf16' AND weights_dtype IN ('bf16', 'fp8')").fetchall()
    got = {w: (f, r, c) for w, f, r, c in rows}
    assert not got["fp8"][0] and got["fp8"][1].startswith("platform: fp8 weights need compute capability ≥ 8.0")
    assert got["fp8"][2] is None                                   # no context mends it
    assert not (got["bf16"][1] or "").startswith("platform:")


def test_plan_warns_when_the_release_records_no_support(con):
    # vllm-0.8 has no support: block (not read for this), so a T4 fp8 plan under it is not checked: the plan
    # says so; vllm-0.33 records its support, and first principles is not an engine — no such warning there
    from kvreg.plan import plan, plan_warnings

    kw = dict(users=8, context_tokens=8192, tpot_s=0.08, weights_dtypes=["fp8"], kv_dtypes=["bf16"], hardware=["t4"])
    unchecked = [w for w in plan_warnings(plan(con, "llama-3.1-8b", engine="vllm-0.8", **kw))
                 if "records no platform support" in w]
    assert unchecked and "vllm-0.8" in unchecked[0]
    for engine in ("vllm-0.33", "first-principles"):
        assert not [w for w in plan_warnings(plan(con, "llama-3.1-8b", engine=engine, **kw))
                    if "records no platform support" in w]


def test_fit_warns(con):
    from kvreg.fit import fit, fit_warnings

    r = fit(con, "llama-3.1-8b", "t4", engine="vllm-0.9-0.16", weights_dtype="fp8", kv_dtype="bf16",
            contexts=[8192])
    assert r.support_reason.startswith("fp8 weights need compute capability ≥ 8.0")
    assert any(w.startswith("Warning: fp8 weights need compute capability ≥ 8.0") and "kvreg plan` does not" in w
               for w in fit_warnings(r))
    ok = fit(con, "llama-3.1-8b", "h100-sxm-80gb", engine="vllm-0.33", weights_dtype="fp8", kv_dtype="fp8",
             contexts=[8192])
    assert ok.support_reason is None


SUPPORT = {
    "platforms_source": "fixture", "platforms_cite": "list.py:1",
    "platforms": [{"id": "gpu", "label": "GPU platform", "vendors": ["test"], "weights_dtypes": ["bf16", "fp8"],
                   "kv_dtypes": ["bf16", "fp8"], "source": "fixture", "cite": "gpu.py:2"},
                  {"id": "host", "label": "host backend", "architectures": ["h1"], "weights_dtypes": ["bf16"],
                   "kv_dtypes": ["bf16"], "sized": False, "source": "fixture", "cite": "host.py:3",
                   "note": "its memory is not planned here"}],
    "precisions": [{"id": "gpu-fp8", "platform": "gpu", "weights": ["fp8"], "kv": ["fp8"], "method": "fp8",
                    "min_capability": 8.9, "source": "fixture", "cite": "fp8.py:4"}],
}


def fixture_con(support=SUPPORT):
    hw = {"old": hardware_entry("old", architecture="a1", compute_capability=8.0),
          "new": hardware_entry("new", architecture="a2", compute_capability=9.0),
          "box": hardware_entry("box", vendor="other", architecture="h1"),
          "alien": hardware_entry("alien", vendor="other", architecture="z9")}
    return con_for(models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 8,
                                                           "head_dim": 128}]}},
                   hardware=hw, engines={"first-principles": engine_entry(),
                                         "fp-checked": engine_entry("fp-checked", support=support)})


def test_fixture_rules():
    con = fixture_con()
    assert verdict(con, "fp-checked", "new", "fp8", "fp8")["runs"]
    old = verdict(con, "fp-checked", "old", "fp8", "bf16")
    assert old["reason"] == "fp8 weights need compute capability ≥ 8.9 in fp-checked on GPU platform (fp8: fp8.py:4): old is 8.0"
    assert verdict(con, "fp-checked", "old", "bf16", "fp8")["reason"].startswith("a fp8 KV cache needs compute capability ≥ 8.9")
    assert verdict(con, "fp-checked", "old", "bf16", "bf16")["runs"]
    box = verdict(con, "fp-checked", "box", "bf16", "bf16")
    assert box["supported"] and not box["sized"] and not box["runs"]
    assert box["reason"] == "fp-checked runs box only on its host backend (host.py:3): its memory is not planned here"
    assert verdict(con, "fp-checked", "alien", "bf16", "bf16")["reason"] == (
        "fp-checked has no platform for alien (other z9): it runs on GPU platform, host backend only (list.py:1)")
    # an int8 the platform does not list
    assert "with weights in bf16, fp8 only (gpu.py:2): not int8" in verdict(con, "fp-checked", "new", "int8", "bf16")["reason"]
    # plans: the engine rows refused with the reason, first principles untouched
    rows = dict(con.execute("SELECT engine_id, reason FROM plans(1, 4096, 1.0) WHERE hardware_id = 'old'"
                            " AND weights_dtype = 'fp8' AND kv_dtype = 'bf16' AND tp = 1").fetchall())
    assert rows["fp-checked"].startswith("platform: fp8 weights need compute capability ≥ 8.9")
    assert rows["first-principles"] is None


@pytest.mark.parametrize("change, code", [
    ({"precisions": [{**SUPPORT["precisions"][0], "platform": "nope"}]}, "unknown-platform"),
    ({"precisions": [{**SUPPORT["precisions"][0], "min_capability": None}]}, "precision-rule-condition"),
    ({"precisions": [{**SUPPORT["precisions"][0], "weights": [], "kv": []}]}, "precision-rule-empty"),
    ({"platforms": [{**SUPPORT["platforms"][0], "vendors": []}]}, "platform-match"),
    ({"platforms": [SUPPORT["platforms"][0], SUPPORT["platforms"][0]], "precisions": []}, "duplicate-platform"),
    ({"platforms_source": "nowhere"}, "unknown-source"),
])
def test_bad_support_blocks_are_located_problems(change, code):
    support = {**SUPPORT, **change}
    if support["precisions"] and support["precisions"][0].get("min_capability", 0) is None:
        support["precisions"] = [{k: v for k, v in support["precisions"][0].items() if k != "min_capability"}]
    with pytest.raises(KvregError) as exc:
        fixture_con(support)
    codes = {p.code for p in exc.value.problems}
    assert code in codes, codes
    assert all(p.file.endswith("fp-checked.yaml") for p in exc.value.problems if p.code == code)

