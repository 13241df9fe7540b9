"""What keeps `kvreg report` fast: folded dead rows in the capacity table, charts drawn once.

benchmarks/bench_report.py measures the times (benchmarks/README.md); these tests pin the behaviour
the speed relies on, so it cannot regress silently: configurations whose weights do not fit are
printed as one line per hardware × weights × TP (nothing lost: every cell of those rows is 0), and
each chart is drawn exactly once, with plain-text tick labels (no mathtext).
"""

from __future__ import annotations

import collections

import pytest

from tests.report_tools import ROOT


@pytest.fixture(scope="module")
def example(shipped_registry):
    import duckdb

    from kvreg.build import populate
    from kvreg.report.context import build_context
    from kvreg.report.render import render_html

    reg = shipped_registry
    con = duckdb.connect(":memory:")
    populate(con, reg)
    ctx = build_context(con, reg, "example", charts=False)
    con.close()
    return ctx, render_html(ctx, None)


def test_weights_that_do_not_fit_fold_into_one_line(example):
    from kvreg.report.context import CapacityRow, DeadLine

    ctx, html = example
    m = next(m for m in ctx.models if m.model_id == "deepseek-v3")
    # DeepSeek-V3 (671B parameters, bf16 ≈ 1.3 TB) does not fit one 80 GB device: all four configurations
    # (2 KV dtypes × 2 engines) of h100-sxm-80gb / bf16 / TP 1 are kept in `rows`, all zeros...
    dead = [r for r in m.capacity.rows if (r.config.hardware_id, r.config.weights_dtype, r.config.tp)
            == ("h100-sxm-80gb", "bf16", 1)]
    assert len(dead) == 4
    assert all(c.max_seqs == 0 and c.naive_max_seqs == 0 and not c.engine_seqs for r in dead for c in r.cells)
    # ... and printed as one line naming them all, with the engine's refusal kept.
    (line,) = [x for x in m.capacity.lines if isinstance(x, DeadLine) and (
        x.config.hardware_id, x.config.weights_dtype, x.config.tp) == ("h100-sxm-80gb", "bf16", 1)]
    assert line.kv_dtypes == ["bf16", "fp8"] and line.engines == ["first-principles", "vllm-0.22-0.26"]
    assert line.engine_refuses
    section = html[html.index('id="appendix-deepseek-v3"'):]          # the grid is in the appendix
    section = section[:section.index("</details>")]
    assert section.count("does not fit at TP 1: 0 sequences at every context (naive, first principles, engine)"
                         "; the engine refuses to start") == sum(
        isinstance(x, DeadLine) and x.config.tp == 1 for x in m.capacity.lines)
    # Every configuration is either printed as its own row or folded into exactly one line.
    shown = [x for x in m.capacity.lines if isinstance(x, CapacityRow)]
    folded = sum(len(x.kv_dtypes) * len(x.engines) for x in m.capacity.lines if isinstance(x, DeadLine))
    assert len(shown) + folded == len(m.capacity.rows)
    # A configuration whose weights fit is never folded.
    assert not any(x.config.weights_fit for x in m.capacity.lines if isinstance(x, DeadLine))


def test_charts_drawn_once_with_plain_tick_labels(monkeypatch):
    import matplotlib.figure

    from kvreg.report import charts

    Row = collections.namedtuple("Row", "hardware_id tp context_tokens context_label max_seqs naive_max_seqs "
                                        "engine_seqs admission_engine_id")
    rows = [Row(hw, 1, 1024 * 2**i, f"{2**i}Ki", n // 2**i, n // 2**i, None, None)
            for hw, n in (("a", 4000), ("b", 900)) for i in range(8)]
    draws = []
    real = matplotlib.figure.Figure.draw
    monkeypatch.setattr(matplotlib.figure.Figure, "draw", lambda self, r: (draws.append(self), real(self, r))[1])
    svg = charts.capacity_vs_context(rows, 32768)
    assert len(draws) == 1  # one draw: no tight bounding box, no layout engine pass at save time
    assert svg.startswith("<svg") and svg == charts.capacity_vs_context(rows, 32768)  # deterministic
    assert ">1,000<" in svg  # matplotlib's log formatter would write 10³ as mathtext glyphs
    assert charts._count_label(1000) == "1,000" and charts._count_label(0.5) == "0.5"
    assert charts._minor_label(200) == "200" and charts._minor_label(300) == ""


def _chart_jobs():
    """Charts of every kind with different series counts, limits and labels (so a reused axes must forget them)."""
    Cap = collections.namedtuple("Cap", "hardware_id tp context_tokens context_label max_seqs naive_max_seqs "
                                        "engine_seqs admission_engine_id")
    Roof = collections.namedtuple("Roof", "hardware_id tp batch decode_tok_per_s")
    Cost = collections.namedtuple("Cost", "model_name hardware_id usd_per_million_output_tokens")
    cap_a = [Cap(hw, 1, 1024 * 2**i, f"{2**i}Ki", n // 2**i, 2 * n // 2**i, None, None)
             for hw, n in (("h100-sxm-80gb", 4000), ("b200", 900)) for i in range(8)]
    cap_b = [Cap(hw, tp, 8192 * 2**i, f"{8 * 2**i}Ki", n // 2**i, n // 2**i, n // 2**(i + 1), "vllm-0.33")
             for hw, tp, n in (("h200", 8, 70000), ("mi300x", 2, 300), ("b300", 1, 5), ("rtx-pro-6000", 4, 60),
                               ("gb200", 1, 2000))
             for i in range(5)]
    roof_a = [Roof("h200", 1, 2**i, 90.0 * 2**i / (1 + i)) for i in range(10)]
    roof_b = [Roof(hw, 8, 2**i, k * 2**i) for hw, k in (("b200", 3.0), ("mi355x", 0.5), ("h100-sxm-80gb", 40.0))
              for i in range(4)]
    cost = [Cost(m, hw, c) for m, hw, c in (("Llama", "h200", 0.4), ("Llama", "b200", 0.9), ("Qwen", "h200", 12.0))]
    return [("capacity_vs_context", cap_a, (32768,)), ("naive_vs_engine", cap_b[:4], ("32Ki",)),
            ("roofline", roof_a, ("32Ki",)), ("capacity_vs_context", cap_b, (65536,)),
            ("naive_vs_engine", [r for r in cap_a if r.context_tokens == 4096], ("4Ki",)),
            ("roofline", roof_b, ("8Ki",)), ("cost_per_million", cost, ())]


def test_reused_axes_and_chart_workers_draw_the_same_bytes_as_fresh_figures():
    """A chart kind's figure is reused (charts._REUSED) and charts are drawn in worker processes: neither may
    change a byte of any chart, in any order, against a fresh figure in this process."""
    from kvreg.report import charts

    jobs = _chart_jobs()
    fresh = []
    for kind, rows, args in jobs:
        charts._REUSED.clear()
        fresh.append(getattr(charts, kind)(rows, *args))
    assert all(s and s.startswith("<svg") for s in fresh) and len(set(fresh)) == len(fresh)
    charts._REUSED.clear()
    forward = [getattr(charts, kind)(rows, *args) for kind, rows, args in jobs]
    backward = [getattr(charts, kind)(rows, *args) for kind, rows, args in reversed(jobs)][::-1]
    assert forward == fresh and backward == fresh
    from kvreg.report import chart_workers

    assert chart_workers.start_workers()
    pending = [chart_workers.submit(kind, rows, *args) for kind, rows, args in jobs]
    assert [p.result() for p in pending] == fresh
    # drawn by the workers, not by this process's fallback
    assert all(isinstance(p, chart_workers._Pending) and p.future.exception() is None for p in pending)


def test_bench_large_report_lists_every_model_but_the_draft_heads(tmp_path):
    """benchmarks/bench_report.py's large report: a report refuses a draft head (report-draft-head), so the
    benchmark lists every other model (it did not run while it listed the registry's draft heads)."""
    import yaml

    from benchmarks.bench_report import large_report
    from tests.report_tools import copy_project

    project = copy_project(tmp_path)
    docs = {p.stem: yaml.safe_load(p.read_text()) for p in (project / "registry" / "models").glob("*.yaml")}
    drafts = {m for m, d in docs.items() if "draft_for" in d}
    assert drafts   # the registry has draft heads: else this test pins nothing
    rid = large_report(project)
    listed = yaml.safe_load((project / "reports" / f"{rid}.yaml").read_text())["models"]
    assert sorted(listed) == sorted(set(docs) - drafts)
