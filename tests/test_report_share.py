"""The report serves its own capacity_at calls (plans, roofline) from the rows it already computed
(kvreg/report/context.py _share_capacity, issue 12 item 7): the same rows as the registry's macro, an error for
any call those rows cannot answer, and the registry's macro back once the report's queries are done."""

from __future__ import annotations

import duckdb
import pytest

from kvreg.report.context import rank_options, scope_from_items, unshare_capacity

REPORT = "example"


@pytest.fixture()
def shared(con):
    """The session database with the example report ranked on the whole contexts axis (the capacity shared)."""
    scope = scope_from_items(con, REPORT)
    workload, _ = rank_options(con, REPORT, scope, axis=True)
    try:
        yield con, scope, workload
    finally:
        unshare_capacity(con)


def _call(scope, contexts) -> tuple[str, dict]:
    return ("SELECT * FROM capacity_at($c, only_models := $m, only_hardware := $h)",
            {"c": contexts, "m": scope["models"], "h": scope["hardware"]})


def test_shared_capacity_gives_the_registrys_rows(shared):
    con, scope, workload = shared
    sql, p = _call(scope, [workload.context_tokens])
    got = sorted(con.execute(sql, p).fetchall())
    unshare_capacity(con)
    want = sorted(con.execute(sql + " WHERE list_contains($e, engine_id) AND list_contains($w, weights_dtype)"
                              " AND list_contains($k, kv_dtype) AND list_contains($t, tp)",
                              dict(p, e=scope["engines"], w=scope["weights_dtypes"], k=scope["kv_dtypes"],
                                   t=scope["tp"])).fetchall())
    assert got == want and len(got) > 0


@pytest.mark.parametrize("call", [
    "SELECT * FROM capacity_at([$ctx], only_models := $m, only_hardware := $h, max_num_seqs := 7)",   # other knob
    "SELECT * FROM capacity_at([$ctx], only_hardware := $h)",                                          # no model list
    "SELECT * FROM capacity_at([$ctx], only_models := ['gpt-oss-120b'], only_hardware := $h)",        # not listed
    "SELECT * FROM capacity_at([12345], only_models := $m, only_hardware := $h)",                     # off the axis
    "SELECT * FROM capacity",                                                                         # the view
])
def test_shared_capacity_refuses_what_it_cannot_answer(shared, call):
    con, scope, workload = shared
    params = {k: v for k, v in dict(ctx=workload.context_tokens, m=scope["models"], h=scope["hardware"]).items()
              if f"${k}" in call}
    with pytest.raises(duckdb.Error, match="served from report_capacity_all"):
        con.execute(f"SELECT count(*) FROM ({call})", params).fetchall()


def test_unshare_restores_the_registrys_macro(shared):
    con, scope, workload = shared
    unshare_capacity(con)
    n = con.execute("SELECT count(*) FROM capacity_at([12345], only_models := $m, only_hardware := $h)",
                    {"m": scope["models"], "h": scope["hardware"]}).fetchone()[0]
    assert n > 0   # a context off the report's axis: answered by the registry's macro again


def test_shared_speed_efficiency_is_the_views_rows_and_plans_agree(views_con, con):
    """share_views: speed_efficiency materialised once as a temp table that the views read; the same plans rows,
    and the view answers again once unshared.  On a built database (``con`` reads it as one: PERSISTED_VIEWS are
    tables) there is no view to share, and share_views leaves it as it is."""
    from kvreg.report.context import share_views, unshare_views

    temp = ("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = 'speed_efficiency'")
    share_views(con)
    assert con.execute(temp).fetchone() == (0,)
    unshare_views(con)
    con = views_con

    plans = ("SELECT * FROM plans(64, 32768, 0.05, only_models := ['llama-3.1-8b', 'qwen3-8b'],"
             " only_hardware := ['h100-sxm-80gb', 'h200']) ORDER BY ALL")
    view = sorted(con.execute("SELECT * FROM speed_efficiency").fetchall(), key=repr)
    before = con.execute(plans).fetchall()
    share_views(con)
    try:
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = "
                           "'speed_efficiency'").fetchone() == (1,)
        assert sorted(con.execute("SELECT * FROM speed_efficiency").fetchall(), key=repr) == view and view
        assert con.execute(plans).fetchall() == before and before
    finally:
        unshare_views(con)
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = "
                       "'speed_efficiency'").fetchone() == (0,)


def _engine_call(scope) -> tuple[str, dict]:
    return ("SELECT * FROM engine_capacity_at($c, only_models := $m, only_hardware := $h)",
            {"c": [8192, 32768, 131072], "m": scope["models"], "h": scope["hardware"]})


def test_shared_engine_admission_gives_the_registrys_rows(shared):
    """_share_engine_capacity: capacity_at's engine side read from report_engine_capacity_all (the admission chain
    once per report) answers with the registry macro's own rows, restricted to the report's lists."""
    from kvreg.report.context import _share_engine_capacity, knob_params

    con, scope, workload = shared
    # rank_options dropped its temp engine_capacity_at once report_capacity was made
    assert con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'engine_capacity_at'"
                       " AND schema_name = 'main' AND database_name = 'temp'").fetchone() == (0,)
    _share_engine_capacity(con, scope, knob_params(workload))
    sql, p = _engine_call(scope)
    try:
        got = sorted(con.execute(sql, p).fetchall(), key=repr)
    finally:
        unshare_capacity(con)
    want = sorted(con.execute(sql + " WHERE list_contains($e, engine_id) AND list_contains($w, weights_dtype)"
                              " AND list_contains($k, kv_dtype) AND list_contains($t, tp)",
                              dict(p, e=scope["engines"], w=scope["weights_dtypes"], k=scope["kv_dtypes"],
                                   t=scope["tp"])).fetchall(), key=repr)
    assert got == want and len({r[0] for r in got}) > 1   # several models' engine rows


@pytest.mark.parametrize("call", [
    "SELECT * FROM engine_capacity_at([8192], only_models := $m, only_hardware := $h, max_num_seqs := 7)",
    "SELECT * FROM engine_capacity_at([8192], only_hardware := $h)",
    "SELECT * FROM engine_capacity_at([8192], only_models := $m, only_hardware := ['gb200'])",
    "SELECT * FROM engine_capacity_at([12345], only_models := $m, only_hardware := $h)",
    "SELECT * FROM engine_capacity_at([8192], only_models := $m, only_hardware := $h, available_kv_bytes := 1e9)",
])
def test_shared_engine_admission_refuses_what_it_cannot_answer(shared, call):
    from kvreg.report.context import _share_engine_capacity, knob_params

    con, scope, workload = shared
    _share_engine_capacity(con, scope, knob_params(workload))
    params = {k: v for k, v in dict(m=scope["models"], h=scope["hardware"]).items() if f"${k}" in call}
    with pytest.raises(duckdb.Error, match="served from report_engine_capacity_all"):
        con.execute(f"SELECT count(*) FROM ({call})", params).fetchall()


def _lists(scope) -> dict:
    return dict(m=scope["models"], h=scope["hardware"], e=scope["engines"], w=scope["weights_dtypes"],
                k=scope["kv_dtypes"], t=scope["tp"])


_IN_LISTS = (" WHERE list_contains($e, engine_id) AND list_contains($w, weights_dtype) AND list_contains($k, kv_dtype)"
             " AND list_contains($t, tp)")


def test_one_admission_evaluation_gives_the_registrys_rows(shared):
    """scope_engine_capacity.sql evaluates the admission chain once over the lengths and the batched_tokens axis; the
    two tables cut from it are the registry macro's own rows: report_engine_capacity_all those of the call at the
    report's settings (no batched axis), report_engine_batched those of the levers' call (every setting at the
    workload context), every column."""
    con, scope, workload = shared
    unshare_capacity(con)
    lens = [n for (n,) in con.execute("SELECT DISTINCT n FROM (SELECT max_model_len AS n FROM max_model_lens UNION ALL"
                                      " SELECT context_tokens FROM contexts) ORDER BY 1").fetchall()]
    axis = [b for (b,) in con.execute("SELECT max_num_batched_tokens FROM batched_tokens ORDER BY 1").fetchall()]
    at_setting = sorted(con.execute(
        "SELECT * FROM engine_capacity_at($c, only_models := $m, only_hardware := $h)" + _IN_LISTS,
        dict(_lists(scope), c=lens)).fetchall(), key=repr)
    batched = sorted(con.execute(
        "SELECT * FROM engine_capacity_at([$w0], batched_axis := $b, only_models := $m, only_hardware := $h)"
        + _IN_LISTS, dict(_lists(scope), w0=workload.context_tokens, b=axis)).fetchall(), key=repr)
    assert sorted(con.execute("SELECT * FROM report_engine_capacity_all").fetchall(), key=repr) == at_setting
    assert sorted(con.execute("SELECT * FROM report_engine_batched").fetchall(), key=repr) == batched
    assert len({r[7] for r in batched}) == len(axis) > 2   # every setting, several models' rows
    assert len({r[0] for r in batched}) > 1 and len(at_setting) > len(batched)


def test_served_levers_are_the_registrys(shared):
    """report_levers serves plan_levers_admission's engine_capacity_at from report_engine_batched: the levers of
    every recommendation equal plan_levers' with the registry's admission chain, the batched-tokens lever included.
    """
    from kvreg.report.context import availability, report_levers, with_plans

    con, scope, workload = shared
    avail = with_plans(con, availability(con, workload, scope, batched=True), workload)
    got = report_levers(con, scope, workload, avail)
    assert con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'engine_capacity_at'"
                       " AND database_name = 'temp'").fetchone() == (0,)   # dropped again
    unshare_capacity(con)
    want = con.execute("SELECT * FROM plan_levers('report_plans')").fetchall()
    assert [tuple(r) for r in got] == want
    # every recommendation's levers come back (the batched-tokens lever itself: tests/test_report_levers.py; no
    # recommendation of the example moves with the setting since its Gemma 4 admission is window-bounded)
    assert got and any(r.lines for r in got)


@pytest.mark.parametrize("call", [
    "SELECT * FROM engine_capacity_at([$ctx], batched_axis := [2048], only_models := $m, only_hardware := $h,"
    " max_num_seqs := 7)",                                                                                # other knob
    # another context; a setting off the axis
    "SELECT * FROM engine_capacity_at([8192], batched_axis := [2048], only_models := $m, only_hardware := $h)",
    "SELECT * FROM engine_capacity_at([$ctx], batched_axis := [2049], only_models := $m, only_hardware := $h)",
    "SELECT * FROM engine_capacity_at([$ctx], only_models := $m, only_hardware := $h)",                  # no axis
    "SELECT * FROM engine_capacity_at([$ctx], batched_axis := [2048], only_hardware := $h)",             # no models
    "SELECT * FROM engine_capacity_at([$ctx], batched_axis := [2048], only_models := $m, only_hardware := $h,"
    " max_num_batched_tokens := 2048)",                                                                  # a setting
])
def test_served_batched_admission_refuses_what_it_cannot_answer(shared, call):
    from kvreg.report.context import _share_engine_batched, knob_params

    con, scope, workload = shared
    _share_engine_batched(con, scope, knob_params(workload))
    params = {k: v for k, v in dict(ctx=workload.context_tokens, m=scope["models"], h=scope["hardware"]).items()
              if f"${k}" in call}
    with pytest.raises(duckdb.Error, match="served from report_engine_batched"):
        con.execute(f"SELECT count(*) FROM ({call})", params).fetchall()


def test_ranking_without_the_axis_is_the_registrys(con):
    """``rank_options`` without the axis (``kvreg diff``'s ranking) serves plans' capacity_at from report_capacity:
    the options it ranks are those of plans over the registry's own macros, which answer again afterwards."""
    from kvreg.report.context import knob_params, materialise, plans_params, query_text

    scope = scope_from_items(con, REPORT)
    workload, avail = rank_options(con, REPORT, scope)
    got = con.execute("SELECT * FROM report_options ORDER BY ALL").fetchall()
    assert con.execute("SELECT count(*) FROM duckdb_functions() WHERE database_name = 'temp' "
                       "AND function_name IN ('capacity_at', 'engine_capacity_at')").fetchone()[0] == 0
    materialise(con, "report_plans", "scope_plans", plans_params(scope, workload, knob_params(workload), "fitted"))
    con.execute(f"CREATE OR REPLACE TEMP TABLE report_options AS {query_text('plan_options')}", {"report": REPORT})
    want = con.execute("SELECT * FROM report_options ORDER BY ALL").fetchall()
    assert avail.plans and got == want and len(got) > 0
