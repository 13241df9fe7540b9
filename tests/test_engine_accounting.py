"""Engine accounting: release entries as data, block arithmetic against real vLLM startup logs.

Logged "Available KV cache memory" is printed with two decimals, so a log pins the
block count only to an interval; the assertions are exact within that interval and
exact at the block count the log implies (engine_accounting.md §4).
"""

from __future__ import annotations

import pytest

from tests.conftest import one

GIB = 2**30


def cap(con, avail_gib, model, engine, L, T=8192, tp=1, kv="bf16"):
    return one(con, "SELECT * FROM engine_capacity_for_memory(?, ?, ?) WHERE model_id = ? AND engine_id = ?"
                    " AND tp = ? AND kv_dtype = ?", [avail_gib * GIB, L, T, model, engine, tp, kv])


def calib(con, oid):
    return one(con, "SELECT * FROM calibration WHERE observation_id = ?", [oid])


# --- release data -------------------------------------------------------------------

def test_default_util_is_0_9_through_0_19_and_0_92_from_0_20(con):
    rows = dict(con.execute("SELECT engine_id, gpu_memory_utilization FROM engines WHERE engine = 'vllm'").fetchall())
    assert rows == {"vllm-v0": 0.9, "vllm-0.8": 0.9, "vllm-0.9-0.16": 0.9, "vllm-0.17-0.19": 0.9, "vllm-0.20": 0.92,
                    "vllm-0.21": 0.92,
                    "vllm-0.22-0.26": 0.92, "vllm-0.33": 0.92}


def test_first_principles_has_no_accounting(con):
    assert con.execute("SELECT count(*) FROM engine_accounting WHERE engine_id = 'first-principles'").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM engine_capacity WHERE engine_id = 'first-principles'").fetchone()[0] == 0


def test_every_quirk_trigger_is_a_column_of_engine_capacity(con):
    cols = {d[0] for d in con.execute("SELECT * FROM engine_capacity LIMIT 0").description}
    triggers = {r[0] for r in con.execute("SELECT DISTINCT trigger FROM engine_quirks").fetchall()}
    assert triggers and triggers <= cols | {"padding_layers"}


# --- dense GQA logs: exact within print rounding, exact at the implied block count ---

@pytest.mark.parametrize("oid, blocks, tokens, conc", [
    ("vllm-log-17", 22900, 366400, 8.95),    # Qwen3-8B, 50.32 GiB, L 40,960
    ("vllm-log-18", 17235, 275760, 6.73),    # Qwen3-32B TP 2, 33.66 GiB per GPU
    ("vllm-log-12", 25633, 410128, 3.13),    # Llama-3.1-8B + one EAGLE draft layer, 51.63 GiB
    ("vllm-log-14", 2666, 42656, 1.30),      # Qwen3-14B, 6.51 GiB, L 32,768
    ("vllm-log-21", 12137, 194192, 4.74),    # Qwen3-14B-AWQ on an L40S, vLLM 0.28 (tokens = int(conc × L))
    ("vllm-log-22", 12704, 203264, 198.50),  # same, L 1,024, util 0.95
    ("vllm-log-23", 3727, 59632, 1.46),      # L4
    ("vllm-log-24", 11782, 188512, 4.60),    # L4 × 2, TP 2
    ("vllm-log-25", 11500, 184000, 4.49),    # L4 × 2, PP 2: each stage holds 20 of 40 layers
    ("vllm-log-01", 1952, 31232, 1.56),      # V0, Llama-3.1-8B on an RTX 3090, L 20,000
    ("vllm-log-02", 1478, 23648, 0.82),      # V0, L 29,000 (does not start)
])
def test_dense_log_reproduced(con, oid, blocks, tokens, conc):
    r = calib(con, oid)
    assert r["logged_tokens"] == tokens
    assert r["block_tokens_low"] <= tokens <= r["block_tokens_high"]
    assert abs(r["block_tokens"] - tokens) <= 2 * r["block_size_tokens"]   # print rounding of x.xx GiB
    assert r["block_num_blocks"] - 3 <= blocks <= r["block_num_blocks"] + 3
    # at the block count the log implies, tokens and concurrency are exact
    rule_tokens, rule_conc = con.execute(
        "SELECT logged_tokens_rule, concurrency_rule FROM engine_accounting WHERE engine_id = ?",
        [r["engine_id"]]).fetchone()
    c, t = con.execute(
        "SELECT engine_concurrency(?, ?, ?, ?, ?), engine_logged_tokens(?, 1, ?, engine_concurrency(?, ?, ?, ?, ?), ?, ?)",
        [blocks, r["blocks_per_request"], r["block_size_tokens"], r["max_model_len"], rule_conc,
         blocks, r["block_size_tokens"], blocks, r["blocks_per_request"], r["block_size_tokens"], r["max_model_len"],
         rule_conc, r["max_model_len"], rule_tokens]).fetchone()
    assert (t, round(c, 2)) == (tokens, conc)


def test_qwen3_8b_at_the_implied_pool_is_exact(con):
    # 22,900 blocks × 36 layers × 64 KiB pages: the pool the 50.32 GiB line was rounded from
    r = cap(con, 22900 * 36 * 65536 / GIB, "qwen3-8b", "vllm-0.9-0.16", 40960)
    assert (r["num_blocks"], r["logged_kv_tokens"], round(r["logged_max_concurrency"], 2)) == (22900, 366400, 8.95)
    assert r["page_bytes"] == 65536 and r["group_size"] == 36 and r["num_groups"] == 1


def test_qwen3_32b_tp2_and_eagle_at_implied_pools_are_exact(con):
    r = cap(con, 17235 * 64 * 32768 / GIB, "qwen3-32b", "vllm-0.9-0.16", 40960, tp=2)
    assert (r["logged_kv_tokens"], round(r["logged_max_concurrency"], 2)) == (275760, 6.73)
    r = cap(con, 25633 * 33 * 65536 / GIB, "llama-3.1-8b+eagle-llama3.1-instruct-8b", "vllm-0.9-0.16", 131072)
    assert (r["group_size"], r["logged_kv_tokens"], round(r["logged_max_concurrency"], 2)) == (33, 410128, 3.13)


def test_release_0_22_logs_concurrency_times_length(con):
    # tokens = int(conc × L); for a dense model with L % 16 == 0 it equals blocks × 16 (§4)
    r = cap(con, 12137 * 40 * 65536 / GIB, "qwen3-14b", "vllm-0.22-0.26", 40960)
    assert r["logged_kv_tokens"] == 194192
    r = cap(con, 12137 * 40 * 65536 / GIB, "qwen3-14b", "vllm-0.22-0.26", 40010)  # 40,010 % 16 != 0
    assert r["logged_kv_tokens"] == int(12137 / 2501 * 40010) < 12137 * 16


def test_v0_log_that_did_not_start(con):
    r = calib(con, "vllm-log-02")
    assert r["logged_started"] is False
    assert r["block_num_blocks"] < r["blocks_per_request"]       # 1,479 blocks < cdiv(29,000, 16) = 1,813


def test_sliding_window_log_starcoder2(con):
    # All 30 layers slide over 4,096 tokens: a request holds cdiv(min(4095 + 8192, 16384), 16) + 1 = 769 blocks,
    # so 2,198,512 tokens (137,407 blocks) admit 178.68 requests of 16,384 tokens, not 134.19 (§2, PR #19029).
    r = calib(con, "vllm-log-08")
    assert r["blocks_per_request"] == 769
    assert round(r["implied_concurrency"], 2) == 178.68 == r["logged_concurrency"]
    assert r["hardware_id"] is None          # the GPU is not stated: no end-to-end check


def test_end_to_end_median_error_within_5_percent_on_dense_records(con):
    errs = [abs(e) for (e,) in con.execute(
        "SELECT e2e_error_pct FROM calibration WHERE e2e_error_pct IS NOT NULL AND layout_mode = 'single'"
        " AND reproducible").fetchall()]
    assert len(errs) >= 10
    errs.sort()
    median = (errs[len(errs) // 2] + errs[(len(errs) - 1) // 2]) / 2
    assert median < 5.0


def test_unreproducible_records_say_why(con):
    rows = con.execute("SELECT observation_id, missing, notes FROM calibration c JOIN observations o "
                       "USING (observation_id) WHERE block_tokens IS NULL AND implied_concurrency IS NULL").fetchall()
    assert rows
    for oid, missing, notes in rows:
        assert missing or notes, oid


# --- the seed's B300 case and gpt-oss-120b ------------------------------------------

def b300(con, engine):
    return one(con, "SELECT * FROM engine_capacity WHERE model_id = 'gemma-4-31b' AND hardware_id = 'b300'"
                    " AND engine_id = ? AND weights_dtype = 'fp8' AND kv_dtype = 'fp8' AND tp = 1"
                    " AND max_model_len = 262144 AND default_batched", [engine])


def test_b300_first_principles_about_11_million_tokens(con):
    r = b300(con, "vllm-0.9-0.16")
    assert 9.5e6 < r["first_principles_tokens"] < 11.5e6


@pytest.mark.parametrize("engine, trigger", [("vllm-v0", "sliding_stored_as_full"),
                                             ("vllm-0.8", "sliding_stored_as_full"),
                                             ("vllm-0.9-0.16", "grouped_min_block_report"),
                                             ("vllm-0.17-0.19", "grouped_min_block_report"),
                                             ("vllm-0.20", "grouped_min_block_report")])
def test_b300_engine_figure_an_order_of_magnitude_lower_and_named(con, engine, trigger):
    r = b300(con, engine)
    assert r["first_principles_tokens"] / r["logged_kv_tokens"] > 10       # the seed saw ~720,000 vs ~11 million
    assert 3e5 < r["logged_kv_tokens"] < 1e6
    assert r[trigger] is True
    assert con.execute("SELECT count(*) FROM engine_quirks WHERE engine_id = ? AND trigger = ?",
                       [engine, trigger]).fetchone()[0] == 1


def test_b300_gemma_grouping_and_padding(con):
    r = b300(con, "vllm-0.22-0.26")
    # 50 sliding + 10 full layers: group_size 10 → 5 sliding groups + 1 full group, no padding
    assert (r["group_size"], r["num_groups"], r["padding_layers"]) == (10, 6, 0)


def test_gpt_oss_120b_on_one_h100_does_not_start(con):
    r = one(con, "SELECT * FROM engine_capacity WHERE model_id = 'gpt-oss-120b' AND hardware_id = 'h100-sxm-80gb'"
                 " AND engine_id = 'vllm-0.9-0.16' AND weights_dtype = 'mxfp4' AND kv_dtype = 'bf16' AND tp = 1"
                 " AND max_model_len = 131072 AND default_batched")
    assert r["gpu_memory_utilization"] == 0.9
    assert r["available_kv_bytes"] < 0 and r["starts"] is False and r["admitted_seqs"] == 0
    assert r["does_not_start"] is True


def test_hybrid_gated_deltanet_log_reproduced_exactly(con):
    # Qwen3.6-35B-A3B on an RTX 5090, vLLM 0.24, fp8 KV, 6.01 GiB: the attention block grows to
    # 16·cdiv(2,146,304 B state page, 16·1,024 B) = 2,096 tokens so one attention page equals the state
    # page; 30 GDN + 10 full layers → group_size 10, 3 + 1 groups; 300 blocks; a request holds
    # cdiv(131,072, 2,096) = 63 attention blocks + 2 per GDN group (prefix-caching 'align' mode) = 69.
    r = calib(con, "vllm-log-28")
    assert (r["layout_mode"], r["num_groups"], r["block_size_tokens"]) == ("grouped", 4, 2096)
    assert (r["block_num_blocks"], r["blocks_per_request"]) == (300, 69)
    assert r["block_tokens_low"] == r["block_tokens"] == r["block_tokens_high"] == r["logged_tokens"] == 569878
    assert round(r["block_concurrency"], 2) == r["logged_concurrency"] == 4.35


def test_tp4_log_not_reproduced_documents_the_missing_setting(con):
    # Qwen3-235B-A22B-FP8 at TP 4: 8.11 GiB per rank gives 11,308 blocks (180,928 tokens), the log says
    # 178,880: the figure is one rank's, while num_blocks is the min over the four workers (§3) — not logged.
    r = calib(con, "vllm-log-13")
    assert r["block_tokens"] == 180928 and r["logged_tokens"] == 178880
    assert r["block_within_rounding"] is False
    assert r["reproducible"] is False and "min over the 4 TP workers" in r["missing"]


def test_gpt_oss_120b_log_negative_memory_predicted_end_to_end(con):
    # vllm#23278: 'Available KV cache memory: -2.14 GiB' at util 0.9; kvreg predicts a negative pool too
    r = calib(con, "vllm-log-53")
    assert r["logged_started"] is False and r["logged_available_kv_bytes"] < 0
    assert r["gpu_memory_utilization"] == 0.9
    assert r["e2e_available_kv_bytes"] < 0 and r["e2e_starts"] is False


def test_every_vllm_quirk_sentence_cites_the_engine_source(con):
    """A quirk sentence is printed in the report and by `kvreg fit --engine`: it names where vLLM does it (a source
    file under vllm/ or docs/, or the PR), not only kvreg's notes (engine_accounting.md), which a reader of the
    report does not have.  The report's tp_heads sentence cites QKVParallelLinear the same way (kvreg.fit)."""
    import re

    rows = con.execute("SELECT engine_id, quirk_id, text FROM engine_quirks WHERE engine_id LIKE 'vllm-%'").fetchall()
    assert len(rows) >= 20
    cites = re.compile(r"\b(vllm|docs)/[\w/]+\.(py|md)\b|\bPR #\d+")
    assert [(e, q) for e, q, t in rows if not cites.search(t)] == []
    # the V0 engine has no check_enough_kv_cache_memory (a V1 function): it refuses in worker.py
    (v0,) = con.execute("SELECT text FROM engine_quirks WHERE engine_id = 'vllm-v0' AND trigger = 'does_not_start'"
                        ).fetchone()
    assert "vllm/worker/worker.py raise_if_cache_size_invalid" in v0 and "check_enough" not in v0


@pytest.mark.parametrize("engine_id, own_words", [
    # TpModelWorker caps max_req_len at min(context_len - 1, max_total_num_tokens - 1) and asserts only "Memory pool
    # size is too small"; validate_input_length rejects the longer inputs (sglang managers/tp_worker.py, utils.py)
    ("sglang-0.5", ["max_total_num_tokens", "validate_input_length"]),
    # KVCacheManager reduces the window and max_seq_len to what the pool's blocks allow (resource_manager.py)
    ("trtllm-pytorch", ["_validate_and_adjust_attention_windows"]),
])
def test_long_request_quirk_says_the_engine_starts(con, engine_id, own_words):
    """Only vLLM refuses to start when one request of max_model_len does not fit the pool
    (check_enough_kv_cache_memory is a vLLM function): SGLang and TensorRT-LLM start and cap the request length.
    Their quirk sentence says so, in their own code's words, and never borrows vLLM's."""
    (text,) = con.execute("SELECT text FROM engine_quirks WHERE engine_id = ? AND trigger = 'request_len_capped'",
                          [engine_id]).fetchone()
    assert "still starts" in text and all(w in text for w in own_words)
    # the sentence is selected by the rule the release's data states (engine_capacity request_len_capped)
    (rule,) = con.execute("SELECT long_request FROM engine_accounting WHERE engine_id = ?", [engine_id]).fetchone()
    assert rule == "cap_request_len"
    assert "check_enough" not in text and "refuses to start" not in text
