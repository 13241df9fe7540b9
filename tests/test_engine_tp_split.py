"""Engine figures at TP sizes whose heads do not split (issue 12/15): the engine refuses at load, it admits nothing.

vLLM's QKVParallelLinear divides the query heads by tp and the KV heads by tp (or tp by them, replicating each head),
through `divide`, which asserts (kvreg/sql/037_tp_sharding.sql; SGLang's linear.py is adapted from it).  The rule is
tp_sharding's; engine_capacity_at reads it through served_tp_sharding (refusal 'tp_heads'), and so do plans and
kvreg fit.  Hand-worked cases:
  phi-4           40 heads, 10 KV heads: TP 2 → 20 and 5 per rank, loads; TP 4 → 10 ÷ 4 = 2.5, refuses
  llama-3.1-70b   64 heads, 8 KV heads: TP 16 → 4 query heads per rank, 16 ÷ 8 = 2 replicas of each KV head, loads
  llama-4-scout   40 heads, 8 KV heads: TP 8 → 5 per rank, loads; TP 16 → 40 ÷ 16 = 2.5, refuses
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, copy_db

ROWS = ("SELECT engine_id, tp, starts, refusal, admitted_seqs, logged_kv_tokens, logged_max_concurrency, num_blocks,"
        " blocks_per_request FROM engine_capacity_at([8192], only_models := [$m], only_hardware := ['h100-sxm-80gb'],"
        " only_engines := ['vllm-0.33', 'sglang-0.5']) WHERE weights_dtype = 'bf16' AND kv_dtype = 'bf16'"
        " AND default_batched AND tp = $tp ORDER BY engine_id")


def _rows(con, model, tp):
    cur = con.execute(ROWS, {"m": model, "tp": tp})
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


@pytest.mark.parametrize("model, tp", [("phi-4", 4), ("phi-4", 8), ("llama-4-scout-17b-16e", 16)])
def test_engine_refuses_at_load_where_the_heads_do_not_split(con, model, tp):
    rows = _rows(con, model, tp)
    assert [r["engine_id"] for r in rows] == ["sglang-0.5", "vllm-0.33"]
    for r in rows:
        # no admission, no "GPU KV cache size" or concurrency: the release stops while building the model
        assert (r["starts"], r["refusal"], r["admitted_seqs"]) == (False, "tp_heads", 0)
        assert r["logged_kv_tokens"] is None and r["logged_max_concurrency"] is None


@pytest.mark.parametrize("model, tp", [("phi-4", 2), ("llama-4-scout-17b-16e", 8), ("llama-3.1-70b", 16)])
def test_engine_admits_where_the_heads_split_or_replicate(con, model, tp):
    rows = _rows(con, model, tp)
    assert len(rows) == 2
    for r in rows:
        assert r["starts"] and r["refusal"] is None
        # the same block arithmetic as any loading TP: floor(blocks ÷ blocks per request), capped by max_num_seqs
        assert 0 < r["admitted_seqs"] <= r["num_blocks"] // r["blocks_per_request"] + 1


def test_phi4_tp2_blocks_by_hand(con):
    # 5 KV heads per rank × 128 dims × 2 (K, V) × 2 B × 40 layers = 102,400 B a token; vLLM's block of 16 tokens is a
    # 40 KiB page per layer group of 40 layers, so one 8,192-token request holds 8,192 ÷ 16 = 512 blocks
    r = next(r for r in _rows(con, "phi-4", 2) if r["engine_id"] == "vllm-0.33")
    assert r["blocks_per_request"] == 512
    assert r["admitted_seqs"] == r["num_blocks"] // 512
    kv = con.execute("SELECT growing_bytes FROM kv_sequence_costs_at([8192]) WHERE model_id = 'phi-4' AND tp = 2"
                     " AND kv_dtype = 'bf16'").fetchone()[0]
    assert kv == 8192 * 102_400


def test_replicated_kv_heads_cost_one_head_per_rank(con):
    # Llama 3.1 70B at TP 16: 8 KV heads replicated twice, one per rank: 1 × 128 × 2 × 2 B × 80 layers = 40,960 B a
    # token per rank (not 8 ÷ 16 of a head)
    kv = con.execute("SELECT growing_bytes FROM kv_sequence_costs_at([8192]) WHERE model_id = 'llama-3.1-70b'"
                     " AND tp = 16 AND kv_dtype = 'bf16'").fetchone()[0]
    assert kv == 8192 * 40_960


def test_served_set_splits_only_where_every_member_does(con):
    got = dict(con.execute("SELECT tp, shards FROM served_tp_sharding"
                           " WHERE served_id = 'llama-3.1-8b+eagle-llama3.1-instruct-8b'").fetchall())
    assert all(got[t] for t in (1, 2, 4, 8))
    # Qwen3.6-27B's 24 heads do not split at TP 16, so neither does the set with its MTP head (plans used to find no
    # tp_sharding row for the set's id and planned it)
    qwen = con.execute("SELECT shards, refused_model_id, attention_heads FROM served_tp_sharding"
                       " WHERE served_id = 'qwen3.6-27b+qwen3.6-27b-mtp+spec3' AND tp = 16").fetchone()
    assert qwen == (False, "qwen3.6-27b", 24)
    phi = con.execute("SELECT shards, refused_model_id, attention_heads, bad_kv_heads FROM served_tp_sharding"
                      " WHERE served_id = 'phi-4' AND tp = 4").fetchone()
    assert phi == (False, "phi-4", 40, 10)


def test_capacity_at_shows_no_engine_figure_at_a_refused_tp(con):
    rows = con.execute("SELECT engine_id, fits, max_seqs, engine_starts, pool_tokens FROM capacity_at([8192],"
                       " only_models := ['phi-4'], only_hardware := ['h100-sxm-80gb'], only_engines := ['vllm-0.33'])"
                       " WHERE tp = 4 AND weights_dtype = 'bf16' AND kv_dtype = 'bf16'").fetchall()
    assert rows == [("vllm-0.33", False, 0, False, None)]


def _fit(*args):
    from kvreg.cli import main

    return CliRunner().invoke(main, ["fit", *args, "--project", str(ROOT)], catch_exceptions=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory, built_db):
    return str(copy_db(built_db, tmp_path_factory.mktemp("db")))


def test_fit_answers_the_refusal_with_its_arithmetic(db):
    r = _fit("phi-4", "h100-sxm-80gb", "--tp", "4", "--engine", "vllm-0.33", "--db", db, "-q")
    assert r.exit_code == 0, r.output
    assert ("vllm-0.33 refuses to load phi-4 at TP 4: tensor parallelism cannot split phi-4's 10 KV heads evenly"
            in r.output)
    assert "10 KV heads ÷ TP 4 = 2.5, not a whole number" in r.output
    assert "the heads split at --tp 1, 2" in r.output
    # no engine figure: neither the admission table nor the engine section
    assert "engine admits" not in r.output and "Layout:" not in r.output and "Traceback" not in r.output


def test_fit_json_carries_the_refusal(db):
    r = _fit("llama-4-scout-17b-16e", "h100-sxm-80gb", "--tp", "16", "--engine", "sglang-0.5", "--db", db, "-q",
             "--format", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["tp_refusal"].startswith("tensor parallelism cannot split llama-4-scout-17b-16e's 40 attention heads")
    assert "40 attention heads ÷ TP 16 = 2.5" in d["tp_refusal"]
    assert d["tp_sizes_that_split"] == [1, 2, 4, 8]
    assert all(row["max_seqs"] == 0 and row["engine_starts"] is False for row in d["rows"])
    assert any("refuses to load" in w for w in d["warnings"])


def test_fit_first_principles_keeps_its_figures_and_warns(db):
    r = _fit("phi-4", "h100-sxm-80gb", "--tp", "4", "--db", db, "-q")
    assert r.exit_code == 0, r.output
    assert "Warning: no engine loads phi-4 at TP 4" in r.output
    ok = _fit("phi-4", "h100-sxm-80gb", "--tp", "2", "--engine", "vllm-0.33", "--db", db, "-q")
    assert "refuses" not in ok.output and "engine admits" in ok.output
