"""The print HTML's charts: matplotlib SVGs rewritten for WeasyPrint (kvreg.report.pdf.svg_for_weasyprint) draw the same.

The rewrite moves each ``style`` attribute's declarations into presentation attributes and drops matplotlib's ``*``
stylesheet, because WeasyPrint parses every style attribute and matches the stylesheet against every element while
drawing.  What must hold is that WeasyPrint draws exactly what it drew before: the PDF of a chart with the features the
report's charts use (grid lines with a square cap, markers drawn by ``<use>``, dashes, text, a legend, no tick marks
and so empty tick groups, horizontal and rotated text) is compared byte for byte, uncompressed and with whole fonts (so
no subset's timestamp differs), but for the identity ``cm`` operators that dropping ``rotate(-0 x y)`` removes.
"""

from __future__ import annotations

import base64
import io
import re

import pytest

from kvreg.report.pdf import svg_for_weasyprint

weasyprint = pytest.importorskip("weasyprint")


def _chart_svg() -> str:
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    # as the report's charts (charts.RC): text as <text>, and no tick marks, so empty tick groups
    with matplotlib.rc_context({"svg.fonttype": "none", "xtick.major.size": 0, "xtick.minor.size": 0,
                                "ytick.major.size": 0, "ytick.minor.size": 0}):
        return _draw(Figure, FigureCanvasSVG)


def _draw(Figure, FigureCanvasSVG) -> str:
    fig = Figure(figsize=(6.6, 3.2))
    FigureCanvasSVG(fig)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    ax.grid(True, color="#dddddd", linewidth=0.6)  # grid lines: stroke-linecap square, over the * rule's butt
    ax.plot([1, 2, 4, 8], [10, 40, 90, 400], marker="o", label="h100-sxm-80gb")
    ax.plot([1, 2, 4, 8], [20, 30, 200, 300], marker="s", linestyle="--", label="mi355x")
    ax.plot([1, 8], [15, 15], solid_capstyle="round", linewidth=3, label="ceiling")
    ax.annotate("binding", (4, 90))
    ax.set_xlabel("batch (sequences)")
    ax.set_ylabel("tokens/s")
    ax.legend()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def _pdf(svg: str) -> bytes:
    from kvreg.report.pdf import ASSET_SCHEME, _fetcher

    img = base64.b64encode(svg.encode()).decode()
    html = f'<html><body><img style="width: 100%" src="data:image/svg+xml;base64,{img}"></body></html>'
    doc = weasyprint.HTML(string=html, base_url=ASSET_SCHEME, url_fetcher=_fetcher(None))
    return doc.write_pdf(uncompressed_pdf=True, full_fonts=True)


def _without_identity_cm(pdf: bytes) -> bytes:
    """The PDF with its identity ``cm`` lines removed, up to its cross-reference table (whose byte offsets, like the
    streams' ``/Length``, move with them)."""
    body = pdf[:pdf.rindex(b"\nxref")]
    return re.sub(rb"/Length \d+", b"/Length", re.sub(rb"(?m)^1 0 0 1 0 0 cm\n", b"", body))


def test_rewritten_chart_draws_byte_identical_pdf():
    svg = _chart_svg()
    out = svg_for_weasyprint(svg)
    # the rewrite did happen: no style attribute, no stylesheet, no metadata left; the square-capped grid lines and
    # the round-capped line keep their caps, and elements that set none get the stylesheet's butt where needed
    assert 'style="' in svg and "*{stroke-linejoin: round; stroke-linecap: butt}" in svg
    assert "style=" not in out and "<metadata" not in out.replace("ns0:", "") and "stroke-linejoin: round" not in out
    assert 'stroke-linecap="square"' in out and 'stroke-linecap="round"' in out and 'stroke-linecap="butt"' in out
    # empty groups (the tick marks' line2d_N, a minor tick's xtick_N) are gone, the rest kept; so is every rotation by 0,
    # but not the y label's by -90
    empty = re.compile(r'<(ns0:)?g id="[^"]*"\s*/>|<(ns0:)?g id="[^"]*">\s*</(ns0:)?g>')
    assert empty.search(svg) and not empty.search(out)
    assert out.count("<ns0:path") == svg.count("<path") and out.count("<ns0:text") == svg.count("<text")
    assert out.count("<ns0:use") == svg.count("<use")
    assert "rotate(-0 " in svg and "rotate(-0 " not in out and out.count("rotate(-90 ") == svg.count("rotate(-90 ") == 1
    before, after = _pdf(svg), _pdf(out)
    assert re.search(rb"\d+(\.\d+)? J\b", before)  # the drawing sets line caps, so a wrong cap would show here
    identity = re.compile(rb"(?m)^1 0 0 1 0 0 cm$")
    assert len(identity.findall(before)) - len(identity.findall(after)) == svg.count("rotate(-0 ") > 0
    assert _without_identity_cm(before) == _without_identity_cm(after)


def test_an_svg_of_another_shape_is_left_as_it_is():
    other_sheet = ('<svg xmlns="http://www.w3.org/2000/svg"><style>path { stroke: red }</style>'
                   '<path d="M 0 0 L 1 1" style="fill: none"/></svg>')
    important = ('<svg xmlns="http://www.w3.org/2000/svg"><path d="M 0 0 L 1 1" style="fill: none !important"/>'
                 '</svg>')
    not_a_declaration = '<svg xmlns="http://www.w3.org/2000/svg"><path d="M 0 0" style="fill"/></svg>'
    for svg in (other_sheet, important, not_a_declaration, "<svg", "not xml"):
        assert svg_for_weasyprint(svg) is svg
    plain = '<svg xmlns="http://www.w3.org/2000/svg"><path d="M 0 0 L 1 1" style="fill: none; stroke: #000"/></svg>'
    assert svg_for_weasyprint(plain) == ('<ns0:svg xmlns:ns0="http://www.w3.org/2000/svg">'
                                         '<ns0:path d="M 0 0 L 1 1" fill="none" stroke="#000" /></ns0:svg>')
