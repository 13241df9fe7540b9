"""The engine reserve as vLLM computes it (kvreg/sql/204_engine_reserve.sql), release data with
``extends:``, and layers that hold no pool.

The reserve figures are checked against the budget lines of the 18 complete vLLM 0.19.0 H100-80GB
startup logs (shared data vllm-0.19-h100-startups/results.csv): "non_torch_forward" and
"activation_memory" are printed there with two decimals, so a prediction within 0.015 GiB of the
printed value is within print rounding; the multimodal Gemma-3 logs profile a vision encoder
that kvreg does not model and sit 0.2 GiB above.
"""

from __future__ import annotations

import pytest

from kvreg.problems import KvregError
from kvreg.registry import load_registry
from tests.conftest import one
from tests.registry_factory import SOURCE, write_project

GIB = 2**30


def pool(con, model, tp, engine="vllm-0.17-0.19", hw="h100-sxm-80gb", T=8192):
    return one(con, "SELECT p.* FROM engine_memory_pools p JOIN models m USING (model_id) WHERE p.model_id = ?"
                    " AND p.tp = ? AND p.engine_id = ? AND p.hardware_id = ? AND p.max_num_batched_tokens = ?"
                    " AND p.weights_dtype = m.dtype", [model, tp, engine, hw, T])


# (log file, registry model, tp, logged non_torch_forward GiB, logged activation_memory GiB)
H100_LOGS = [
    ("deepseek-ai-deepseek-v2---h100-80gb--tp1pp1dp1--8192.log", "deepseek-v2-lite", 1, 0.26, 1.93),
    ("fp8dyn-llama-3-3-70b--h100-80gb--tp2pp1dp1--8192.log", "llama-3.3-70b", 2, 2.10, 1.96),
    ("fp8dyn-llama-3-3-70b--h100-80gb--tp4pp1dp1--8192.log", "llama-3.3-70b", 4, 2.21, 1.97),
    ("fp8dyn-redhatai-qwen2-5---h100-80gb--tp1pp1dp1--8192.log", "qwen2.5-7b", 1, 0.24, 2.21),
    ("google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log", "gemma-2-9b", 1, 0.25, 3.65),
    ("microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log", "phi-4", 1, 0.25, 1.52),
    ("moonshotai-kimi-dev-72b--h100-80gb--tp2pp1dp1--8192.log", "qwen2.5-72b", 2, 2.09, 2.29),
    ("moonshotai-kimi-dev-72b--h100-80gb--tp4pp1dp1--8192.log", "qwen2.5-72b", 4, 2.21, 2.29),
    ("qwen-qwen3-30b-a3b--h100-80gb--tp1pp1dp1--8192.log", "qwen3-30b-a3b", 1, 0.27, 2.68),
    ("w4a16-redhatai-lla--h100-80gb--tp1pp1dp1--8192-dtf16.log", "llama-3.1-8b", 1, 0.25, 1.89),
]


@pytest.mark.parametrize("log, model, tp, non_torch_gib, peak_gib", H100_LOGS)
def test_reserve_matches_the_h100_budget_lines(con, log, model, tp, non_torch_gib, peak_gib):
    p = pool(con, model, tp)
    assert p["max_num_seqs"] == 1024 and p["default_batched"]
    assert abs(p["non_torch_bytes"] / GIB - non_torch_gib) <= 0.025, log
    peak = (p["reserve_bytes"] - p["non_torch_bytes"]) / GIB        # 0.19 subtracts no CUDA graphs
    assert abs(peak - peak_gib) <= 0.035, (log, peak)


def test_gemma_3_vision_profile_is_the_known_gap(con):
    # the encoder outputs of the multimodal profile are not modelled: 3.77 predicted, 3.99 logged
    peak = (lambda p: (p["reserve_bytes"] - p["non_torch_bytes"]) / GIB)(pool(con, "gemma-3-27b", 1))
    assert 3.99 - 0.25 < peak < 3.99


def test_sampler_bound_peak_worked_by_hand(con):
    # Qwen2.5-7B, N = 1024, V = 152,064, T = 8192, h = 3584 on vLLM 0.19 (Triton sampler):
    # 14 B × N × V + 4 B × 132 rows × V + T × h × 2 B, plus 64 MiB of cuBLAS workspace
    p = pool(con, "qwen2.5-7b", 1)
    want = 14 * 1024 * 152064 + 4 * 132 * 152064 + 8192 * 3584 * 2
    assert p["sampler_bytes"] == want
    assert p["reserve_bytes"] == p["non_torch_bytes"] + 64 * 2**20 + want


def test_forward_bound_peak_codellama_log(con):
    # CodeLlama-7B (vocab 32,000: the forward dominates): T × (3h + 3I) × 2 B + 64 MiB = 0.754 GiB;
    # its 0.19.0 H100 log prints "torch peak memory increase" 0.77 GiB
    fwd = con.execute("SELECT engine_forward_peak_bytes(8192, 4096, 11008, 1, 2, 3, 3, 0)").fetchone()[0]
    sampler = con.execute("SELECT engine_sampler_peak_bytes(1024, 32000, 14, 132, 8192, 4096, 2, true)").fetchone()[0]
    assert fwd > sampler
    assert abs((fwd + 64 * 2**20) / GIB - 0.77) < 0.02


def test_moe_workspace_qwen3_30b(con):
    # TritonExperts: workspace13 = T·k·max(I, h), workspace2 = T·k·max(2I, h); k 8, I 768, h 2048
    assert pool(con, "qwen3-30b-a3b", 1)["moe_workspace_bytes"] == 2 * (8192 * 8 * 2048 + 8192 * 8 * 2048)


def test_multi_gpu_non_torch_only_over_links(con):
    assert pool(con, "qwen3-32b", 2)["non_torch_bytes"] == pytest.approx(2.1 * GIB, abs=1)
    # two L4 (PCIe, no link domain): no NVLink all-reduce buffers; vllm-log-24 implies ≤ 0.3 GiB
    assert pool(con, "qwen3-14b", 2, hw="l4", T=2048)["non_torch_bytes"] == pytest.approx(0.25 * GIB, abs=1)


def test_sort_sampler_before_0_17_reserves_more(con):
    old, new = pool(con, "qwen3-8b", 1, engine="vllm-0.9-0.16"), pool(con, "qwen3-8b", 1)
    assert old["sampler_bytes"] > 2 * new["sampler_bytes"]


def test_cuda_graphs_subtracted_from_0_20_not_with_enforce_eager(con):
    assert pool(con, "qwen3-8b", 1)["cudagraph_bytes"] == 0
    p = pool(con, "qwen3-8b", 1, engine="vllm-0.20")
    assert p["cudagraph_bytes"] > 0
    assert con.execute("SELECT engine_reserve_bytes(1, 2, 3, 4, 5, 100, true), engine_reserve_bytes(1, 2, 3, 4, 5, 100, false)"
                       ).fetchone() == (11, 111)


def test_h100_sampler_log_end_to_end(con):
    # vllm-log-17 (Qwen3-8B, H100, ~0.10–0.11, sort sampler): 50.32 GiB logged; end to end within 2 %
    r = one(con, "SELECT * FROM calibration WHERE observation_id = 'vllm-log-17'")
    assert abs(r["e2e_error_pct"]) < 2


# --- releases: 0.20 vs 0.21 (vllm-project/vllm#43308) ----------------------------------------

def test_0_21_prints_concurrency_times_length_at_the_same_memory(con):
    # Gemma-4-31B: same pool and admission in both releases, but 0.21 prints conc × L, ~10× 0.20's figure
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT engine_id, num_blocks, logged_max_concurrency, logged_kv_tokens FROM engine_capacity_for_memory(?, 262144, 8192)"
        " WHERE model_id = 'gemma-4-31b' AND tp = 1 AND kv_dtype = 'bf16' AND engine_id IN ('vllm-0.20', 'vllm-0.21')",
        [50e9]).fetchall()}
    (b20, c20, t20), (b21, c21, t21) = rows["vllm-0.20"], rows["vllm-0.21"]
    assert (b20, c20) == (b21, c21)
    assert t21 == int(c21 * 262144)
    assert t21 > 8 * t20


def test_extends_merges_parent_and_child(con):
    reg = load_registry(".")
    e20, e21 = reg.entries["engine"]["vllm-0.20"].entry, reg.entries["engine"]["vllm-0.21"].entry
    assert e21.extends == "vllm-0.20" and e21.gpu_memory_utilization.value == 0.92
    assert e21.accounting.reserve.cudagraph.value == e20.accounting.reserve.cudagraph.value
    assert e21.accounting.logged_tokens_rule.value == "concurrency_x_len"
    assert "grouped-min-block-report" in {q.id for q in e20.accounting.quirks}
    assert "grouped-min-block-report" not in {q.id for q in e21.accounting.quirks}
    assert {s.id for s in e21.sources} >= {"eacc", "h100_logs", "vllm_cache", "issue_43308"}


def _engines_project(tmp_path, engines):
    write_project(tmp_path, engines={k: {"id": k, **v} for k, v in engines.items()})
    return tmp_path


BASE = {"engine": "first-principles", "gpu_memory_utilization": 0.9, "runtime_reserve": "1 GiB", "sources": SOURCE,
        # every bare number is the fixture source's; a child inherits the mapping (extends deep-merges)
        "field_sources": {SOURCE[0]["id"]: ["gpu_memory_utilization", "runtime_reserve", "block_size"]}}


def test_extends_unknown_parent_is_located(tmp_path):
    root = _engines_project(tmp_path, {"a": {"extends": "vllm-0.199", "name": "A"}})
    with pytest.raises(KvregError) as exc:
        load_registry(root)
    (p,) = [p for p in exc.value.problems if p.code == "unknown-parent"]
    assert (p.file, p.key, p.line) == ("registry/engines/a.yaml", "extends", 2)


def test_extends_cycle_is_located(tmp_path):
    root = _engines_project(tmp_path, {"a": {"extends": "b", **BASE}, "b": {"extends": "a", **BASE}})
    with pytest.raises(KvregError) as exc:
        load_registry(root)
    probs = [p for p in exc.value.problems if p.code == "extends-cycle"]
    assert {p.file for p in probs} == {"registry/engines/a.yaml", "registry/engines/b.yaml"}
    assert all("a → b → a" in p.message or "b → a → b" in p.message for p in probs)


def test_extends_inherits_and_overrides(tmp_path):
    root = _engines_project(tmp_path, {"p": {**BASE, "block_size": 32},
                                       "c": {"extends": "p", "name": "C", "runtime_reserve": "2 GiB"}})
    reg = load_registry(root)
    c = reg.entries["engine"]["c"].entry
    assert (c.block_size, c.runtime_reserve.value, c.gpu_memory_utilization.value) == (32, 2 * GIB, 0.9)


# --- layers without KV or state ----------------------------------------------------------------

def test_mlp_only_layers_hold_no_pool(con):
    # Nemotron-H-8B: 24 Mamba2 + 4 attention + 24 MLP-only layers. group_size = min(24, 4) = 4 →
    # 6 Mamba groups + 1 attention group (the MLP layers make none); 1,040-token blocks.
    r = one(con, "SELECT * FROM engine_kv_layout WHERE engine_id = 'vllm-0.17-0.19' AND model_id = 'nemotron-h-8b'"
                 " AND tp = 1 AND kv_dtype = 'bf16'")
    assert (r["num_groups"], r["block_size_tokens"]) == (7, 1040)
    per_req = dict(con.execute(
        "SELECT max_model_len, blocks_per_request FROM engine_request_blocks WHERE engine_id = 'vllm-0.17-0.19'"
        " AND model_id = 'nemotron-h-8b' AND tp = 1 AND kv_dtype = 'bf16' AND max_num_batched_tokens = 8192"
        " AND max_model_len IN (4096, 131072)").fetchall())
    assert per_req == {4096: 4 + 6, 131072: 127 + 6}          # cdiv(L, 1040) + one state block per Mamba group


def test_no_layer_without_bytes_is_in_the_pool(con):
    n = con.execute("SELECT count(*) FROM engine_layer_specs WHERE in_pool AND coalesce(token_bytes, 0) = 0"
                    " AND coalesce(state_bytes, 0) = 0").fetchone()[0]
    assert n == 0
    assert con.execute("SELECT count(*) FROM engine_layer_specs WHERE kind = 'mlp'").fetchone()[0] > 0


# --- speculative decoding shares the pool ----------------------------------------------------------

def test_mtp_speculative_decoding_vllm_log_26(con):
    # Qwen3.6-27B + its MTP head, num_speculative_tokens 3, TP 2, fp8 KV (vllm-log-26, 2 × RTX 3090):
    # the MTP layer joins the 16 full layers (group size 17, 3 Gated-DeltaNet groups with 3 padding slots);
    # each conv state gains 3 rows (3 + 3) × 5120 × 2 B, so the state page is 24·128·128·4 + 61,440 B and
    # the attention block grows to 1,600 tokens; each recurrent group holds 2 + 3 blocks per request.
    sid = "qwen3.6-27b+qwen3.6-27b-mtp+spec3"
    lay = one(con, "SELECT * FROM engine_kv_layout WHERE engine_id = 'vllm-0.21' AND model_id = ? AND tp = 2"
                   " AND kv_dtype = 'fp8'", [sid])
    assert (lay["num_groups"], lay["group_size"], lay["block_size_tokens"]) == (4, 17, 1600)
    r = one(con, "SELECT blocks_per_request FROM engine_request_blocks WHERE engine_id = 'vllm-0.21' AND model_id = ?"
                 " AND tp = 2 AND kv_dtype = 'fp8' AND max_model_len = 262144 AND max_num_batched_tokens = 8192", [sid])
    assert r["blocks_per_request"] == 262144 // 1600 + 1 + 3 * (2 + 3)        # 179
    # the log's 620,944 tokens and 2.37x are 424 blocks exactly under 0.21's print rule
    c, t = con.execute("SELECT engine_concurrency(424, 179, 1600, 262144, 'blocks_over_request_blocks'),"
                       " engine_logged_tokens(424, 4, 1600, engine_concurrency(424, 179, 1600, 262144,"
                       " 'blocks_over_request_blocks'), 262144, 'concurrency_x_len')").fetchone()
    assert (round(c, 2), t) == (2.37, 620944)
    # without speculative decoding the same model holds 174 blocks per request at 1,568-token blocks
    base = one(con, "SELECT blocks_per_request FROM engine_request_blocks WHERE engine_id = 'vllm-0.21'"
                    " AND model_id = 'qwen3.6-27b' AND tp = 2 AND kv_dtype = 'fp8' AND max_model_len = 262144"
                    " AND max_num_batched_tokens = 8192")
    assert base["blocks_per_request"] == 174
