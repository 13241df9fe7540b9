"""kvreg diff's cut (kvreg/diff/scenarios.py cut_to_touched): a side cut down to the touched entries gives
exactly the focused rows of the whole registry — the shipped registry, a real engine release, fitted
efficiencies (frozen before the cut), served drafts and resident models."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kvreg.diff.focus import FOCUS, focus_sql
from kvreg.diff.scenarios import attach, cut_to_touched, share_focused
from kvreg.registry import load_registry

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def registry(shipped_registry):
    return shipped_registry


def _focused(con, view: str, kind_col: str, ids: list[str], models: list[str] | None) -> list[tuple]:
    spec = FOCUS[view]
    entity = f"list_contains(?, v.{kind_col})" + (" AND list_contains(?, v.model_id)" if models else "")
    sql = focus_sql(con, spec, "side", entity)
    params = [ids] + ([models] if models else [])
    return sorted(con.execute(f"SELECT * EXCLUDE (__fit) FROM ({sql})", params).fetchall(), key=repr)


@pytest.mark.parametrize("kind, col, ids, views, models", [
    # an accelerator with throughput measurements (its efficiency is fitted across accelerators)
    ("hardware", "hardware_id", ["h100-sxm-80gb"], ["roofline", "costs"], None),
    # a model served with a speculative draft (llama-3.1-8b + EAGLE) and a recurrent hybrid
    ("model", "model_id", ["llama-3.1-8b", "qwen3.6-27b"], ["capacity"], None),
    # an engine release with accounting rules (its engine_accounting row goes with it); the rows of two
    # models are compared, a dense one with a draft and a sliding-window one (the whole grid is minutes)
    ("engine", "engine_id", ["vllm-0.33"], ["engine_capacity", "roofline"], ["llama-3.1-8b", "gemma-4-31b"]),
])
def test_cut_side_gives_the_whole_registrys_focused_rows(registry, kind, col, ids, views, models):
    """The cut side, with capacity replaced by its shared focused rows (share_focused), gives the whole
    registry's focused rows: roofline then reads capacity from that table."""
    whole, cut = duckdb.connect(":memory:"), duckdb.connect(":memory:")
    try:
        for con in (whole, cut):
            con.execute("SET memory_limit = '3GB'")
            attach(con, "side", registry)
        assert cut_to_touched(cut, "side", [(kind, ids)])
        assert share_focused(cut, "side", [(kind, ids)]) == ["engine_capacity", "capacity", "roofline"]
        for view in views:
            expected = _focused(whole, view, col, ids, models)
            assert expected, view
            assert _focused(cut, view, col, ids, models) == expected, view
    finally:
        whole.close()
        cut.close()


def test_mixed_edits_are_not_cut(registry):
    con = duckdb.connect(":memory:")
    try:
        attach(con, "side", registry)
        assert not cut_to_touched(con, "side", [("model", ["llama-3.1-8b"]), ("hardware", ["h100-sxm-80gb"])])
        assert con.execute('SELECT count(*) FROM "side".hardware').fetchone()[0] > 1
    finally:
        con.close()


def test_native_weights_table_is_the_weights_definition(registry):
    """The focus templates semi-join on ``__focus_weights`` (focus.native_weights_table); on the shipped
    registry (accelerators with and without native dtypes, models with and without listed checkpoints,
    served-set ids) it holds exactly the (accelerator, model, weights dtype) that the definition
    ``_WEIGHTS_DEFAULT`` (correlated subqueries) accepts."""
    from kvreg.diff.focus import _WEIGHTS_DEFAULT, native_weights_table

    con = duckdb.connect(":memory:")
    try:
        attach(con, "side", registry)
        native_weights_table(con, "side")
        con.execute(
            "CREATE TEMP TABLE cand AS SELECT h.hardware_id, i.model_id, d.weights_dtype FROM side.hardware h "
            "CROSS JOIN (SELECT model_id FROM side.models UNION SELECT served_id FROM side.served_models) i "
            "CROSS JOIN (SELECT weights_dtype FROM side.checkpoints UNION SELECT dtype FROM side.hardware_precisions "
            "UNION SELECT dtype FROM side.precisions UNION SELECT 'bf16') d(weights_dtype)")
        want = con.execute(f"SELECT * FROM cand v WHERE {_WEIGHTS_DEFAULT.format(db='side')}").fetchall()
        got = con.execute("SELECT hardware_id, model_id, weights_dtype FROM side.__focus_weights").fetchall()
        assert sorted(got, key=repr) == sorted(want, key=repr)
        kinds = con.execute(
            "SELECT count(DISTINCT hardware_id) FILTER (WHERE hardware_id IN (SELECT hardware_id FROM "
            "side.hardware_precisions)), count(DISTINCT hardware_id) FILTER (WHERE hardware_id NOT IN "
            "(SELECT hardware_id FROM side.hardware_precisions)) FROM side.__focus_weights").fetchone()
        assert min(kinds) > 0 and len(want) > 1000  # both branches of the definition are exercised
    finally:
        con.close()


def test_side_cut_to_the_reports_ranks_every_option_as_the_whole_registry(registry):
    """The recommendation check ranks on a copy cut to the checked reports' entries (cut_to_reports): on the
    shipped registry every shipped report's whole ranked option table (not only its rank-1 rows) is the
    whole registry's, for an engine edit (the release is one of the reports' engines)."""
    import importlib

    from kvreg.diff.scenarios import cut_to_reports

    context = importlib.import_module("kvreg.report.context")
    whole, cut = duckdb.connect(":memory:"), duckdb.connect(":memory:")
    try:
        for con in (whole, cut):
            con.execute("SET memory_limit = '3GB'")
            attach(con, "side", registry)
        reports = sorted(r[0] for r in whole.execute("SELECT report_id FROM side.report_workloads").fetchall())
        engines = {r[0] for r in whole.execute("SELECT item_id FROM side.report_items WHERE item_kind = 'engine'").fetchall()}
        touched = sorted(engines - {"first-principles"})[:1]
        assert reports and touched
        cut_to_reports(cut, "side", reports, [("engine", touched)])
        n_models = [c.execute("SELECT count(*) FROM side.models").fetchone()[0] for c in (whole, cut)]
        assert n_models[1] < n_models[0] / 2  # the cut removes most of the grid
        for rid in reports:
            got = []
            for con in (whole, cut):
                con.execute("USE side")
                context.rank_options(con, rid, context.scope_from_items(con, rid))
                got.append(sorted(con.execute("SELECT * FROM report_options").fetchall(), key=repr))
                con.execute("USE memory")
            assert got[0] and got[1] == got[0], rid
    finally:
        whole.close()
        cut.close()


def test_a_side_attached_like_the_other_has_its_own_tables(registry, tmp_path):
    """kvreg diff builds HEAD as a copy of BASE with the differing base tables rebuilt (attach_like): every
    table, view and macro is what attach() builds from HEAD's registry, and BASE is untouched."""
    import shutil

    from kvreg.diff.scenarios import attach_like

    head_root = tmp_path / "head"
    for folder in ("registry", "hardware", "reports"):
        shutil.copytree(ROOT / folder, head_root / folder)
    path = head_root / "hardware" / "generic-80gb.yaml"
    path.write_text(path.read_text().replace("value: 79.6 GiB", "value: 79.0 GiB", 1))
    head = load_registry(head_root)
    con = duckdb.connect(":memory:")
    try:
        attach(con, "base", registry)
        attach(con, "want", head)
        replaced = attach_like(con, "got", head, "base", registry)
        assert "hardware" in replaced and "models" not in replaced

        def catalog(alias):
            # every schema of the side: plan scopes keep stand-ins and tables outside main (277, 278)
            return sorted(con.execute(
                "SELECT 'view', schema_name, view_name FROM duckdb_views() WHERE database_name = ? UNION ALL "
                "SELECT 'table', schema_name, table_name FROM duckdb_tables() WHERE database_name = ? UNION ALL "
                "SELECT 'macro', schema_name, function_name FROM duckdb_functions() WHERE database_name = ?",
                [alias, alias, alias]).fetchall())

        def digest(alias, table, schema="main"):
            return con.execute(f'SELECT count(*), md5(string_agg(t::VARCHAR, \'|\' ORDER BY t::VARCHAR)) '
                               f'FROM "{alias}"."{schema}"."{table}" t').fetchone()

        assert catalog("got") == catalog("want")
        tables = [(schema, t) for kind, schema, t in catalog("want") if kind == "table" and t != "build_info"]
        assert ("plan_admission", "first_principles_none") in tables
        for schema, table in tables:
            assert digest("got", table, schema) == digest("want", table, schema), (schema, table)
        assert digest("base", "hardware") != digest("got", "hardware")
        usable = 'SELECT usable_bytes FROM "{}".capacity WHERE hardware_id = \'generic-80gb\' LIMIT 1'
        assert con.execute(usable.format("got")).fetchone() == con.execute(usable.format("want")).fetchone()
        assert con.execute(usable.format("got")).fetchone() != con.execute(usable.format("base")).fetchone()
    finally:
        con.close()


def test_a_copied_side_is_cut_alone(registry):
    """The recommendation check cuts a copy of each side (copy_side); the views and macros of the copy read the
    copy's tables, and the side itself keeps every row."""
    from kvreg.diff.scenarios import copy_side

    con = duckdb.connect(":memory:")
    try:
        attach(con, "side", registry)
        copy_side(con, "side", "copy")
        con.execute("DELETE FROM copy.hardware WHERE hardware_id <> 'h100-sxm-80gb'")
        con.execute("USE copy")
        assert con.execute("SELECT count(DISTINCT hardware_id) FROM memory_pools_at()").fetchone()[0] == 1
        con.execute("USE side")
        assert con.execute("SELECT count(DISTINCT hardware_id) FROM memory_pools_at()").fetchone()[0] > 1
        con.execute("USE memory")
    finally:
        con.close()
