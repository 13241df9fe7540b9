"""Charts' end labels (a line's name at its last point) end inside the figure: the fixed layout's right margin held
none, and a line ending on the axes' right edge had its label cut at the edge ("mi355x", "rtx-pro-…" at 128Ki in the
Q4 2026 report's capacity charts)."""

from __future__ import annotations

import collections
import re

import pytest

pytest.importorskip("matplotlib")

Cap = collections.namedtuple("Cap", "hardware_id tp context_tokens context_label max_seqs naive_max_seqs "
                                    "engine_seqs admission_engine_id")
Roof = collections.namedtuple("Roof", "hardware_id tp batch decode_tok_per_s")


def _label_ends(svg: str, labels) -> tuple[float, dict[str, float]]:
    """The figure's width and, for each label, where its text ends (points): the SVG's x of the start-anchored text
    plus its width as matplotlib measures it."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    from kvreg.report import charts

    width = float(re.search(r'<svg[^>]* width="([\d.]+)pt"', svg).group(1))
    prop = FontProperties(family=charts.RC["font.family"], size=charts.END_LABEL_PT)
    ends = {}
    for label in labels:
        m = re.search(r'<text style="[^"]*text-anchor: start[^"]*" x="([\d.]+)"[^>]*>' + re.escape(label) + "</text>",
                      svg)
        assert m, label
        ends[label] = float(m.group(1)) + TextToPath().get_text_width_height_descent(label, prop, ismath=False)[0]
    return width, ends


def test_capacity_chart_end_labels_end_inside_the_figure():
    from kvreg.report import charts

    # every line ends at the last context, on the axes' right edge; the longest label is 20 characters
    rows = [Cap(hw, tp, 1024 * 2**i, f"{2**i}Ki", n // 2**i, n // 2**i, None, None)
            for hw, tp, n in (("h100-sxm-80gb", 8, 40000), ("mi355x", 1, 9000), ("rtx-pro-6000", 1, 700))
            for i in range(8)]
    svg = charts.capacity_vs_context(rows, 32768)
    width, ends = _label_ends(svg, ["h100-sxm-80gb (TP 8)", "mi355x", "rtx-pro-6000"])
    assert max(ends.values()) <= width - charts.END_LABEL_PAD_IN * 72 + 0.1, ends
    # and the room is no more than the longest label needs (within the SVG's rounding): the axes are not shrunk
    # further than that
    assert max(ends.values()) > width - charts.END_LABEL_PAD_IN * 72 - 0.5, ends


def test_roofline_labels_inside_and_axes_untouched_when_they_fit():
    from kvreg.report import charts

    # one line ends at the right edge: its label is fitted
    rows = [Roof("h100-sxm-80gb", 2, 2**i, 90.0 * 2**i) for i in range(8)]
    svg = charts.roofline(rows, "32Ki")
    width, ends = _label_ends(svg, ["h100-sxm-80gb (TP 2)"])
    assert ends["h100-sxm-80gb (TP 2)"] <= width - charts.END_LABEL_PAD_IN * 72 + 0.1
    # a line ending at a quarter of the axes leaves them as the fixed layout made them (MARGIN_IN)
    fig, ax = charts._figure(1)
    ax.plot([1, 100], [1, 1])
    ax.plot([1, 2], [1, 2])
    charts._end_label(ax, 2, 2, "b200", "#000000")
    before = ax.get_position().bounds
    charts._fit_end_labels(fig, ax)
    assert ax.get_position().bounds == before
