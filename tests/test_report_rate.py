"""A report definition's workload as a request rate (issue 13 item 5): Little's law in SQL, the same plans.

Worked by hand: 4 requests per second, each with 2,000 input and 500 output tokens on average, a 2 s TTFT and a
50 ms TPOT target, are in flight TTFT + (500 − 1) × TPOT = 2 + 24.95 = 26.95 s each; Little's law gives
⌈4 × 26.95⌉ = ⌈107.8⌉ = 108 concurrent requests, each holding 2,500 tokens at its end.  The report sized from the
rate must rank exactly the plans of the same report given ``users: 108`` (and ``kvreg plan --request-rate 4``
must say 108 too): one formula, ``workload_requests`` (kvreg/sql/272_workload_blocks.sql).
"""

from __future__ import annotations

import pytest
import yaml

from tests.report_tools import copy_project
from tests.test_report_schema import line_of, problems_for

RATE = {"request_rate_per_s": 4, "input_tokens": 2000, "output_tokens": 500, "tpot_ms": 50, "ttft_s": 2}
USERS = {"users": 108, "context": 2500, "input_tokens": 2000, "output_tokens": 500, "tpot_ms": 50, "ttft_s": 2}
LISTS = dict(models=["llama-3.1-8b", "qwen3-8b"], hardware=["h100-sxm-80gb", "mi300x"],
             engines=["first-principles", "vllm-0.33"], weights_dtypes=["bf16"], kv_dtypes=["bf16", "fp8"],
             tp=[1, 2], contexts=["8Ki"])


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("rate") / "proj")
    for rid, workload in (("rate", RATE), ("users", USERS)):
        (root / "reports" / f"{rid}.yaml").write_text(yaml.safe_dump(
            {"id": rid, "title": rid, "period": "test", **LISTS, "workload": workload}, sort_keys=False))
    return root


def _ranked(con, registry, report_id: str):
    from kvreg.report.context import rank_options, scope_from_items

    workload, _ = rank_options(con, report_id, scope_from_items(con, report_id))
    cur = con.execute("SELECT * FROM report_options ORDER BY ALL")
    return workload, cur.fetchall()


def test_rate_gives_the_plans_of_the_users_littles_law_counts(project):
    import duckdb

    from kvreg.build import populate
    from kvreg.registry import load_registry

    registry = load_registry(project)
    con = duckdb.connect(":memory:")
    populate(con, registry)
    w_rate, by_rate = _ranked(con, registry, "rate")
    assert (w_rate.users, w_rate.given_users, w_rate.context_tokens, w_rate.request_rate_per_s) == (108, None, 2500, 4)
    (planned,) = con.execute("SELECT DISTINCT workload_users FROM report_plans").fetchone()
    assert planned == 108   # plans applied Little's law itself (users NULL, the rate passed)
    w_users, by_users = _ranked(con, registry, "users")
    assert w_users.users == 108 and len(by_rate) == len(by_users) > 0
    assert by_rate == by_users


def test_kvreg_plan_counts_the_same_requests(project):
    from kvreg.build import memory_connection
    from kvreg.plan import plan

    con = memory_connection(project)
    res = plan(con, "llama-3.1-8b", users=None, context_tokens=None, tpot_s=0.05, ttft_s=2.0,
               workload={"request_rate_per_s": 4, "input_tokens": 2000, "output_tokens": 500})
    assert res.users == 108


def test_report_cover_states_the_rate(project):
    from kvreg.report.make import render

    page = render(project, "rate", ["html"], charts=False)["html"].decode()
    assert "108 concurrent sequences of 2,500 tokens" in page
    assert "Little's law: 4 requests per second, with 2,000 tokens of input and 500 tokens of output" in page


def test_users_and_rate_together_is_a_problem(tmp_path):
    (p,) = problems_for(tmp_path, workload={"users": 10, "context": "8Ki", **RATE})
    assert (p.code, p.key, p.line) == ("workload-demand", "workload.users", line_of(tmp_path, "  users: 10"))


def test_neither_users_nor_rate_is_a_problem(tmp_path):
    (p,) = problems_for(tmp_path, workload={"context": "8Ki"})
    assert p.code == "workload-demand" and "not both and not neither" in p.message


@pytest.mark.parametrize("drop, missing", [("tpot_ms", "tpot_ms"), ("input_tokens", "input_tokens")])
def test_rate_needs_lengths_and_tpot(tmp_path, drop, missing):
    workload = {k: v for k, v in RATE.items() if k != drop}
    if drop == "input_tokens":
        workload.pop("output_tokens")
    found = problems_for(tmp_path, workload={**workload, "context": 2500})
    (p,) = [p for p in found if p.code == "workload-rate"]
    assert (p.key, p.line) == ("workload.request_rate_per_s", line_of(tmp_path, "  request_rate_per_s: 4"))
    assert missing in p.message


def test_rate_beyond_a_billion_requests_is_a_problem_at_its_line(tmp_path):
    from kvreg.problems import KvregError
    from kvreg.report.make import render

    root = copy_project(tmp_path / "proj")
    workload = {**RATE, "request_rate_per_s": 1000000, "output_tokens": 100000000}   # 10^6/s × ~5·10^6 s
    (root / "reports" / "r.yaml").write_text(yaml.safe_dump(
        {"id": "r", "title": "r", "period": "p", **LISTS, "workload": workload}, sort_keys=False))
    with pytest.raises(KvregError) as err:
        render(root, "r", ["html"], charts=False)
    (p,) = err.value.problems
    assert (p.file, p.code, p.key) == ("reports/r.yaml", "workload-rate", "workload.request_rate_per_s")
    assert p.line == line_of(tmp_path, "  request_rate_per_s: 1000000")
