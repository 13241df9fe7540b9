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
