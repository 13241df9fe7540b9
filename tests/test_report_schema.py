"""Report definitions (reports/*.yaml) are validated like every other entry: same problems, with file:line."""

from __future__ import annotations

import pytest
import yaml

from kvreg.problems import KvregError
from tests.report_tools import copy_project

BASE = {"id": "r", "title": "T", "period": "P", "models": ["llama-3.1-8b"], "hardware": ["h100-sxm-80gb"],
        "contexts": ["8Ki"], "workload": {"users": 10, "context": "8Ki"}}


def line_of(tmp_path, text: str, after: str | None = None) -> int:
    """1-based line of the first line equal to ``text`` (after the line ``after``) in the written report."""
    lines = (tmp_path / "proj" / "reports" / "r.yaml").read_text().splitlines()
    start = lines.index(after) if after else 0
    return lines.index(text, start) + 1


def problems_for(tmp_path, **changes) -> list:
    from kvreg.registry import load_registry

    project = copy_project(tmp_path / "proj")
    doc = {**BASE, **changes}
    (project / "reports" / "r.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))
    with pytest.raises(KvregError) as err:
        load_registry(project)
    return [p for p in err.value.problems if p.file == "reports/r.yaml"]


def test_unknown_key_suggests_the_known_one(tmp_path):
    (p,) = problems_for(tmp_path, titel="x")
    assert (p.code, p.key, p.line) == ("unknown-key", "titel", line_of(tmp_path, "titel: x"))
    assert "did you mean 'title'" in p.hint


def test_workload_users_must_be_positive(tmp_path):
    (p,) = problems_for(tmp_path, workload={"users": 0, "context": "8Ki"})
    assert (p.code, p.key) == ("not-positive", "workload.users")


def test_context_unit_is_checked(tmp_path):
    (p,) = problems_for(tmp_path, contexts=["32 GiB"])
    assert (p.code, p.key) == ("bad-unit", "contexts.0")


def test_unknown_precision_is_a_bad_choice(tmp_path):
    (p,) = problems_for(tmp_path, weights_dtypes=["fp9"])
    assert (p.code, p.key) == ("bad-choice", "weights_dtypes.0")


def test_fp32_is_not_a_kv_cache_precision(tmp_path):
    (p,) = problems_for(tmp_path, kv_dtypes=["bf16", "fp32"])
    assert (p.code, p.key, p.line) == ("report-reference", "kv_dtypes.1", line_of(tmp_path, "- fp32", "kv_dtypes:"))
    assert "KV cache precisions: bf16, fp8" in p.hint


def test_unknown_hardware_and_engine_are_reported_together(tmp_path):
    found = problems_for(tmp_path, hardware=["h100-sxm-80gb", "h900-unknown"], engines=["vllm-9"])
    assert [(p.code, p.key) for p in found] == [("report-reference", "hardware.1"), ("report-reference", "engines.0")]


def test_report_contexts_join_the_axis(tmp_path):
    from kvreg.build import memory_connection

    project = copy_project(tmp_path / "proj")
    doc = {**BASE, "contexts": ["100000"], "tp": [3], "workload": {"users": 10, "context": 50000}}
    (project / "reports" / "r.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    con = memory_connection(project)
    assert con.execute("SELECT count(*) FROM contexts WHERE context_tokens IN (100000, 50000)").fetchone()[0] == 2
    n = con.execute("SELECT count(*) FROM capacity WHERE model_id = 'llama-3.1-8b' AND context_tokens = 100000"
                    " AND tp = 3").fetchone()[0]
    assert n > 0


@pytest.mark.parametrize("workload, message", [
    ({"users": 10, "context": "8Ki", "input_tokens": 7000}, "give both input_tokens and output_tokens"),
    ({"users": 10, "context": "8Ki", "input_tokens": 7000, "output_tokens": 1000}, "is not context (8192)"),
    ({"users": 10, "context": 8192, "input_tokens": 7192, "output_tokens": 1000, "shared_prefix_tokens": 7192},
     "must be shorter than the input (7192)"),
])
def test_workload_lengths_must_add_up(tmp_path, workload, message):
    (p,) = problems_for(tmp_path, workload=workload)
    assert p.code == "workload-lengths" and message in p.message and p.key.startswith("workload"), p
