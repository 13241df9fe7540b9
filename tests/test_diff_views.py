"""kvreg diff internals: views other work adds, non-unique keys, subfolder projects."""

from __future__ import annotations

import types

import duckdb
import pytest
from click.testing import CliRunner

from kvreg.cli import main
from kvreg.diff.scenarios import BASE, HEAD, ViewSpec, attach, compare_view
from kvreg.registry import load_registry
from tests.registry_factory import engine_entry, hardware_entry, write_project
from tests.test_diff import commit, git, model


def project(root, kv_heads):
    return write_project(root, models={"m": model(kv_heads=kv_heads)}, hardware={"hw": hardware_entry("hw")},
                         engines={"first-principles": engine_entry()})


@pytest.fixture
def con(tmp_path):
    c = duckdb.connect(":memory:")
    attach(c, BASE, load_registry(project(tmp_path / "a", 8)))
    attach(c, HEAD, load_registry(project(tmp_path / "b", 4)))
    yield c
    c.close()


def add_view(con, name: str, batch_axis: bool = True):
    # A stand-in for a view other work adds (named apart from the real roofline view): decode rate ∝ 1 / (KV bytes read per step).
    batch = "(VALUES (1), (8)) AS b(batch)" if batch_axis else "(VALUES (1), (8)) AS b(n)"
    cols = "b.batch," if batch_axis else ""
    for alias in (BASE, HEAD):
        con.execute(f"CREATE VIEW {alias}.{name} AS SELECT model_id, hardware_id, weights_dtype, kv_dtype, tp, "
                    f"context_tokens, {cols} 1e12 / seq_bytes AS decode_tok_per_s "
                    f"FROM {alias}.capacity CROSS JOIN {batch} WHERE engine_id = 'first-principles'")


def test_a_view_added_by_other_work_is_compared_on_its_own_axes(con):
    add_view(con, "standin_view")
    view, changes, sets, hidden, summaries = compare_view(con, ViewSpec("standin_view", ("decode_tok_per_s",)),
                                                          [("model", ["m"])])
    assert view.skipped is None and "batch" in view.keys
    at = [c for c in changes if c.keys["context_tokens"] == 32768 and c.keys["weights_dtype"] == "bf16"
          and c.keys["kv_dtype"] == "bf16" and c.keys["tp"] == 1]
    assert sorted(c.keys["batch"] for c in at) == [1, 8]
    old_seq = 32 * 8 * 256 * 2 * 32768
    assert all(c.old == pytest.approx(1e12 / old_seq) and c.new == pytest.approx(2e12 / old_seq)
               and c.pct == pytest.approx(100.0) for c in at)
    assert [(s.figure, s.down) for s in summaries] == [("decode_tok_per_s", 0)]


def test_a_view_whose_key_is_not_unique_is_skipped_with_the_reason(con):
    add_view(con, "standin_view", batch_axis=False)
    view, changes, *_ = compare_view(con, ViewSpec("standin_view", ("decode_tok_per_s",)), [("model", ["m"])])
    assert changes == [] and view.skipped.startswith("key (model_id, hardware_id, weights_dtype, kv_dtype, tp, "
                                                     "context_tokens) is not unique")


def test_missing_view_is_skipped(con):
    view, *_ = compare_view(con, ViewSpec("no_such_view", ("admitted_seqs",)), [("model", ["m"])])
    assert view.skipped == "view not present"


def test_project_in_a_subfolder_of_the_repository(tmp_path):
    repo = tmp_path / "repo"
    proj = project(repo / "capacity", 8)
    git(repo, "init", "-q")
    commit(repo, "base")
    project(repo / "capacity", 4)
    commit(repo, "edit")
    r = CliRunner().invoke(main, ["diff", "HEAD~1", "HEAD", "--project", str(proj)])
    assert r.exit_code == 0, r.output
    assert "registry/models/m.yaml" in r.output and "layer_groups.0.kv_heads: 8 → 4" in r.output


def test_roofline_focus_is_batch_1_and_the_largest_batch_that_fits(con):
    # The focus SQL filters the batch axis by a literal list (so DuckDB prunes it before the arithmetic);
    # the reference here is the plain definition: per scenario, the batch-1 row, and the fitting row of
    # the largest batch (the batch-1 row, shown as batch 0 without a rate, when none fits).
    from kvreg.diff.focus import FOCUS, _KEPT, focus_sql

    entity = "list_contains(['m'], v.model_id)"
    reference = (
        "SELECT * EXCLUDE (n) FROM (SELECT v.model_id, v.hardware_id, v.engine_id, v.weights_dtype, v.kv_dtype, "
        "v.tp, v.context_tokens, CASE WHEN r.which = 1 THEN 'batch 1' ELSE 'capacity' END AS \"at\", "
        "CASE WHEN r.which = 1 OR v.batch_fits THEN v.batch ELSE 0 END AS batch, "
        "CASE WHEN r.which = 1 OR v.batch_fits THEN v.decode_tok_per_s END AS decode_tok_per_s, "
        "v.max_seqs AS __fit, row_number() OVER (PARTITION BY v.model_id, v.hardware_id, v.engine_id, "
        "v.weights_dtype, v.kv_dtype, v.tp, v.context_tokens, r.which ORDER BY v.batch_fits DESC, v.batch DESC) AS n "
        f"FROM {{db}}.roofline v, (VALUES (1), (2)) r(which) WHERE {entity} AND {_KEPT} "
        "AND CASE WHEN r.which = 1 THEN v.batch = 1 ELSE v.batch_fits OR v.batch = 1 END) WHERE n = 1")
    for alias in (BASE, HEAD):
        rows = con.execute(focus_sql(con, FOCUS["roofline"], alias, entity)).fetchall()
        # the last column is why the row is left out of the moves shown (focus.LEFT_OUT): "hw" states no
        # interconnect, so kvreg plan refuses every TP > 1 there (tp_planned), and m is no draft head
        assert {(r[5] > 1, r[-1]) for r in rows} == {(False, None), (True, "tp_refused")}
        got = [r[:-1] for r in rows]
        want = con.execute(reference.format(db=f'"{alias}"')).fetchall()
        assert sorted(got, key=repr) == sorted(want, key=repr) and len(want) > 10
        batches = {r[8] for r in got if r[7] == "capacity"}
        assert 0 in batches or len(batches) > 1  # both "fits" and the largest batches appear
