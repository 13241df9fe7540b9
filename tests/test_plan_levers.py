"""``kvreg plan --efficiency-basis`` and "what would change the answer" (plan_levers, kvreg/sql/284; issue 12).

Every expectation is recomputed here from the inputs the plans rows state (weights, KV read, ceilings, prices,
admission), never typed in as a result: the efficiencies the registry fits may move (speed7) and the tests still
hold, because they check the mechanism — the bandwidth efficiency at which a batch fits the TPOT is the chapter's step
at the ceiling ÷ TPOT for a memory-bound dense model; the runner-up wins below the recommendation's $/hour ÷ its
device count; the admission at another max_num_batched_tokens is the plans macro's at that knob.
"""

from __future__ import annotations

import math

import duckdb
import pytest
from click.testing import CliRunner

Q4_HARDWARE = ["h100-sxm-80gb", "h200", "b200", "b300", "mi300x", "mi325x", "mi355x", "rtx-pro-6000"]


def _macro(con, **k):
    return con.execute(
        "SELECT bandwidth_efficiency_for_batch(?::DOUBLE, ?::DOUBLE, ?::DOUBLE, NULL, NULL, ?::BIGINT, ?::DOUBLE,"
        " ?::DOUBLE, ?::DOUBLE, NULL, ?::DOUBLE, NULL, NULL, ?::DOUBLE)",
        [k["w"], k["p"], k["p"], k["b"], k["s"], 2 * k["p"], k["bw"], k["ar"], k["tpot"]]).fetchone()[0]


def test_efficiency_for_a_batch_by_hand(con):
    # dense, memory-bound, no FLOP figure: step(B, e) = (W + B·s) ÷ (bw·e) + B·ar ÷ e.  W = 100 GB, s = 1 GB, B = 10,
    # bw = 1 TB/s: at the ceiling (100 + 10) GB ÷ 1 TB/s = 0.110 s, so within 0.2 s from e = 0.110 ÷ 0.2 = 0.55
    base = dict(w=100e9, p=50e9, b=10, s=1e9, bw=1e12, ar=0.0, tpot=0.2)
    assert _macro(con, **base) == pytest.approx(0.55, abs=1e-8)
    # an all-reduce of 1 ms per token adds 10 × 1 ms at the ceiling: 0.120 ÷ 0.2 = 0.6
    assert _macro(con, **dict(base, ar=1e-3)) == pytest.approx(0.6, abs=1e-8)
    # the ceiling itself misses the TPOT (0.110 s > 0.1 s): no efficiency mends it
    assert _macro(con, **dict(base, tpot=0.1)) is None
    assert _macro(con, **dict(base, b=0)) is None


def _plan(con, model, **kw):
    from kvreg.plan import plan

    args = dict(users=200, context_tokens=32768, tpot_s=0.05, engine="vllm-0.33", hardware=Q4_HARDWARE,
                weights_dtypes=["bf16", "fp8"], kv_dtypes=["fp8"])
    args.update(kw)
    return plan(con, model, **args)


def _step_at_ceiling(row, batch):
    """The chapter's step for a dense model whose kernel classes are memory-bound, at the ceiling (efficiency 1)."""
    return (row["weights_bytes"] + batch * row["kv_read_bytes_per_seq"]) / row["ceiling_bw"] + batch * row["allreduce_s_per_token"]


@pytest.fixture(scope="module")
def llama8(con):
    return _plan(con, "llama-3.1-8b")


def test_bandwidth_efficiency_lever_by_hand(llama8):
    r = llama8
    best, lev = r.feasible[0], r.levers
    assert (lev["hardware_id"], lev["devices"]) == (best["hardware_id"], best["gpus"])
    # Llama 3.1 8B decodes memory-bound at these batches (16 GB of weights read per step against B × 16 GFLOP):
    # the compute roof is far away, so the threshold is the step at the ceiling ÷ the TPOT
    assert best["rate_max_batch"] * 2 * best["params_active"] / best["ceiling_peak"] < 0.2 * 0.05
    assert lev["hold_efficiency"] == pytest.approx(_step_at_ceiling(best, best["batch_per_replica"]) / 0.05, rel=1e-6)
    assert lev["hold_efficiency"] <= best["bandwidth_efficiency"]
    if best["replicas"] > 1 and math.ceil(200 / (best["replicas"] - 1)) <= best["max_seqs_per_replica"]:
        fewer = math.ceil(200 / (best["replicas"] - 1))
        assert lev["fewer_efficiency"] == pytest.approx(_step_at_ceiling(best, fewer) / 0.05, rel=1e-6)
        assert lev["fewer_efficiency"] > best["bandwidth_efficiency"]
        assert lev["fewer_devices"] == math.ceil(200 / fewer) * best["tp"]
    # the pick changes below the lowest efficiency at which SOME configuration of that hardware still serves the 200
    # users within the runner-up's $/hour: per configuration, the most replicas that cost no more, and the step of
    # their batch at the ceiling ÷ TPOT (the other devices keep their own figures)
    ru = next(p for p in r.feasible if p["hardware_id"] != best["hardware_id"])
    assert (lev["ru_hardware_id"], lev["ru_devices"], lev["ru_usd_per_hour"]) == (ru["hardware_id"], ru["gpus"],
                                                                                  ru["usd_per_hour"])
    cands = []
    for c in r.feasible:
        if c["hardware_id"] != best["hardware_id"]:
            continue
        most = math.floor(ru["usd_per_hour"] / (c["usd_per_hour"] / c["replicas"]) + 1e-9)
        if most < 1:   # one replica already costs more than the runner-up
            continue
        b = math.ceil(200 / most)
        if b <= c["max_seqs_per_replica"] and _step_at_ceiling(c, b) <= 0.05:
            cands.append(_step_at_ceiling(c, b) / 0.05)
    assert lev["flip_efficiency"] == pytest.approx(min(cands), rel=1e-6)
    # the runner-up's price at which it wins: the recommendation's $/hour ÷ the runner-up's devices
    assert lev["ru_flip_usd_per_device_hour"] == pytest.approx(best["usd_per_hour"] / ru["gpus"])
    lines = {x["lever"]: x["line"] for x in lev["lines"]}
    flip = math.floor((best["usd_per_hour"] / ru["gpus"] - 1e-6) * 100) / 100
    assert f"it wins at ${flip:,.2f} per device-hour or less" in lines["runner_up_price"]
    assert (f"this configuration keeps its {best['gpus']} devices down to"
            f" {math.ceil(lev['hold_efficiency'] * 1000) / 1000:.3f}") in lines["bandwidth_efficiency"]
    # no batched-tokens line: decode speed binds, the admission (123 per replica) is not what holds the count
    assert best["binding_constraint"] == "tpot" and "max_num_batched_tokens" not in lines


def test_a_stated_efficiency_is_marked_and_sized_at_the_vendor_figure(con, llama8):
    from kvreg.plan import plan_json, render_plan

    r = llama8
    best, m = r.feasible[0], r.measured
    # the MI355X has no measurement on itself, its architecture or its other engines: its 0.45 is the entry's guess
    assert best["hardware_id"] in r.stated and best["bandwidth_efficiency"] == 0.45
    assert m is not None and m["vendor_hardware_id"] == "mi300x"
    # the same call at efficiency_basis 'vendor_measured': the measured plan's best MI355X row and its first row
    v = _plan(con, "llama-3.1-8b", efficiency_basis="vendor_measured")
    assert v.efficiency_basis == "vendor_measured" and best["hardware_id"] not in v.stated
    same = next(p for p in v.feasible if p["hardware_id"] == best["hardware_id"])
    assert (m["at_devices"], m["at_tp"]) == (same["gpus"], same["tp"])
    assert m["vendor_bandwidth_efficiency"] == same["bandwidth_efficiency"] < 0.45
    top = v.feasible[0]
    assert (m["top_hardware_id"], m["top_devices"]) == (top["hardware_id"], top["gpus"])
    assert m["flips"] == (top["hardware_id"] != best["hardware_id"]) and not m["holds"]
    text = render_plan(r)
    assert "tpot†" in text and "Efficiency basis: fitted" in text
    assert (f"† mi355x: sized at the stated 0.45; the vendor's lowest measured figure under vllm is"
            f" {m['vendor_bandwidth_efficiency']:.2f} (mi300x): {best['gpus']} → {same['gpus']} devices at that figure"
            ) in text
    assert "What would change the answer:" in text
    j = plan_json(r)
    assert j["efficiency_basis"] == "fitted" and j["measured_basis"]["at_devices"] == same["gpus"]
    assert [x["lever"] for x in j["what_would_change"]["lines"]] == ["runner_up_price", "bandwidth_efficiency"]
    assert any(w.startswith("Warning: † mi355x") for w in j["warnings"])
    vt = render_plan(v)
    assert "Efficiency basis: vendor_measured" in vt and "† mi355x" not in vt


def test_a_call_with_headroom_is_no_dagger_call(con):
    from kvreg.plan import render_plan

    # Llama 4 Scout at the Q4 workload: 4 × MI355X either way, TP 1 × 4 (decode speed binds at the stated 0.45, a †
    # call that held at the MI300X's measured figure) or TP 4 × 1.  At one price and device count the more headroom
    # ranks first (ranked_plans, issue 12): TP 4, where one replica holds all 200 users within the TPOT and its
    # admission (binding 'none'), so there is no † call and no second plan.  (The "call holds" clause this test
    # covered before has no case left in the Q4 lists: each such tie now goes to the option with headroom.)
    r = _plan(con, "llama-4-scout-17b-16e", weights_dtypes=["fp8"])
    best = r.feasible[0]
    assert (best["hardware_id"], best["tp"], best["replicas"], best["gpus"]) == ("mi355x", 4, 1, 4)
    assert best["binding_constraint"] == "none" and min(best["max_seqs_per_replica"], best["rate_max_batch"]) >= 200
    tp1 = next(p for p in r.feasible if (p["hardware_id"], p["tp"]) == ("mi355x", 1))
    assert (tp1["gpus"], tp1["usd_per_hour"], tp1["binding_constraint"]) == (4, best["usd_per_hour"], "tpot")
    assert r.measured is None and not any(w.startswith("Warning: †") for w in render_plan(r).splitlines())


def test_max_num_batched_tokens_lever_matches_plans_at_that_setting(con):
    # DeepSeek-V4-Flash on the MI325X under vLLM 0.33: the admission binds, and the blocks its sliding-window cache sets
    # hold grow with the prefill chunk (W − 1 + max_num_batched_tokens, 215; its page-weighted layout is admitted on
    # the start-up figure, 220), so the setting moves the count.  (Gemma 4 31B was the case until the scheduler's
    # freeing of the blocks behind the window was modelled: one request's prefill chunk then moves its admission by
    # less than one sequence, and the TPOT binds.)
    r = _plan(con, "deepseek-v4-flash", hardware=["mi325x", "mi300x"], weights_dtypes=["fp8"])
    best, lev = r.feasible[0], r.levers
    assert (best["hardware_id"], best["binding_constraint"]) == ("mi325x", "admission")
    assert lev["batched_setting"] == best["max_num_batched_tokens"] and lev["batched_is_default"]
    alts = lev["batched_alternatives"]
    assert alts and any(a["batched"] < lev["batched_setting"] for a in alts)
    for a in alts:
        assert a["replicas"] == math.ceil(200 / min(a["admitted"], best["rate_max_batch"]))
        assert a["devices"] == a["replicas"] * best["tp"] and a["replicas"] != best["replicas"]
    lower = [a for a in alts if a["batched"] < lev["batched_setting"]]
    assert lower[0]["admitted"] > best["max_seqs_per_replica"]   # a smaller chunk: fewer window blocks, more admitted
    # the same configuration sized by plans at that knob: the same admission and device count
    a = lower[0]
    got = con.execute(
        "SELECT max_seqs_per_replica, gpus FROM plans(200, 32768, 0.05, max_num_batched_tokens := ?,"
        " only_models := ['deepseek-v4-flash'], only_hardware := ['mi325x']) WHERE engine_id = 'vllm-0.33'"
        " AND weights_dtype = ? AND kv_dtype = ? AND tp = ?",
        [a["batched"], best["weights_dtype"], best["kv_dtype"], best["tp"]]).fetchone()
    assert got == (a["admitted"], a["devices"])
    line = next(x["line"] for x in lev["lines"] if x["lever"] == "max_num_batched_tokens")
    assert (f"max_num_batched_tokens {lev['batched_setting']:,} (the release's default on this device) holds the"
            f" admission at {best['max_seqs_per_replica']} per replica: at {a['batched']:,} it admits"
            f" {a['admitted']} → {a['devices']} devices") in line


def test_levers_core_without_admission_rows_is_plan_levers_for_a_first_principles_call(con):
    # `kvreg plan` skips the admission rows (plan_levers_admission) when no engine row is recommended: the levers must
    # be exactly plan_levers' — and for an engine recommendation the rows are what carry the batched-tokens lever
    from kvreg.plan import plan

    r = plan(con, "llama-3.1-70b", users=200, context_tokens=32768, tpot_s=0.05)
    assert r.feasible[0]["pool_basis"] == "first-principles" and r.levers["lines"]
    con.execute("CREATE OR REPLACE TEMP TABLE t_levers_fp AS SELECT * FROM plan_ranked")
    assert con.execute("SELECT count(*) FROM plan_levers_admission('t_levers_fp')").fetchone() == (0,)
    n, only_full, only_core = con.execute(
        "SELECT (SELECT count(*) FROM plan_levers('t_levers_fp')),"
        " (SELECT count(*) FROM (SELECT * FROM plan_levers('t_levers_fp') EXCEPT ALL"
        "                        SELECT * FROM plan_levers_core('t_levers_fp'))),"
        " (SELECT count(*) FROM (SELECT * FROM plan_levers_core('t_levers_fp') EXCEPT ALL"
        "                        SELECT * FROM plan_levers('t_levers_fp')))").fetchone()
    assert (n, only_full, only_core) == (1, 0, 0)
    e = _plan(con, "deepseek-v4-flash", hardware=["mi325x", "mi300x"], weights_dtypes=["fp8"])
    assert e.feasible[0]["pool_basis"] == "engine" and e.levers["batched_alternatives"]
    assert con.execute("SELECT batched_alternatives FROM plan_levers_core('plan_ranked')").fetchone() == (None,)
    assert con.execute("SELECT count(*) FROM plan_levers_admission('plan_ranked')").fetchone()[0] > 1


def test_a_bad_efficiency_basis_is_a_clear_error(con):
    from kvreg.cli import main
    from kvreg.fit import UsageError
    from kvreg.plan import plan

    for bad in ("42", "'foo'"):
        with pytest.raises(duckdb.Error, match=r"efficiency_basis is 'fitted' \(the default\) or 'vendor_measured'"):
            con.execute(f"SELECT count(*) FROM plans(10, 1000, 0.05, efficiency_basis := {bad},"
                        " only_models := ['llama-3.1-8b'], only_hardware := ['h100-sxm-80gb'])").fetchall()
    with pytest.raises(UsageError, match="fitted, vendor_measured"):
        plan(con, "llama-3.1-8b", users=1, context_tokens=1000, tpot_s=0.05, efficiency_basis="median")
    res = CliRunner().invoke(main, ["plan", "--model", "llama-3.1-8b", "--users", "1", "--context", "1000",
                                    "--tpot-ms", "50", "--efficiency-basis", "foo"])
    assert res.exit_code == 2 and "'foo' is not one of 'fitted', 'vendor_measured'" in res.output
    assert "Traceback" not in res.output


def test_levers_from_the_plans_admission_table_are_plan_levers(con):
    # `kvreg plan` re-admits an engine recommendation from its one admission table (plan_admission_rows, kvreg/plan.py;
    # plan_levers_admission_of, 284): the same levers as plan_levers, which calls engine_capacity_at over the axis
    for knobs in (None, {"max_num_batched_tokens": 4096, "gpu_memory_utilization": 0.85}):
        r = _plan(con, "deepseek-v4-flash", hardware=["mi325x", "mi300x"], weights_dtypes=["fp8"], knobs=knobs)
        assert r.feasible[0]["pool_basis"] == "engine" and r.levers["batched_alternatives"]
        k = knobs or {}
        full = dict_rows_of(con, "SELECT * FROM plan_levers('plan_ranked', gpu_memory_utilization := ?)",
                            [k.get("gpu_memory_utilization")])
        cut = dict_rows_of(con, "SELECT * FROM plan_levers_core('plan_ranked', admission := (SELECT list(a) FROM"
                                " plan_levers_admission_of('plan_ranked', 'plan_admission_rows') a))")
        assert cut == full == [r.levers]
        axis = con.execute("SELECT axis FROM plan_batched_axis([?::BIGINT])", [k.get("max_num_batched_tokens")]
                           ).fetchone()[0]
        assert axis == sorted({n for (n,) in con.execute("SELECT max_num_batched_tokens FROM batched_tokens"
                                                         ).fetchall()} | ({4096} if knobs else set()))


def dict_rows_of(con, sql, params=()):
    from kvreg.fit import dict_rows

    return dict_rows(con.execute(sql, list(params)))


def test_a_dagger_in_the_table_without_a_price_has_its_legend(llama8):
    # attack trial (issue 15): `kvreg plan` printed tpot† and never said what † means when the † row was in
    # the second table (no price) and the priced table had none
    import dataclasses

    from kvreg.plan import render_plan

    r = llama8
    dagger = r.feasible[0]
    assert dagger["binding_constraint"] == "tpot" and dagger["hardware_id"] in r.stated
    plain = next(p for p in r.feasible if not (p["binding_constraint"] == "tpot" and p["hardware_id"] in r.stated))
    text = render_plan(dataclasses.replace(r, feasible=[plain], unpriced=[dagger], measured=None, levers=None))
    assert "tpot†" in text
    assert "† decode speed binds at a bandwidth efficiency nobody has measured on this device" in text
