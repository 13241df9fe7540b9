"""Workloads as people describe them (issue 13 item 5): input/output lengths, a shared prefix, n samples, a rate.

Case: Llama-3.1-8B, bf16 weights and KV, one H100 SXM, a sequence holding 8,192 tokens (7,192 in + 1,000
out), TPOT 50 ms.  The expected admissions are worked here by hand from the pool and block bytes the views
give (engine_capacity_at's available KV memory, memory_pools' first-principles pool) and from the model's
geometry: 2 · 32 layers · 8 KV heads · 128 · 2 B = 131,072 B per token; vLLM's block of 16 tokens.
"""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from tests.conftest import copy_db, one

TOKEN = 2 * 32 * 8 * 128 * 2          # bytes of KV per token, Llama-3.1-8B, bf16 (config.json geometry)
BS = 16                                # vLLM's default block_size (vllm/config/cache.py)
L, IN, OUT, P = 8192, 7192, 1000, 3000
H100_USABLE = 81089 * 2**20            # hardware/h100-sxm-80gb.yaml memory_usable
RESERVE = 6 * 2**30                    # registry/engines/first-principles.yaml


def plan_row(con, engine, **workload):
    args = ", ".join(f"{k} := ?" for k in workload)
    return one(con, f"SELECT * FROM plans(?, ?, ?{', ' + args if args else ''})"
                    " WHERE model_id = 'llama-3.1-8b' AND hardware_id = 'h100-sxm-80gb' AND tp = 1"
                    " AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND engine_id = ?",
               (200, L, 0.05, *workload.values(), engine))


def engine_blocks(con) -> int:
    """num_blocks of vllm-0.17-0.19 for this pairing, from the release's available KV memory and the block bytes."""
    e = one(con, "SELECT * FROM engine_capacity_at([8192]) WHERE model_id = 'llama-3.1-8b'"
                 " AND hardware_id = 'h100-sxm-80gb' AND engine_id = 'vllm-0.17-0.19' AND tp = 1"
                 " AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND default_batched")
    assert e["block_bytes"] == BS * TOKEN and e["blocks_per_request"] == L // BS
    return math.floor(e["available_kv_bytes"] / (BS * TOKEN))


def fp_pool(con) -> float:
    w = one(con, "SELECT weights_bytes FROM model_weights WHERE model_id = 'llama-3.1-8b' AND weights_dtype = 'bf16'")
    return H100_USABLE - RESERVE - w["weights_bytes"]


def test_shared_prefix_engine_admits_what_the_block_arithmetic_says(con):
    blocks = engine_blocks(con)
    without = plan_row(con, "vllm-0.17-0.19", input_tokens=IN, output_tokens=OUT)
    shared = plan_row(con, "vllm-0.17-0.19", input_tokens=IN, output_tokens=OUT, shared_prefix_tokens=P)
    # Without: ⌊num_blocks ÷ 512⌋.  With: the prefix's 187 full blocks once (its 8-token tail block is each
    # sequence's own), each sequence 512 − 187 = 325 blocks: ⌊(num_blocks − 187) ÷ 325⌋.
    assert without["max_seqs_per_replica"] == blocks // (L // BS)
    full = P // BS
    assert full == 187 and shared["shared_prefix_blocks"] == full and shared["request_blocks"] == L // BS - full
    expected = (blocks - full) // (L // BS - full)
    assert shared["max_seqs_per_replica"] == expected
    assert expected - without["max_seqs_per_replica"] >= 25        # "measurably more": 54 → 84 on this H100
    assert (without["max_seqs_per_replica"], expected) == (54, 84)


def test_shared_prefix_first_principles_in_bytes(con):
    pool = fp_pool(con)
    without = plan_row(con, "first-principles", input_tokens=IN, output_tokens=OUT)
    shared = plan_row(con, "first-principles", input_tokens=IN, output_tokens=OUT, shared_prefix_tokens=P)
    assert without["max_seqs_per_replica"] == math.floor(pool / (L * TOKEN)) == 58
    assert shared["shared_prefix_bytes"] == P * TOKEN
    assert shared["max_seqs_per_replica"] == math.floor((pool - P * TOKEN) / ((L - P) * TOKEN)) == 91


def test_n_samples_share_the_prompt_blocks(con):
    blocks = engine_blocks(con)
    n = 4
    e = plan_row(con, "vllm-0.17-0.19", input_tokens=IN, output_tokens=OUT, parallel_samples=n)
    # The prompt's full blocks, capped at input − 1 tokens (the last prompt token is recomputed):
    # ⌊7,191 ÷ 16⌋ = 449 once per request; each sample 512 − 449 = 63 of its own.
    prompt = (IN - 1) // BS
    per_request = n * (L // BS - prompt) + prompt
    assert e["request_blocks"] == per_request == 701
    requests = min(1024 // n, blocks // per_request)
    assert e["capacity_requests"] == requests and e["max_seqs_per_replica"] == requests * n
    # First principles: 7,192 prompt tokens once, each sample its 1,000 of output.
    pool = fp_pool(con)
    f = plan_row(con, "first-principles", input_tokens=IN, output_tokens=OUT, parallel_samples=n)
    fp = math.floor(pool / ((n * OUT + IN) * TOKEN))
    assert f["capacity_requests"] == fp and f["max_seqs_per_replica"] == fp * n
    # Sequences = requests × n; replicas are sized in whole requests, each batch n sequences per request.
    assert f["workload_sequences"] == 200 * n
    assert f["replicas"] == math.ceil(200 / min(fp, f["rate_max_batch"] // n))
    assert f["batch_per_replica"] == math.ceil(200 / f["replicas"]) * n


def test_request_rate_becomes_users_by_littles_law(con):
    r = one(con, "SELECT * FROM plans(NULL, ?, 0.05, ttft_s := 2.0, input_tokens := ?, output_tokens := ?,"
                 " request_rate_per_s := 4.0) WHERE model_id = 'llama-3.1-8b' AND hardware_id = 'h100-sxm-80gb'"
                 " AND tp = 1 AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND engine_id = 'first-principles'",
            (L, IN, OUT))
    # 4 req/s × (2 s + 999 × 50 ms) = 4 × 51.95 = 207.8 → 208 concurrent requests.
    assert r["workload_users"] == math.ceil(4 * (2.0 + (OUT - 1) * 0.05)) == 208
    assert r["replicas"] == math.ceil(208 / min(r["capacity_requests"], r["rate_max_batch"]))


def test_input_output_admits_as_context_and_reads_at_the_mean(con):
    for engine in ("vllm-0.17-0.19", "first-principles"):
        ctx = plan_row(con, engine)
        io = plan_row(con, engine, input_tokens=IN, output_tokens=OUT)
        assert io["max_seqs_per_replica"] == ctx["max_seqs_per_replica"]      # admitted at input + output
        # the mean decode read is at input + output/2 = 7,692 tokens, so the rate limit can only grow
        assert io["workload_read_tokens"] == IN + OUT / 2 and ctx["workload_read_tokens"] == L
        assert io["kv_read_bytes_per_seq"] == (IN + OUT / 2) * TOKEN and ctx["kv_read_bytes_per_seq"] == L * TOKEN
        assert io["rate_max_batch"] >= ctx["rate_max_batch"]


def test_plans_refuses_a_context_that_is_not_input_plus_output(con):
    with pytest.raises(Exception, match="input_tokens \\+ output_tokens"):
        con.execute("SELECT * FROM plans(10, 8192, 0.05, input_tokens := 100, output_tokens := 100) LIMIT 1").fetchall()


@pytest.fixture(scope="module")
def db(tmp_path_factory, built_db):
    return copy_db(built_db, tmp_path_factory.mktemp("plan-workload"))


def test_cli_request_rate_says_how_many_requests(db):
    res = CliRunner().invoke(main, ["plan", "--db", db, "--model", "llama-3.1-8b", "--request-rate", "4",
                                    "--input-tokens", "7192", "--output-tokens", "1000", "--ttft-ms", "2000",
                                    "--tpot-ms", "50", "--hardware", "h100-sxm-80gb", "--shared-prefix-tokens", "3000",
                                    "--n", "2", "--format", "text"])
    assert res.exit_code == 0, res.output
    assert "51.95 s in the system → 208 concurrent requests (Little's law)" in res.output
    assert "shared prefix 3,000 tokens held once per replica" in res.output
    assert "n = 2 samples per request sharing its prompt: 416 sequences" in res.output


@pytest.mark.parametrize("args, message", [
    (["--users", "5", "--context", "8Ki", "--shared-prefix-tokens", "9000"], "must be shorter than the input"),
    (["--request-rate", "3", "--context", "8Ki"], "needs the output length"),
    (["--context", "8Ki"], "either users"),
    (["--users", "5", "--context", "8000", "--input-tokens", "100", "--output-tokens", "100"], "is not input + output"),
    (["--users", "5", "--input-tokens", "17179869184", "--output-tokens", "17179869184"], "more than 17,179,869,184"),
    (["--request-rate", "1e9", "--input-tokens", "8K", "--output-tokens", "1e9"], "not 1 to 10^9 concurrent requests"),
    (["--users", "5", "--context", "8K", "--shared-prefix-tokens", "1.5"], "'--shared-prefix-tokens'"),
])
def test_cli_bad_workload_is_a_usage_error(db, args, message):
    res = CliRunner().invoke(main, ["plan", "--db", db, "--model", "llama-3.1-8b", "--tpot-ms", "50", *args])
    assert res.exit_code == 2 and message in res.output, res.output
