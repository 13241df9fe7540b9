"""How kvreg plan evaluates its rankings, the rows unchanged: the first_principles scope
(kvreg/sql/276_first_principles_scope.sql, kvreg.plan_eval.plan_settings: a first-principles plan bound without the
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
    kp = sys.modules["kvreg.plan_eval"]   # where plan_settings reads the scope names

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


def test_the_release_blocks_stand_ins_are_mains_macros_at_the_default_block_size(con):
    """release_blocks (kvreg/sql/277): engine_kv_buckets_at and engine_kv_layout_at at block_size NULL read the
    persisted views' rows — the rows and types of main's macros; a block size is refused, never the default's rows."""
    import duckdb

    for macro in ("engine_kv_buckets_at", "engine_kv_layout_at"):
        sql = f"SELECT * FROM {macro}()"
        main_types = con.execute(f"DESCRIBE {sql}").fetchall()
        with plan_settings(con, "vllm-0.33"):
            assert con.execute(f"DESCRIBE {sql}").fetchall() == main_types
            n, only_scoped = con.execute(f"SELECT (SELECT count(*) FROM ({sql})), (SELECT count(*) FROM ("
                                         f"{sql} EXCEPT ALL SELECT * FROM main.{macro}()))").fetchone()
            with pytest.raises(duckdb.Error, match="default block size only"):
                con.execute(f"SELECT * FROM {macro}(block_size := 32)").fetchall()
        only_main = con.execute(f"SELECT count(*) FROM ({sql} EXCEPT ALL SELECT * FROM release_blocks.{macro}())"
                                ).fetchone()[0]
        assert n > 100 and (only_scoped, only_main) == (0, 0), macro
    with plan_settings(con, "vllm-0.33", block_size=32):   # a set block size: main's macros, the knob applied
        assert con.execute("SELECT count(*) FROM engine_kv_layout_at(block_size := 32)").fetchone()[0] > 100


# An engine plan through every scope (release_blocks, plan_admission) and without them: the admission binds on the
# MI325X (gemma, sliding windows: the batched-tokens lever), knobs set (a batched setting off the default, a
# utilization), a shared prefix with n samples (plans re-admits from the blocks), a set block size (no release_blocks),
# a † call on a stated efficiency (mi355x: both bases ranked).
ENGINE_PLANS = [
    ("gemma-4-31b", dict(users=200, context_tokens=32768, tpot_s=0.05, engine="vllm-0.33",
                         hardware=["mi325x", "mi300x"], weights_dtypes=["fp8"], kv_dtypes=["fp8"])),
    ("llama-3.1-8b", dict(users=200, context_tokens=32768, tpot_s=0.05, engine="vllm-0.33",
                          hardware=["h100-sxm-80gb", "h200"], weights_dtypes=["fp8"], kv_dtypes=["fp8"],
                          knobs={"max_num_batched_tokens": 4096, "gpu_memory_utilization": 0.85})),
    ("llama-3.1-8b", dict(users=None, context_tokens=None, tpot_s=0.05, ttft_s=2.0, engine="vllm-0.22-0.26",
                          hardware=["l40s", "h100-sxm-80gb"],
                          workload={"request_rate_per_s": 4, "input_tokens": 7192, "output_tokens": 1000,
                                    "shared_prefix_tokens": 2048, "parallel_samples": 2})),
    ("gemma-4-31b", dict(users=32, context_tokens=16384, tpot_s=0.04, engine="vllm-0.33",
                         hardware=["h100-sxm-80gb", "h200"], knobs={"block_size": 32})),
    ("llama-3.1-70b", dict(users=200, context_tokens=32000, tpot_s=0.05, engine="vllm-0.17-0.19",
                           hardware=["mi355x", "mi300x"], weights_dtypes=["fp8"])),
]


@pytest.mark.parametrize(("model", "kw"), ENGINE_PLANS, ids=[f"{m}-{i}" for i, (m, _) in enumerate(ENGINE_PLANS)])
def test_an_engine_plan_is_the_same_without_the_scopes(con, monkeypatch, model, kw):
    """kvreg plan's whole result for an engine release — its rankings, levers (the batched-tokens lever cut from the
    one admission table, plan_levers_admission_of) and the † comparison — with the release_blocks and plan_admission
    scopes and without them (main's macros: the ranking and plan_levers each call engine_capacity_at)."""
    kp = sys.modules["kvreg.plan_eval"]

    got = plan(con, model, **kw)
    admitted = con.execute("SELECT count(*) FROM plan_admission_rows").fetchone()[0]
    monkeypatch.setattr(kp, "RELEASE_BLOCKS_SCOPE", "no_such_schema")
    monkeypatch.setattr(kp, "PLAN_ADMISSION_SCOPE", "no_such_schema")
    plain = plan(con, model, **kw)
    assert admitted > 0 and got.ranked and got.levers is not None
    assert (got.ranked, got.levers, got.measured) == (plain.ranked, plain.levers, plain.measured)


def test_the_plan_admission_stand_in_is_engine_capacity_at_at_the_plans_arguments(con):
    """plan_admission (kvreg/sql/278): after kvreg.plan.plan_admission, engine_capacity_at at the plan's context, knobs
    and ids reads the table's rows at the plan's setting — main's rows; at other knobs it gives no row."""
    from kvreg.plan import PLAN_ADMISSION_SCOPE, plan_admission, search_first

    ids = dict(only_models=["llama-3.1-8b"], only_hardware=["h100-sxm-80gb", "h200"], only_engines=["vllm-0.33"])
    def sql(args):
        return "SELECT * FROM engine_capacity_at([32768], " + ", ".join(f"{k} := ${k}" for k in args) + ") ORDER BY ALL"

    for knobs in ({}, {"max_num_batched_tokens": 4096, "gpu_memory_utilization": 0.85, "max_num_seqs": 128}):
        args = dict(ids, **knobs)
        main = con.execute(sql(args), args).fetchall()
        assert plan_admission(con, "llama-3.1-8b", "vllm-0.33", 32768, ids["only_hardware"], knobs) == \
            PLAN_ADMISSION_SCOPE
        with search_first(con, PLAN_ADMISSION_SCOPE):
            assert con.execute(sql(args), args).fetchall() == main and len(main) > 10
            other = dict(args, gpu_memory_utilization=0.5)   # not the table's setting: no row, never its numbers
            assert con.execute(sql(other), other).fetchall() == []
    assert plan_admission(con, "llama-3.1-8b", "first-principles", 32768, None, {}) is None


def test_the_plan_admission_first_principles_branch_has_mains_columns_and_no_rows(con):
    # an engine release's plan has no first-principles row (only_engines is that release): the stand-in (278) gives
    # none, with the columns and types of main's branch, which for that release gives none either
    sql = "SELECT * FROM capacity_first_principles_rows_at([8192], only_engines := ['vllm-0.33'])"
    main = con.execute(f"DESCRIBE {sql}").fetchall()
    assert con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM capacity_first_principles_rows_at([8192])").fetchone()[0] > 0
    from kvreg.plan import PLAN_ADMISSION_SCOPE, search_first

    with search_first(con, PLAN_ADMISSION_SCOPE):
        assert con.execute(f"DESCRIBE {sql}").fetchall() == main and len(main) > 20
        assert con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0] == 0
