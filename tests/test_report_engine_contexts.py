"""Engine figures at a report's own contexts: report and workload contexts join the max_model_len axis.

engine_capacity is evaluated at the max_model_len values of the ``max_model_lens`` axis table (the
4Ki … 1Mi ladder plus observation settings, kvreg/engine_tables.py).  A report asking for a context
off that ladder (48Ki here; the ladder has 40Ki and 64Ki) must still show what the engine admits.
"""

from __future__ import annotations

import duckdb
import yaml

from kvreg.build import populate
from kvreg.engine_tables import MAX_MODEL_LEN_LADDER
from kvreg.registry import load_registry
from kvreg.report.context import build_context
from tests.report_tools import copy_project

OFF_LADDER = 48 * 1024  # 49,152 tokens
WORKLOAD = 24 * 1024  # 24,576 tokens


def test_report_contexts_get_engine_figures(tmp_path):
    assert OFF_LADDER not in MAX_MODEL_LEN_LADDER and WORKLOAD not in MAX_MODEL_LEN_LADDER
    project = copy_project(tmp_path)
    doc = {"id": "offladder", "title": "Off-ladder contexts", "period": "test",
           "models": ["llama-3.1-8b"], "hardware": ["h100-sxm-80gb"],
           "engines": ["first-principles", "vllm-0.33"], "weights_dtypes": ["bf16"], "kv_dtypes": ["bf16"],
           "tp": [1], "contexts": ["32Ki", "48Ki"], "workload": {"users": 10, "context": "24Ki"}}
    (project / "reports" / "offladder.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    registry = load_registry(project)
    con = duckdb.connect(":memory:")
    populate(con, registry)
    lens = {r[0] for r in con.execute("SELECT max_model_len FROM max_model_lens").fetchall()}
    assert {OFF_LADDER, WORKLOAD} <= lens and set(MAX_MODEL_LEN_LADDER) <= lens  # additive
    ctx = build_context(con, registry, "offladder", charts=False)
    (model,) = ctx.models
    vllm = [c for row in model.capacity.rows for c in row.cells if c.engine_id == "vllm-0.33"]
    by_context = {c.context_tokens: c for c in vllm}
    assert set(by_context) == {32768, OFF_LADDER}
    # The engine admits sequences at the off-ladder context, as it does at 32Ki, and fewer of them
    # (each holds 1.5× the tokens in the same pool).
    at32, at48 = by_context[32768].engine_seqs, by_context[OFF_LADDER].engine_seqs
    assert at32 is not None and at48 is not None
    assert 0 < at48 < at32
    # The workload context is on the engine axis too: engine_capacity has that max_model_len.
    (n,) = con.execute("SELECT count(*) FROM engine_capacity WHERE model_id = 'llama-3.1-8b' "
                       "AND engine_id = 'vllm-0.33' AND max_model_len = ?", [WORKLOAD]).fetchone()
    assert n > 0
    # This workload sets no TPOT target: no rate limit (NULL, never 0 — a 0 read as "not one sequence" made
    # the levers divide by it), so the engine's admission binds: 10 users fit one H100.
    plan = con.execute("SELECT rate_max_batch, binding_constraint, replicas, max_seqs_per_replica FROM report_plans "
                       "WHERE engine_id = 'vllm-0.33'").fetchone()
    assert plan[0] is None and plan[1] == "none" and plan[2] == 1 and plan[3] >= 10
    con.close()
