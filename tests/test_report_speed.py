"""What keeps `kvreg report` fast: folded dead rows in the capacity table, charts written as SVG text.

benchmarks/bench_report.py measures the times (benchmarks/README.md); these tests pin the behaviour
the speed relies on, so it cannot regress silently: configurations whose weights do not fit are
printed as one line per hardware × weights × TP (nothing lost: every cell of those rows is 0), and
the charts are SVG text written without matplotlib, with plain-text tick labels (no mathtext).
"""

from __future__ import annotations

import collections

import pytest

from tests.report_tools import ROOT


@pytest.fixture(scope="module")
def example():
    import duckdb

    from kvreg.build import populate
    from kvreg.registry import load_registry
    from kvreg.report.context import build_context
    from kvreg.report.render import render_html

    reg = load_registry(ROOT)
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


def test_charts_are_written_without_matplotlib_with_plain_tick_labels():
    # matplotlib took ~4.4 s CPU of the Q4 2026 HTML (import + 31 charts); the charts are now written as SVG text
    code = """
import collections, sys
from kvreg.report import charts
Row = collections.namedtuple("Row", "hardware_id tp context_tokens context_label max_seqs naive_max_seqs "
                                    "engine_seqs admission_engine_id batch decode_tok_per_s model_name "
                                    "usd_per_million_output_tokens")
rows = [Row(hw, 1, 1024 * 2**i, f"{2**i}Ki", n // 2**i, n // 2**i, None, None, 2**i, 100.0 * 2**i, "m", 0.5 * n)
        for hw, n in (("a", 4000), ("b", 900)) for i in range(8)]
svgs = [charts.capacity_vs_context(rows, 32768), charts.naive_vs_engine(rows[:1], "32Ki"),
        charts.roofline(rows, "32Ki"), charts.cost_per_million(rows)]
assert all(s.startswith("<svg") for s in svgs)
assert svgs[0] == charts.capacity_vs_context(rows, 32768)    # deterministic
assert ">1,000<" in svgs[0] and ">4Ki<" in svgs[0]           # plain text, never mathtext
print("matplotlib" in sys.modules)
"""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
    from kvreg.report import charts

    assert charts._count_label(1000) == "1,000" and charts._count_label(0.5) == "0.5"
    assert charts._minor_label(200) == "200" and charts._minor_label(300) == ""


def test_svg_scales_and_ticks():
    from kvreg.report import svgplot

    s = svgplot.Scale("log", 1, 100, 0, 200)
    assert s(10) == pytest.approx(100) and s(1) == 0 and s(100) == pytest.approx(200)
    y = svgplot.Scale("linear", 0, 140, 180, 20)            # SVG's y grows downwards
    assert y(70) == pytest.approx(100)
    assert svgplot.linear_ticks(0, 145) == [0, 20, 40, 60, 80, 100, 120, 140]
    assert svgplot.log_ticks(0.8, 5000) == [1, 10, 100, 1000]
    assert svgplot.log_ticks(1, 2**20, base=2) == [2.0**e for e in range(0, 21, 2)]   # at most 12 labels
    assert svgplot.log_minor_ticks(150, 450) == [200, 300, 400]
    lo, hi = svgplot.limits([10, 1000], "log")             # 5 % of the span in log space each side
    assert (lo, hi) == (pytest.approx(10 / 100**0.05), pytest.approx(1000 * 100**0.05))
    with pytest.raises(ValueError):
        svgplot.limits([0, 10], "log")
    assert svgplot.esc('a<b & "c"') == "a&lt;b &amp; &quot;c&quot;"
