"""What a release does when one request of max_model_len does not fit its KV pool, and SGLang's default cap on
running requests: both are release data (accounting.long_request, accounting.running_requests_rule), read by
engine_capacity_at (kvreg/sql/213, 220).

Hand-worked on Llama 3.1 8B in bf16 (32 layers × 8 KV heads × 128 head_dim × 2 tensors × 2 bytes = 128 KiB a
token) with a given KV memory, so no reserve model is involved.
"""

from __future__ import annotations

import pytest

GIB = 2**30
TOKEN_BYTES = 32 * 8 * 128 * 2 * 2   # 131,072 B


def capacity(con, available: int, contexts: list[int], engine: str, **knobs):
    """engine_capacity_at rows of llama-3.1-8b bf16/bf16 TP 1 at the release's default batched tokens."""
    extra = "".join(f", {k} := {v}" for k, v in knobs.items())
    cur = con.execute(
        f"SELECT * FROM engine_capacity_at(?, available_kv_bytes := ?{extra})"
        " WHERE model_id = 'llama-3.1-8b' AND kv_dtype = 'bf16' AND tp = 1 AND default_batched AND engine_id = ?"
        " ORDER BY max_model_len", [contexts, available, engine])
    cols = [d[0] for d in cur.description]
    return {r[cols.index("max_model_len")]: dict(zip(cols, r)) for r in cur.fetchall()}


def test_the_releases_say_what_they_do_with_a_long_request(con):
    rules = dict(con.execute("SELECT engine_id, long_request FROM engine_accounting").fetchall())
    assert {e for e, r in rules.items() if r == "cap_request_len"} == {"sglang-0.5", "trtllm-pytorch"}
    assert all(r == "refuse_start" for e, r in rules.items() if e.startswith("vllm-"))


def test_vllm_refuses_where_sglang_and_trtllm_start_and_cap_the_request(con):
    # 1 GiB holds 1 GiB ÷ 128 KiB = 8,192 tokens.  A 16,384-token request does not fit:
    #   vLLM (block 16): 512 blocks < 1,024 a request needs → check_enough_kv_cache_memory raises, it does not start;
    #   SGLang (page 1): 8,192 tokens < 16,384 → it starts and caps max_req_len at 8,191, serving no 16Ki request;
    #   TensorRT-LLM (block 32): 256 blocks < 512 → it starts and reduces max_seq_len to the pool.
    # At 4,096 every release starts and admits 8,192 ÷ 4,096 = 2.
    assert GIB // TOKEN_BYTES == 8192
    expect = {"vllm-0.33": (16, 512, 1024, False), "sglang-0.5": (1, 8192, 16384, True),
              "trtllm-pytorch": (32, 256, 512, True)}
    for engine, (block, blocks, per_request, starts) in expect.items():
        rows = capacity(con, GIB, [4096, 16384], engine)
        short, long = rows[4096], rows[16384]
        assert (long["block_size_tokens"], long["num_blocks"], long["blocks_per_request"]) == (block, blocks,
                                                                                              per_request)
        assert (short["starts"], short["request_len_capped"], short["admitted_seqs"]) == (True, False, 2)
        assert long["starts"] is starts and long["admitted_seqs"] == 0
        assert long["request_len_capped"] is starts            # capped exactly where it starts anyway
        assert long["refusal"] == (None if starts else "kv_cache")
        assert long["does_not_start"] is (not starts)


def test_a_capping_release_does_not_start_on_an_empty_pool(con):
    # SGLang raises "Not enough memory" only when max_total_num_tokens ≤ 0 (model_runner.py): 64 KiB holds no
    # 128 KiB token, so no block, and it does not start.
    row = capacity(con, 64 * 1024, [4096], "sglang-0.5")[4096]
    assert (row["num_blocks"], row["starts"], row["refusal"], row["admitted_seqs"]) == (0, False, "kv_cache", 0)


@pytest.mark.parametrize("tokens, context, expect", [
    # min(T // 2, min(max(⌊T ÷ L × 512⌋, 2048), 4096))
    (104_273, 40_960, 2048),      # ⌊1,303.4⌋ → at least 2,048; T // 2 = 52,136
    (1_707_904, 40_960, 4096),    # 21,348 → at most 4,096
    (665_690, 65_536, 4096),      # 5,200 → 4,096
    (409_600, 65_536, 3200),      # 409,600 ÷ 65,536 × 512 = 3,200, inside the clamp
    (3_000, 8_192, 1500),         # T // 2 = 1,500 binds below the 2,048 floor
])
def test_sglang_running_requests_rule(con, tokens, context, expect):
    (got,) = con.execute("SELECT engine_running_requests(?, ?, running_requests_pool_divisor, "
                         "running_requests_per_context, running_requests_min_requests, running_requests_max_requests)"
                         " FROM engine_accounting WHERE engine_id = 'sglang-0.5'", [tokens, context]).fetchone()
    assert got == expect


def test_sglang_admission_is_capped_by_its_pool_not_a_fixed_256(con):
    # 50 GiB = 409,600 tokens.  At 1,024: 400 sequences fit; SGLang's cap is min(204,800, 4,096) = 4,096, so it
    # admits 400 (a fixed max_num_seqs of 256 would have said 256).  At 65,536 the cap is 3,200 (6 admitted), at
    # 131,072 it is 2,048.  With --max-running-requests 128 the knob caps it.  A 256 MiB pool (2,048 tokens) at
    # 1,024: T // 2 = 1,024 binds.
    rows = capacity(con, 50 * GIB, [1024, 65536, 131072], "sglang-0.5")
    assert rows[1024]["logged_kv_tokens"] == 50 * GIB // TOKEN_BYTES == 409_600
    assert [(rows[c]["max_num_seqs"], rows[c]["admitted_seqs"]) for c in (1024, 65536, 131072)] == [
        (4096, 400), (3200, 6), (2048, 3)]
    knob = capacity(con, 50 * GIB, [1024], "sglang-0.5", max_num_seqs=128)[1024]
    assert (knob["max_num_seqs"], knob["admitted_seqs"]) == (128, 128)
    small = capacity(con, 256 * 2**20, [1024], "sglang-0.5")[1024]
    assert (small["logged_kv_tokens"], small["max_num_seqs"], small["admitted_seqs"]) == (2048, 1024, 2)
    # vLLM keeps its max_num_seqs default
    vllm = capacity(con, 50 * GIB, [1024], "vllm-0.33")[1024]
    assert (vllm["max_num_seqs"], vllm["admitted_seqs"]) == (256, 256)


def test_capacity_and_plans_carry_the_capped_request(con):
    """capacity_at says the release capped the request (and admits 0); a plan gives the release's own reason."""
    cap = con.execute("SELECT engine_id, engine_starts, engine_request_len_capped, max_seqs, max_num_seqs"
                      " FROM capacity_at([524288], only_models := ['llama-3.1-8b'], only_hardware := ['h100-sxm-80gb'],"
                      " only_engines := ['sglang-0.5', 'vllm-0.33'])"
                      " WHERE weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp = 1 AND default_batched"
                      " ORDER BY engine_id").fetchall()
    assert cap == [("sglang-0.5", True, True, 0, 2048), ("vllm-0.33", False, False, 0, 1024)]
    plans = dict(con.execute(
        "SELECT engine_id, reason FROM plans(10, 524288, 10.0, only_models := ['llama-3.1-8b'],"
        " only_hardware := ['h100-sxm-80gb'], only_engines := ['sglang-0.5', 'vllm-0.33'])"
        " WHERE weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp = 1").fetchall())
    assert plans["vllm-0.33"] == "engine: refuses to start (one request of this context does not fit its KV cache)"
    assert plans["sglang-0.5"] == ("engine: starts, but caps the request length below this context (one request"
                                   " of it does not fit its KV cache)")
