"""The report's optional sections, driven by the views other issues add (engine_capacity, roofline, plans).

Those views are not on this branch, so the tests create stand-ins with exactly the columns the
report reads (docs/report.md, "Optional views").  The stand-ins' numbers are made up and simple
(engine admits one sequence fewer than first principles), so the HTML can be checked exactly;
they test the report's wiring, not the views.
"""

from __future__ import annotations

import pytest

from tests.report_tools import ROOT

STUBS = [
    """CREATE VIEW engine_capacity AS
       SELECT model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp, context_tokens AS max_model_len,
              pool_tokens AS logged_kv_tokens, greatest(max_seqs - 1, 0) AS admitted_seqs, max_seqs > 0 AS starts
       FROM capacity""",
    """CREATE VIEW roofline AS
       SELECT c.*, b.batch, 100.0 * b.batch AS decode_tok_per_s, 100.0 AS tok_per_s_per_seq
       FROM (SELECT DISTINCT model_id, hardware_id, weights_dtype, kv_dtype, tp, context_tokens FROM capacity) c
       CROSS JOIN (SELECT unnest([1, 2, 4, 8, 16]) AS batch) b""",
    """CREATE MACRO plans(u, s, tpot, ttft) AS TABLE
       SELECT c.model_id, c.hardware_id, c.weights_dtype, c.kv_dtype, c.tp,
              ceil(u / c.max_seqs) AS replicas, ceil(u / c.max_seqs) * c.tp AS gpus,
              ceil(u / c.max_seqs) * c.tp * h.price_usd_per_hour AS usd_per_hour, 'stub: decode speed' AS binding
       FROM capacity c JOIN hardware h USING (hardware_id)
       WHERE c.context_tokens = s AND c.engine_id = 'first-principles' AND c.max_seqs > 0""",
]


def _render(stubs: list[str]):
    import duckdb

    from kvreg.build import populate
    from kvreg.registry import load_registry
    from kvreg.report.context import build_context
    from kvreg.report.render import render_html

    reg = load_registry(ROOT)
    con = duckdb.connect(":memory:")
    populate(con, reg)
    for sql in stubs:
        con.execute(sql)
    ctx = build_context(con, reg, "example")
    con.close()
    return ctx, render_html(ctx, None)


@pytest.fixture(scope="module")
def full():
    return _render(STUBS)


def test_all_optional_views_detected(full):
    ctx, html = full
    assert (ctx.available.engine, ctx.available.roofline, ctx.available.plans) == (True, True, True)
    assert ctx.available.notes == () and "is not in this database" not in html


def test_engine_column_and_ratio(full):
    ctx, html = full
    gemma = next(m for m in ctx.models if m.model_id == "gemma-4-31b")
    row = next(r for r in gemma.capacity.rows if (r.config.hardware_id, r.config.weights_dtype, r.config.kv_dtype,
                                                 r.config.tp) == ("a100-sxm-80gb", "fp8", "fp8", 1))
    cell = next(c for c in row.cells if c.context_tokens == 32768)
    assert (cell.max_seqs, cell.engine_seqs) == (43, 42)
    assert cell.engine_ratio == pytest.approx(43 / 42)
    assert "<th class=\"num\">Engine</th>" in html and "1.02×" in html


def test_engine_refusal_is_a_warning(full):
    ctx, html = full
    kinds = {w.kind for w in ctx.warnings}
    assert "engine-refuses-to-start" in kinds  # llama-3.1-70b fp8 on an H100 at 32Ki: no sequence fits
    assert ">refuses<" in html


def test_recommendation_comes_from_plans(full):
    ctx, html = full
    rec = {o.model_id: o for o in ctx.recommended}
    assert rec["gemma-4-31b"].binding == "stub: decode speed"
    assert rec["gemma-4-31b"].devices == 5 and rec["gemma-4-31b"].usd_per_hour == pytest.approx(5 * 2.4984)
    assert "sized by the plans view for memory and speed together" in html
    assert rec["gemma-4-31b"].planned_seqs == 42 and rec["gemma-4-31b"].naive_devices == 67
    summary = html[html.index('id="summary"'):html.index('class="model"')]
    assert "<strong>Gemma 4 31B:</strong> the 5 devices hold 210 sequences" in summary


def test_roofline_chart_drawn(full):
    ctx, _ = full
    assert all("roofline" in m.charts for m in ctx.models if m.charts.get("capacity"))


def test_view_missing_a_column_is_left_out_with_a_note():
    ctx, html = _render([STUBS[0].replace("max_seqs > 0 AS starts", "max_seqs > 0 AS started")])
    assert not ctx.available.engine
    assert "The engine_capacity view lacks columns starts" in html
