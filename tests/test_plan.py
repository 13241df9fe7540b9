"""``plans`` macro and ``kvreg plan``: the worked answer of docs/plan.md, binding constraints, no-fit cases.

Worked case (docs/plan.md): Llama-3.1-70B, bf16 weights and KV, 200 users at 32K (32,000 tokens),
TPOT 50 ms.  The hand arithmetic below is independent of the views.
"""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from tests.conftest import ROOT, one

H100_USABLE = 81089 * 2**20          # hardware/h100-sxm-80gb.yaml memory_usable
RESERVE = 6 * 2**30                  # registry/engines/first-principles.yaml
WEIGHTS = 2 * 70_553_706_496         # bf16
KV_TOKEN = 327_680                   # 2·80·8·128·2 bytes per token (all ranks)
S = 32_000
BW, EFF, LINK = 3.35e12, 0.45, 450e9


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A database file for the CLI tests, built once for the module."""
    return str(tmp_path_factory.mktemp("plan") / "kvreg.duckdb")


def plan_row(con, model, hw, tp, users=200, context=S, tpot=0.05, ttft=None, weights="bf16", kv="bf16"):
    return one(con, "SELECT * FROM plans(?, ?, ?, ?) WHERE model_id=? AND hardware_id=? AND tp=?"
                    " AND weights_dtype=? AND kv_dtype=? AND engine_id='first-principles'",
               (users, context, tpot, ttft, model, hw, tp, weights, kv))


def test_worked_plan_h100_tp8_by_hand(con):
    p = plan_row(con, "llama-3.1-70b", "h100-sxm-80gb", 8)
    # Capacity: per rank, pool = usable − reserve − weights/8; one sequence = 32,000 × 327,680 / 8 bytes.
    pool = H100_USABLE - RESERVE - WEIGHTS / 8
    cap = math.floor(pool / (S * KV_TOKEN / 8))
    assert cap == p["max_seqs_per_replica"] == 46
    # Rate: the largest B with (W + B·kv)/(8·BW·eff) + B·allreduce ≤ 50 ms.
    bw = 8 * BW * EFF
    ar = 2 * 80 * 2 * 7 / 8 * 8192 * 2 / LINK
    rate = math.floor((0.05 - WEIGHTS / bw) / (S * KV_TOKEN / bw + ar))
    assert rate == p["rate_max_batch"] == 43
    assert p["binding_constraint"] == "tpot" and p["rate_basis"] == "expected"
    assert p["replicas"] == math.ceil(200 / 43) == 5
    assert p["batch_per_replica"] == 40 and p["gpus"] == 40
    assert p["usd_per_hour"] == pytest.approx(40 * 3.78)
    assert p["tpot_at_batch_s"] == pytest.approx((WEIGHTS + 40 * S * KV_TOKEN) / bw + 40 * ar)
    assert p["tpot_at_batch_s"] <= 0.05


def test_worked_plan_cli_output(db):
    res = CliRunner().invoke(main, ["plan", "--model", "llama-3.1-70b", "--users", "200", "--context", "32K",
                                    "--tpot-ms", "50", "--project", str(ROOT), "--db", db]
                           # the seed-era comparison set, so rows added to the registry do not move this test
                           + [a for h in ("h100-sxm-80gb", "a100-sxm-80gb", "b300", "m3-ultra-96gb", "generic-80gb")
                              for a in ("--hardware", h)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == ("llama-3.1-70b · 200 users × 32,000 tokens · TPOT ≤ 50.0 ms · engine first-principles"
                        " · weights bf16 · KV bf16")
    assert lines[4].split() == ["h100-sxm-80gb", "bf16", "bf16", "8", "46", "43", "5", "40", "40", "$151.20",
                                "tpot", "46.9", "ms", "expected"]
    assert lines[5].split()[:10] == ["a100-sxm-80gb", "bf16", "bf16", "8", "46", "20", "10", "20", "80", "$199.87"]
    assert "Best: 5 × h100-sxm-80gb TP 8 = 40 GPUs at $151.20/hour; binding constraint: tpot." in lines
    assert ("  h100-sxm-80gb TP 1 bf16/bf16: the weights alone do not fit the device memory at this TP" in lines)
    assert ("  h100-sxm-80gb TP 2 bf16/bf16: tpot: a single sequence decodes slower than the TPOT target"
            " (longest context that would: 29,373)") in lines


def test_capacity_binds_when_the_pool_is_smaller_than_the_rate(con):
    p = plan_row(con, "deepseek-v3", "h100-sxm-80gb", 16, weights="fp8")
    assert p["max_seqs_per_replica"] < p["rate_max_batch"]
    assert p["binding_constraint"] == "capacity"
    assert p["replicas"] == math.ceil(200 / p["max_seqs_per_replica"])


def test_one_replica_holds_a_small_workload(con):
    p = plan_row(con, "llama-3.1-8b", "h100-sxm-80gb", 1, users=5, context=8000)
    assert (p["replicas"], p["gpus"], p["binding_constraint"]) == (1, 1, "none")


def test_ttft_target_checked_against_prefill_floor(con):
    p = plan_row(con, "llama-3.1-70b", "h100-sxm-80gb", 8, ttft=0.1)
    assert not p["feasible"] and p["reason"].startswith("ttft:")
    assert p["prefill_floor_s"] > 0.1
    assert plan_row(con, "llama-3.1-70b", "h100-sxm-80gb", 8, ttft=2.0)["feasible"]


def test_missing_figures_are_reasons_not_zeros(con):
    g = plan_row(con, "llama-3.1-70b", "generic-80gb", 8)
    assert not g["feasible"] and g["reason"] == "no bandwidth figure for this hardware"
    assert g["usd_per_hour"] is None and g["replicas"] is None
    m = plan_row(con, "llama-3.1-70b", "m3-ultra-96gb", 4)
    assert m["reason"] == "tp > 1 needs an interconnect figure for this hardware"
    b = plan_row(con, "llama-3.1-70b", "b300", 8)
    assert b["feasible"] and b["usd_per_hour"] is None      # no price: NULL, sorted after priced options


def test_max_context_is_where_one_sequence_just_meets_tpot(con):
    # H100 TP 2: weights 70.6 GB per rank; one 32K sequence alone misses 50 ms; 29,373 tokens would not.
    p = plan_row(con, "llama-3.1-70b", "h100-sxm-80gb", 2)
    assert p["reason"].startswith("tpot:") and p["single_seq_tpot_s"] > 0.05
    s = p["max_context_tokens"]
    ok = plan_row(con, "llama-3.1-70b", "h100-sxm-80gb", 2, users=1, context=s)
    over = plan_row(con, "llama-3.1-70b", "h100-sxm-80gb", 2, users=1, context=s + 1)
    assert ok["feasible"] and ok["single_seq_tpot_s"] <= 0.05
    assert not over["feasible"]


def test_fits_nowhere_says_why(db):
    res = CliRunner().invoke(main, ["plan", "--model", "llama-3.1-405b", "--users", "10", "--context", "1Mi",
                                    "--tpot-ms", "5", "--project", str(ROOT), "--db", db]
                           + [a for h in ("h100-sxm-80gb", "a100-sxm-80gb", "b300") for a in ("--hardware", h)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[1] == "No configuration serves this workload."
    assert lines[2] == ("Best option: b300 TP 16 (bf16 weights, bf16 KV): tpot: a single sequence decodes slower"
                        " than the TPOT target.")
    assert lines[3].startswith("Longest context one sequence could have there within the TPOT: 0 tokens;")


def test_unknown_model_is_a_usage_error(db):
    res = CliRunner().invoke(main, ["plan", "--model", "llama-70b", "--users", "1", "--context", "8K",
                                    "--tpot-ms", "50", "--project", str(ROOT), "--db", db]
                           # the seed-era comparison set, so rows added to the registry do not move this test
                           + [a for h in ("h100-sxm-80gb", "a100-sxm-80gb", "b300", "m3-ultra-96gb", "generic-80gb")
                              for a in ("--hardware", h)])
    assert res.exit_code == 2
    assert "unknown model 'llama-70b'" in res.output


# --- invariants of every feasible plan, for any workload -----------------------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(users=st.integers(1, 3000), context=st.integers(500, 300_000), tpot_ms=st.floats(5, 300))
def test_feasible_plans_meet_both_constraints_with_fewest_replicas(con, users, context, tpot_ms):
    tpot = tpot_ms / 1e3
    # A data test: the query returns the offending feasible rows, which must be none.
    bad = con.execute(
        "SELECT model_id, hardware_id, engine_id, tp FROM plans(?, ?, ?) WHERE feasible AND NOT ("
        " batch_per_replica BETWEEN 1 AND max_seqs_per_replica"
        " AND tpot_at_batch_s <= ? * (1 + 1e-12)"
        " AND replicas * batch_per_replica >= ?"
        # one replica fewer could not hold everyone at the per-replica limit
        " AND (replicas - 1) * least(max_seqs_per_replica, rate_max_batch) < ?"
        " AND gpus = replicas * tp)",
        [users, context, tpot, tpot, users, users]).fetchall()
    assert bad == []
