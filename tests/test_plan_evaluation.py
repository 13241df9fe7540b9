"""How kvreg plan evaluates its rankings, the rows unchanged: the first_principles scope
(kvreg/sql/276_first_principles_scope.sql, kvreg.plan.plan_settings: a first-principles plan bound without the
engine-admission macros) and a † call's two rankings in one statement (kvreg.plan.plan)."""

from __future__ import annotations

import sys

import pytest

from kvreg.plan import plan, plan_settings

# Workloads through every branch of plans a first-principles row can take: dense and MoE, a TTFT target, a shared
# prefix with n samples, a request rate, fp8 weights and KV.
WORKLOADS = [
    ("llama-3.1-70b", "200, 32000, 0.05"),
    ("llama-3.1-8b", "NULL, 32000, 0.05, ttft_s := 2.0, input_tokens := 30000, output_tokens := 2000,"
                     " shared_prefix_tokens := 2048, parallel_samples := 2, request_rate_per_s := 4"),
    ("qwen3-30b-a3b", "64, 8192, 0.05, weights_dtypes := ['fp8', 'bf16'], kv_dtypes := ['fp8', 'bf16']"),
    ("gemma-4-31b", "200, 32768, 0.05, ttft_s := 0.3"),
]


def _search_path(con) -> str:
    return con.execute("SELECT current_setting('search_path')").fetchone()[0]


def test_the_stand_ins_have_mains_columns_and_types_and_no_rows(con):
    # capacity_engine_rows_at is the second branch of capacity_at's UNION ALL: its types by position (the names are
    # the first branch's); workload_blocks_at's names and types
    for sql, by in (("SELECT * FROM capacity_engine_rows_at([8192])", lambda r: r[1]),
                    ("SELECT * FROM workload_blocks_at(1024, 8192)", lambda r: r[:2])):
        main = con.execute(f"DESCRIBE {sql}").fetchall()
        with plan_settings(con, "first-principles"):
            scoped = con.execute(f"DESCRIBE {sql}").fetchall()
            assert con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0] == 0
        assert len(main) > 5 and [by(r) for r in scoped] == [by(r) for r in main]
        assert con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0] > 0   # main's have rows


def test_the_scope_is_only_a_first_principles_plans_and_is_left_after_it(con):
    engine_rows = "SELECT count(*) FROM capacity_at([8192], only_models := ['llama-3.1-8b'], only_engines := ['vllm-0.33'])"
    before = _search_path(con)
    (n,) = con.execute(engine_rows).fetchone()
    assert n > 0
    with plan_settings(con, "vllm-0.33"):
        assert con.execute(engine_rows).fetchone()[0] == n
    with plan_settings(con, "first-principles"):
        assert con.execute(engine_rows).fetchone()[0] == 0   # the stand-ins are what the plan binds
    with pytest.raises(RuntimeError), plan_settings(con, "first-principles"):
        raise RuntimeError("a failed ranking")
    assert _search_path(con) == before
    assert con.execute(engine_rows).fetchone()[0] == n


@pytest.mark.parametrize(("model", "args"), WORKLOADS, ids=[m for m, _ in WORKLOADS])
def test_a_first_principles_ranking_is_the_same_in_the_scope(con, model, args):
    sql = (f"SELECT * FROM ranked_plans({args}, models := ['{model}'], engines := ['first-principles'])"
           " ORDER BY rank_in_model")
    main = con.execute(sql).fetchall()
    with plan_settings(con, "first-principles"):
        scoped = con.execute(sql).fetchall()
    assert len(main) > 10 and any(r for r in main)
    assert scoped == main


def test_plan_is_the_same_without_the_scope(con, monkeypatch):
    """kvreg plan's whole result (its rankings, levers and the † call's measured comparison) with and without the
    scope: the llama-3.1-70b call of docs/plan.md, a † call (mi355x at its stated 0.45)."""
    kp = sys.modules["kvreg.plan"]   # the module (kvreg.plan, the attribute, is the API function)

    got = plan(con, "llama-3.1-70b", users=200, context_tokens=32000, tpot_s=0.05)
    monkeypatch.setattr(kp, "FIRST_PRINCIPLES_SCOPE", "no_such_schema")   # plan_settings then leaves the path
    plain = plan(con, "llama-3.1-70b", users=200, context_tokens=32000, tpot_s=0.05)
    assert got.measured is not None and got.measured["hardware_id"] == "mi355x"
    assert got.ranked[0]["hardware_id"] == "mi355x" and got.ranked[0]["gpus"] == 16
    assert (got.ranked, got.levers, got.measured) == (plain.ranked, plain.levers, plain.measured)


def _ranking(con, basis: str, hardware: list[str] | None = None) -> list[tuple]:
    # the workload as parameters, typed as kvreg.plan.plan passes them (a literal 0.05 would be a DECIMAL)
    return con.execute("SELECT * FROM ranked_plans(?, ?, ?, models := ['llama-3.1-70b'],"
                       " engines := ['first-principles'], weights_dtypes := ['bf16'], kv_dtypes := ['bf16'],"
                       " hardware := ?, efficiency_basis := ?) ORDER BY rank_in_model",
                       [200, 32000, 0.05, hardware, basis]).fetchall()


def test_both_bases_ranked_in_one_statement_are_the_two_rankings(con):
    """A † call's two rankings, made in one LATERAL statement by kvreg.plan.plan, are ranked_plans at each basis."""
    from kvreg.plan_levers import vendor_replaced

    assert {"mi355x", "mi250x", "t4"} <= vendor_replaced(con, "first-principles", None)
    plan(con, "llama-3.1-70b", users=200, context_tokens=32000, tpot_s=0.05)
    for table, basis in (("plan_ranked", "fitted"), ("plan_ranked_measured", "vendor_measured")):
        got = con.execute(f"SELECT * FROM {table} ORDER BY rank_in_model").fetchall()
        assert got == _ranking(con, basis), table
    fitted, measured = _ranking(con, "fitted"), _ranking(con, "vendor_measured")
    assert fitted != measured   # mi355x's rows move: 0.45 stated → 0.30 (mi300x, measured)


def test_without_a_replaced_figure_the_measured_ranking_is_the_fitted_one(con):
    """The premise kvreg.plan_levers.levers_for rests on when no listed device's figure is replaced: the
    'vendor_measured' ranking is then row for row the 'fitted' one (a stated figure without a vendor figure stays)."""
    from kvreg.plan_levers import vendor_replaced

    listed = ["h100-sxm-80gb", "h200", "tpu7x", "gaudi3"]   # tpu7x, gaudi3: stated, no vendor figure
    assert vendor_replaced(con, "first-principles", listed) == set()
    assert _ranking(con, "vendor_measured", listed) == _ranking(con, "fitted", listed)
