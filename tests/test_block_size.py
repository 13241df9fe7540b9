"""The --block-size knob (issue 11 item 7): a table-macro parameter of the block arithmetic (200–221, capacity_at,
plans), an option of fit and plan, and a report engine_settings key; each release's rules are data
(engine_accounting.block_sizes, block_size_mla_forced, recurrent_alignment_rule).  Numbers are worked by hand
here from the formulas (engine_accounting.md §2–§4) and the pool memory the views give."""

from __future__ import annotations

import json
import math

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from kvreg.cli import main
from tests.conftest import ROOT, copy_db, one

GiB = 2**30
LLAMA = ("llama-3.1-8b", "h100-sxm-80gb", "bf16", "bf16")
# llama-3.1-8b: 32 layers × K and V × 8 KV heads × head dim 128 × 2 bytes (bf16) per token
LLAMA_TOKEN_BYTES = 32 * 2 * 8 * 128 * 2
L = 100_000   # not a multiple of 128: cdiv shows


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _llama_row(con, engine: str, block_size):
    return one(con, "SELECT * FROM engine_capacity_at([?], block_size := ?) WHERE model_id = ? AND hardware_id = ?"
                    " AND engine_id = ? AND weights_dtype = ? AND kv_dtype = ? AND tp = 1 AND default_batched",
               [L, block_size, LLAMA[0], LLAMA[1], engine, LLAMA[2], LLAMA[3]])


@pytest.mark.parametrize("engine", ["vllm-0.17-0.19", "vllm-0.22-0.26"])
def test_llama_blocks_by_hand_at_16_32_128(con, engine):
    """num_blocks = floor(avail ÷ (bs × 32 layers × 2 × 8 heads × 128 × 2 B)); blocks per request cdiv(L, bs);
    concurrency num_blocks ÷ blocks per request; logged tokens by the release's rule (0.17–0.19: num_blocks × bs
    for one group; ≥0.21: int(concurrency × L)); admitted floor(concurrency) capped by max_num_seqs."""
    pool = one(con, "SELECT available_kv_bytes, max_num_seqs FROM engine_memory_pools WHERE engine_id = ?"
                    " AND model_id = ? AND hardware_id = ? AND weights_dtype = ? AND tp = 1 AND default_batched",
               [engine, LLAMA[0], LLAMA[1], LLAMA[2]])
    seen = {}
    for bs in (16, 32, 128):
        r = _llama_row(con, engine, bs)
        blocks = math.floor(pool["available_kv_bytes"] / (bs * LLAMA_TOKEN_BYTES))
        per_request = _cdiv(L, bs)
        conc = blocks / per_request
        assert (r["block_size"], r["block_size_is_default"], r["block_size_tokens"]) == (bs, bs == 16, bs)
        assert r["block_bytes"] == bs * LLAMA_TOKEN_BYTES
        assert r["available_kv_bytes"] == pool["available_kv_bytes"]          # the knob does not move the pool
        assert (r["num_blocks"], r["blocks_per_request"]) == (blocks, per_request)
        assert r["logged_max_concurrency"] == pytest.approx(conc, rel=1e-12)
        tokens = blocks * bs if engine == "vllm-0.17-0.19" else int(conc * L)
        assert r["logged_kv_tokens"] == tokens
        assert r["admitted_seqs"] == min(math.floor(conc), pool["max_num_seqs"])
        seen[bs] = r
    # 128 wastes the partly filled last block of each request: fewer tokens than at 16
    assert seen[128]["logged_max_concurrency"] < seen[16]["logged_max_concurrency"]
    # no knob is the release default, 16
    d = _llama_row(con, engine, None)
    assert (d["num_blocks"], d["block_size"], d["block_size_is_default"]) == (seen[16]["num_blocks"], 16, True)


def test_views_are_the_macros_at_the_default(con):
    """The views keep their rows: the release's own block size given explicitly changes nothing for a model
    without MLA layers (every layer family of llama and gemma-3), and NULL is the view."""
    for view in ("engine_kv_layout", "engine_kv_buckets"):
        cols = ", ".join(c for c in (d[0] for d in con.execute(f"DESCRIBE SELECT * FROM {view}").fetchall())
                         if c != "block_size_is_default")
        diff = con.execute(
            f"SELECT count(*) FROM (SELECT {cols} FROM {view}_at(block_size := 16) WHERE engine_id LIKE 'vllm-%'"
            f" AND model_id IN ('llama-3.1-8b', 'gemma-3-27b', 'qwen3-next-80b-a3b') EXCEPT"
            f" SELECT {cols} FROM {view} WHERE engine_id LIKE 'vllm-%'"
            f" AND model_id IN ('llama-3.1-8b', 'gemma-3-27b', 'qwen3-next-80b-a3b'))").fetchone()[0]
        assert diff == 0, view
    assert con.execute("SELECT count(*) FROM engine_kv_layout WHERE NOT block_size_is_default").fetchone()[0] == 0


def test_hybrid_alignment_overrides_a_small_block(con):
    """qwen3-next-80b-a3b (gated delta net + full attention): the attention block is enlarged until its page holds
    the recurrent state, even over a user's block size: max(bs, a·cdiv(state, a·attn_1tok)) with a = 16 in
    0.17–0.19 (model_executor/models/config.py 0.19.0:218) and a = max(16, bs) from 0.20
    (platforms/interface.py 0.20.0:568-575)."""
    b = {r[0]: r[1:] for r in con.execute(
        "SELECT storage_kind, token_bytes, state_bytes FROM engine_kv_buckets WHERE engine_id = 'vllm-0.20'"
        " AND model_id = 'qwen3-next-80b-a3b' AND kv_dtype = 'bf16' AND tp = 1").fetchall()}
    tok, state = int(b["full"][0]), int(b["recurrent"][1])
    for engine, rule in (("vllm-0.17-0.19", "fixed"), ("vllm-0.20", "at_least_block_size")):
        for bs in (16, 32, 128):
            a = 16 if rule == "fixed" else max(16, bs)
            expect = max(bs, a * _cdiv(state, a * tok))
            r = one(con, "SELECT block_size, block_size_tokens, page_bytes, recurrent_page_alignment"
                         " FROM engine_kv_layout_at(block_size := ?) WHERE engine_id = ? AND model_id = 'qwen3-next-80b-a3b'"
                         " AND kv_dtype = 'bf16' AND tp = 1", [bs, engine])
            assert (r["block_size"], r["block_size_tokens"]) == (bs, expect), (engine, bs)
            assert r["page_bytes"] == expect * tok and r["recurrent_page_alignment"]
    # worked: a state of 536 attention tokens → 544 at 16 and 32 (both releases); at 128, 544 in 0.19 but 640 in 0.20
    assert _cdiv(state, tok) == 536
    got = {(e, bs): con.execute("SELECT block_size_tokens FROM engine_kv_layout_at(block_size := ?) WHERE engine_id = ?"
                                " AND model_id = 'qwen3-next-80b-a3b' AND kv_dtype = 'bf16' AND tp = 1",
                                [bs, e]).fetchone()[0]
           for e in ("vllm-0.17-0.19", "vllm-0.20") for bs in (32, 128)}
    assert got == {("vllm-0.17-0.19", 32): 544, ("vllm-0.17-0.19", 128): 544,
                   ("vllm-0.20", 32): 544, ("vllm-0.20", 128): 640}


def test_mla_block_forced_before_0_17_and_kept_from_0_17(con):
    """DeepSeek-V2-Lite (MLA, 27 layers × 576 values × 2 B per token): ≤0.16 the CUDA platform forces FlashMLA's 64
    over --block-size 32 (platforms/cuda.py 0.11.0:160-182) and the output says so; ≥0.17 keeps 32 and picks a
    backend that takes it (platforms/cuda.py 0.19.0:313-333)."""
    avail = 40 * GiB
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT engine_id, block_size, block_size_tokens, num_blocks, blocks_per_request, mla_block_size_forced,"
        " block_size_is_default FROM engine_capacity_for_memory(?, 8192, 8192, block_size := 32)"
        " WHERE model_id = 'deepseek-v2-lite' AND kv_dtype = 'bf16' AND tp = 1"
        " AND engine_id IN ('vllm-0.9-0.16', 'vllm-0.17-0.19')", [avail]).fetchall()}
    per_token = 27 * 576 * 2
    assert rows["vllm-0.9-0.16"] == (32, 64, math.floor(avail / (64 * per_token)), 8192 // 64, True, True)
    assert rows["vllm-0.17-0.19"] == (32, 32, math.floor(avail / (32 * per_token)), 8192 // 32, False, False)


# DeepSeek-V2-Lite: 27 MLA layers × (512 latent + 64 rope) values per token, 2 bytes (bf16) or 1 (fp8)
DSV2_TOKEN_BYTES = {"bf16": 27 * 576 * 2, "fp8": 27 * 576}


@pytest.mark.parametrize("engine, hardware, kv, backend, block", [
    # 0.19: FLASH_ATTN_MLA first on capability 9 but no fp8 KV (flashattn_mla.py 0.19.0:45-69) → FLASHMLA's [64]
    ("vllm-0.17-0.19", "h100-sxm-80gb", "bf16", "FLASH_ATTN_MLA", 16),
    ("vllm-0.17-0.19", "h100-sxm-80gb", "fp8", "FLASHMLA", 64),
    # FLASHINFER_MLA first on capability 10, blocks [32, 64] → the smallest, 32 (platforms/cuda.py 0.19.0:83-90)
    ("vllm-0.17-0.19", "b200", "bf16", "FLASHINFER_MLA", 32),
    ("vllm-0.33", "b300", "fp8", "FLASHINFER_MLA", 32),
    # Ampere and sm120: only TRITON_MLA supports the capability; it takes 16
    ("vllm-0.17-0.19", "a100-sxm-80gb", "bf16", "TRITON_MLA", 16),
    ("vllm-0.22-0.26", "rtx-pro-6000", "bf16", "TRITON_MLA", 16),
    # ≤0.16 forces FlashMLA 64 on Hopper, CUTLASS_MLA 128 on sm100, keeps 16 elsewhere (platforms/cuda.py 0.11.0:143-171)
    ("vllm-0.9-0.16", "h100-sxm-80gb", "bf16", "FLASHMLA", 64),
    ("vllm-0.9-0.16", "b200", "bf16", "CUTLASS_MLA", 128),
    ("vllm-0.9-0.16", "a100-sxm-80gb", "bf16", "TRITON_MLA", 16),
    # a device no rule names (ROCm): the release's block_size_mla
    ("vllm-0.17-0.19", "mi300x", "bf16", None, 16),
])
def test_the_default_mla_block_is_the_devices_backend(con, engine, hardware, kv, backend, block):
    """With no --block-size an MLA model's block is the one its device's backend leaves (get_preferred_block_size(16),
    v1/attention/backend.py 0.19.0:189-197): num_blocks = floor(avail ÷ (bs × 27 × 576 × kv bytes)), blocks per
    request cdiv(L, bs), and 0.17–0.19 logs num_blocks × bs tokens."""
    r = one(con, "SELECT * FROM engine_capacity WHERE model_id = 'deepseek-v2-lite' AND engine_id = ? AND hardware_id = ?"
                 " AND weights_dtype = 'bf16' AND kv_dtype = ? AND tp = 1 AND default_batched AND max_model_len = 32768",
            [engine, hardware, kv])
    assert (r["mla_backend"], r["mla_block_tokens"], r["block_size_tokens"]) == (backend, block, block)
    assert r["block_bytes"] == block * DSV2_TOKEN_BYTES[kv]
    assert r["num_blocks"] == math.floor(r["available_kv_bytes"] / (block * DSV2_TOKEN_BYTES[kv]))
    assert r["blocks_per_request"] == _cdiv(32768, block)
    if engine == "vllm-0.17-0.19":
        assert r["logged_kv_tokens"] == r["num_blocks"] * block
    # exactly one layout per device and scenario
    n = con.execute("SELECT count(*) FROM engine_capacity WHERE model_id = 'deepseek-v2-lite' AND engine_id = ?"
                    " AND hardware_id = ? AND weights_dtype = 'bf16' AND kv_dtype = ? AND tp = 1 AND default_batched"
                    " AND max_model_len = 32768", [engine, hardware, kv]).fetchone()[0]
    assert n == 1


def test_models_without_mla_have_one_layout_for_every_device(con):
    """The device only enters through the MLA block: llama has one layout row (mla_block_tokens 0) per release."""
    rows = con.execute("SELECT DISTINCT mla_block_tokens, mla_backend FROM engine_capacity WHERE model_id = 'llama-3.1-8b'"
                       " AND engine_id = 'vllm-0.17-0.19'").fetchall()
    assert rows == [(0, None)]
    assert con.execute("SELECT count(*) FROM engine_kv_layout WHERE model_id = 'llama-3.1-8b'"
                       " AND engine_id = 'vllm-0.17-0.19' AND kv_dtype = 'bf16' AND tp = 1").fetchone()[0] == 1


def test_the_019_h100_deepseek_log_is_16_token_blocks(con):
    """v0.19-h100-deepseek-v2-lite-tp1 logs 94,097 blocks and 1,505,552 tokens = 94,097 × 16. From the logged 43.61 GiB:
    floor(43.61 × 2^30 ÷ (16 × 31,104 B)) = 94,091 blocks → 1,505,456 tokens; the log's ±0.005 GiB is ±10.8 blocks,
    so 94,097 is inside it (with the former 64: 23,522 blocks, 1,505,408 tokens, a block the log does not print)."""
    r = one(con, "SELECT block_size_tokens, block_num_blocks, block_tokens, logged_tokens, block_within_rounding"
                 " FROM calibration WHERE observation_id = 'v0.19-h100-deepseek-v2-lite-tp1'")
    assert math.floor(43.61 * GiB / (16 * 31_104)) == 94_091
    assert (r["block_size_tokens"], r["block_num_blocks"], r["block_tokens"]) == (16, 94_091, 94_091 * 16)
    assert r["logged_tokens"] == 94_097 * 16 and r["block_within_rounding"]


def test_a_block_size_the_release_refuses_gives_no_rows(con):
    n = con.execute("SELECT count(*) FROM engine_capacity_for_memory(40 * 2^30, 8192, 8192, block_size := 24)"
                    " WHERE engine_id LIKE 'vllm-%'").fetchone()[0]
    assert n == 0
    # SGLang and TRT-LLM: the knob is not modelled (no block_sizes), so no rows either — the CLI refuses it
    assert con.execute("SELECT count(*) FROM engine_capacity_for_memory(40 * 2^30, 8192, 8192, block_size := 32)"
                       " WHERE engine_id IN ('sglang-0.5', 'trtllm-pytorch')").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM engine_capacity_for_memory(40 * 2^30, 8192, 8192, block_size := 32)"
                       " WHERE engine_id = 'vllm-0.33'").fetchone()[0] > 0


# --- CLI ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def db(tmp_path_factory, built_db):
    return copy_db(built_db, tmp_path_factory.mktemp("db"))


def run(db, *args):
    return CliRunner().invoke(main, [*map(str, args), "--project", str(ROOT), "--db", db])


def test_fit_block_size_agrees_with_kvreg_sql(db):
    r = run(db, "fit", *LLAMA[:2], "--engine", "vllm-0.17-0.19", "--context", str(L), "--block-size", "32")
    assert r.exit_code == 0, r.output
    assert "block_size 32 (set)" in r.output and "Layout: block 32 tokens" in r.output
    engine_part = r.output.split("Engine vllm-0.17-0.19:", 1)[1]
    (f,) = [ln.split() for ln in engine_part.splitlines() if ln[:1].isdigit()]
    s = run(db, "sql", "--format", "json",
            f"SELECT max_model_len, admitted_seqs, logged_kv_tokens, num_blocks FROM engine_capacity_at([{L}],"
            " block_size := 32) WHERE model_id = 'llama-3.1-8b' AND hardware_id = 'h100-sxm-80gb'"
            " AND engine_id = 'vllm-0.17-0.19' AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp = 1"
            " AND default_batched")
    assert s.exit_code == 0, s.output
    (q,) = json.loads(s.output)
    assert (int(f[0].replace(",", "")), int(f[3].replace(",", "")), int(f[5].replace(",", ""))) == (
        q["max_model_len"], q["admitted_seqs"], q["logged_kv_tokens"])
    assert f"{q['num_blocks']:,} blocks" in r.output
    j = run(db, "fit", *LLAMA[:2], "--engine", "vllm-0.17-0.19", "--context", str(L), "--block-size", "32",
            "--format", "json")
    got = json.loads(j.output)
    assert got["knobs"] == {"block_size": 32}
    assert [(x["block_size"], x["block_size_is_default"], x["max_seqs"]) for x in got["rows"]] == [
        (32, False, q["admitted_seqs"])]


@pytest.mark.parametrize("engine, value, needle", [
    ("vllm-0.17-0.19", "24", "allowed: 16, 32, 64, 128"),
    ("vllm-0.9-0.16", "0", "allowed: 1, 8, 16, 32, 64, 128"),
    ("vllm-0.33", "-16", "allowed: 16, 32, 64, 128"),
    ("sglang-0.5", "32", "no block-size knob"),
])
def test_bad_block_size_names_the_option_and_the_allowed_values(db, engine, value, needle):
    r = run(db, "plan", "--model", "llama-3.1-8b", "--users", "10", "--context", "8Ki", "--tpot-ms", "50",
            "--engine", engine, "--block-size", value)
    assert r.exit_code == 2 and "--block-size" in r.output and needle in r.output, r.output
    assert "Traceback" not in r.output


def test_plan_names_the_block_size_and_uses_it(db):
    base = ["plan", "--model", "llama-3.1-8b", "--users", "200", "--context", "100000", "--tpot-ms", "50",
            "--engine", "vllm-0.17-0.19", "--hardware", "h100-sxm-80gb", "--weights-dtype", "bf16", "--format", "json"]
    at = {bs: json.loads(run(db, *base, "--block-size", str(bs)).output) for bs in (16, 128)}
    assert at[128]["settings"] == {"block_size": 128}
    o16, o128 = (next(o for o in at[bs]["options"] if o["tp"] == 1) for bs in (16, 128))
    assert (o16["block_size"], o16["block_size_is_default"], o128["block_size"], o128["block_size_is_default"]) == (
        16, True, 128, False)
    c = {bs: _llama_row_from_db(db, bs) for bs in (16, 128)}
    assert (o16["max_seqs_per_replica"], o128["max_seqs_per_replica"]) == (c[16], c[128])
    text = run(db, *base[:-2], "--block-size", "128").output
    assert "block_size 128 (set)" in text


def _llama_row_from_db(db, bs):
    s = run(db, "sql", "--format", "json",
            f"SELECT admitted_seqs FROM engine_capacity_at([{L}], block_size := {bs}) WHERE model_id = 'llama-3.1-8b'"
            " AND hardware_id = 'h100-sxm-80gb' AND engine_id = 'vllm-0.17-0.19' AND weights_dtype = 'bf16'"
            " AND kv_dtype = 'bf16' AND tp = 1 AND default_batched")
    return json.loads(s.output)[0]["admitted_seqs"]


# --- report definitions ---------------------------------------------------------------------------------

def _report(tmp_path, settings):
    from tests.report_tools import copy_project

    project = copy_project(tmp_path / "proj")
    doc = {"id": "bs", "title": "Block size", "period": "test", "models": ["llama-3.1-8b"],
           "hardware": ["h100-sxm-80gb"], "engines": ["vllm-0.17-0.19"], "weights_dtypes": ["bf16"],
           "kv_dtypes": ["bf16"], "tp": [1], "contexts": ["32Ki"],
           "workload": {"users": 50, "context": 100000, "tpot_ms": 50}, "engine_settings": settings}
    (project / "reports" / "bs.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return project


def test_report_block_size_the_release_refuses_is_a_problem_at_its_line(tmp_path):
    project = _report(tmp_path, {"block_size": 24})
    r = CliRunner().invoke(main, ["validate", "--project", str(project)])
    assert r.exit_code == 1
    (line,) = [ln for ln in r.output.splitlines() if "report-block-size" in ln]
    text = (project / "reports" / "bs.yaml").read_text().splitlines()
    lineno = int(line.split(":")[1])
    assert "block_size: 24" in text[lineno - 1] and "engine_settings.block_size" in line
    assert "allowed for vllm-0.17-0.19: 16, 32, 64, 128 tokens" in r.output


def test_report_block_size_sizes_the_report_like_plan(tmp_path, root_db):
    from kvreg.build import populate
    from kvreg.registry import load_registry
    from kvreg.report.context import build_context

    project = _report(tmp_path, {"block_size": 128})
    registry = load_registry(project)
    con = duckdb.connect(":memory:")
    populate(con, registry)
    ctx = build_context(con, registry, "bs", charts=False)
    (model,) = ctx.models
    (option,) = model.options
    eng = con.execute("SELECT DISTINCT block_size, block_size_is_default FROM report_engine_capacity").fetchall()
    con.close()
    assert eng == [(128, False)]
    assert option.max_seqs_per_replica == _llama_row_from_db(root_db, 128)


def test_shared_prefix_blocks_are_counted_at_the_block_size_set(con):
    """plans' prefix sharing (workload_blocks_at, 272) counts whole blocks of the size the plan is sized on:
    a 1,000-token system prompt is ⌊1,000 ÷ bs⌋ shared full blocks, 62 at 16 and 7 at 128 (llama: one group)."""
    q = ("SELECT shared_prefix_blocks, block_size FROM plans(50, 100000, 0.05, input_tokens := 99000,"
         " output_tokens := 1000, shared_prefix_tokens := 1000, block_size := ?) WHERE model_id = 'llama-3.1-8b'"
         " AND hardware_id = 'h100-sxm-80gb' AND engine_id = 'vllm-0.17-0.19' AND weights_dtype = 'bf16'"
         " AND kv_dtype = 'bf16' AND tp = 1")
    assert [one(con, q, [bs])["shared_prefix_blocks"] for bs in (16, 128)] == [1000 // 16, 1000 // 128]
    assert one(con, q, [128])["block_size"] == 128
