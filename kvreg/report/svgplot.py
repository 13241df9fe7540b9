"""A small SVG plotting surface for the report's charts: axes, log/linear scales, lines, markers, bars, legends.

Why not matplotlib: the report's 31 charts took ~3.5 s of CPU in matplotlib (tick and text artists, the SVG
backend) plus ~0.9 s to import it, most of the Q4 2026 HTML's time (benchmarks/README.md, "reportfast3"); the
charts need none of its generality.  This module writes the SVG text directly: a fixed layout in points (1/72 in,
the SVG's user unit), text as ``<text>`` elements (selectable, one element per line, so the HTML's tests can read
each label), no ids, no dates — the same rows give the same bytes.  It computes nothing about the data beyond the
axes' limits and ticks; the charts (:mod:`kvreg.report.charts`) decide what to plot.

Units: figure and margins in inches on input (as the charts' ``SIZE_IN`` / ``MARGIN_IN``), points inside.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

PT = 72.0  # points per inch
TEXT = "#222222"
SPINE = "#555555"


def esc(text: str) -> str:
    """``text`` escaped for SVG character data and attribute values."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;"))


def _num(v: float) -> str:
    """A coordinate in points, two decimals, no trailing zeros (deterministic, short)."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def text_width(text: str, size: float) -> float:
    """Approximate width in points of ``text`` at font ``size`` (DejaVu Sans averages ~0.55 em a character; used only
    to space legend columns and inner legends, never to place data)."""
    return 0.55 * size * len(text)


class Scale:
    """Data → points along one axis: linear, or logarithmic in ``base``.

    Args:
        kind: ``"linear"`` or ``"log"``.
        lo, hi: data limits (log: both > 0).
        p0, p1: the points the limits map to (p1 < p0 for a y axis, SVG's y grows downwards).
    """

    def __init__(self, kind: str, lo: float, hi: float, p0: float, p1: float, base: float = 10):
        self.kind, self.base, self.lo, self.hi, self.p0, self.p1 = kind, base, lo, hi, p0, p1
        self._f: Callable[[float], float] = math.log if kind == "log" else float
        self._a, self._b = self._f(lo), self._f(hi)
        if self._b == self._a:
            self._b = self._a + 1.0

    def __call__(self, v: float) -> float:
        return self.p0 + (self._f(v) - self._a) / (self._b - self._a) * (self.p1 - self.p0)

    def inside(self, v: float) -> bool:
        """``v`` lies within the limits (a tick outside is not drawn)."""
        lo, hi = min(self.lo, self.hi), max(self.lo, self.hi)
        return lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9) if self.kind == "log" else lo - 1e-9 <= v <= hi + 1e-9


def limits(values: Sequence[float], kind: str, margin: float = 0.05, *, zero: bool = False) -> tuple[float, float]:
    """Axis limits around ``values`` with ``margin`` of the span on each side (in log space for a log axis, as a
    plotting library's default margins); ``zero``: the lower limit is 0 (bars stand on the axis).

    Raises:
        ValueError: a log axis given a value ≤ 0 (a log axis has no zero: the charts leave such points out).
    """
    lo, hi = min(values), max(values)
    if kind == "log":
        if lo <= 0:
            raise ValueError("a log axis cannot show a value <= 0")
        a, b = math.log(lo), math.log(hi)
        if a == b:
            a, b = a - math.log(2), b + math.log(2)
        d = (b - a) * margin
        return math.exp(a - d), math.exp(b + d)
    if zero:
        lo = min(lo, 0.0)
    if lo == hi:
        hi = lo + 1.0
    d = (hi - lo) * margin
    return (lo if zero and lo == 0 else lo - d), hi + d


def linear_ticks(lo: float, hi: float, most: int = 9) -> list[float]:
    """Round ticks (1, 2, 2.5 or 5 × 10^k apart) within ``[lo, hi]``, at most ``most`` of them."""
    span = hi - lo
    if span <= 0:
        return [lo]
    for k in range(math.floor(math.log10(span)) - 2, math.floor(math.log10(span)) + 2):
        for m in (1, 2, 2.5, 5):
            step = m * 10**k
            first = math.ceil(lo / step - 1e-9)
            n = math.floor(hi / step + 1e-9) - first + 1
            if n <= most:
                return [round((first + i) * step, 10) for i in range(n)]
    return [lo, hi]


def log_ticks(lo: float, hi: float, base: float = 10, most: int = 12) -> list[float]:
    """Powers of ``base`` within ``[lo, hi]`` (every k-th when there are more than ``most``)."""
    a, b = math.ceil(math.log(lo, base) - 1e-9), math.floor(math.log(hi, base) + 1e-9)
    exps = list(range(a, b + 1))
    step = max(1, -(-len(exps) // most))
    return [float(base) ** e for e in exps[::step]]


def log_minor_ticks(lo: float, hi: float) -> list[float]:
    """2×, 3×, … 9× each power of ten within ``[lo, hi]`` (a base-10 axis's minor ticks)."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        out += [m * 10.0**e for m in range(2, 10) if lo <= m * 10.0**e <= hi]
    return out


DASHES = {"-": None, "--": (3.7, 1.6), "-.": (6.4, 1.6, 1.0, 1.6), ":": (1.0, 1.65)}  # × the line width


def marker(kind: str, x: float, y: float, size: float, color: str) -> str:
    """One marker of ``kind`` (``o s ^ D v P X * h <``) centred at (x, y), ``size`` points across."""
    r = size / 2
    fill = f'fill="{color}" stroke="{color}" stroke-width="0.5"'
    if kind == "o":
        return f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" {fill}/>'
    if kind == "s":
        return f'<rect x="{_num(x - r)}" y="{_num(y - r)}" width="{_num(size)}" height="{_num(size)}" {fill}/>'
    pts = {
        "^": [(0, -1), (0.87, 0.5), (-0.87, 0.5)],
        "v": [(0, 1), (0.87, -0.5), (-0.87, -0.5)],
        "<": [(-1, 0), (0.5, -0.87), (0.5, 0.87)],
        "D": [(0, -1), (0.75, 0), (0, 1), (-0.75, 0)],
        "P": [(-0.33, -1), (0.33, -1), (0.33, -0.33), (1, -0.33), (1, 0.33), (0.33, 0.33), (0.33, 1), (-0.33, 1),
              (-0.33, 0.33), (-1, 0.33), (-1, -0.33), (-0.33, -0.33)],
        "X": [(-0.7, -1), (0, -0.3), (0.7, -1), (1, -0.7), (0.3, 0), (1, 0.7), (0.7, 1), (0, 0.3), (-0.7, 1),
              (-1, 0.7), (-0.3, 0), (-1, -0.7)],
        "*": [(math.sin(i * math.pi / 5) * (1 if i % 2 == 0 else 0.4), -math.cos(i * math.pi / 5) *
               (1 if i % 2 == 0 else 0.4)) for i in range(10)],
        "h": [(math.sin(i * math.pi / 3), -math.cos(i * math.pi / 3)) for i in range(6)],
    }.get(kind, [(0, -1), (1, 0), (0, 1), (-1, 0)])
    d = " ".join(f"{_num(x + px * r)},{_num(y + py * r)}" for px, py in pts)
    return f'<polygon points="{d}" {fill}/>'


class Chart:
    """One chart: a figure of ``w_in`` × ``h_in`` inches with one axes box placed by margins in inches.

    Draw with the methods below (data coordinates once :meth:`set_scales` is called), then :meth:`svg`.
    """

    def __init__(self, w_in: float, h_in: float, left: float, right: float, top: float, bottom: float,
                 font_size: float = 8.5):
        self.w, self.h = w_in * PT, h_in * PT
        self.x0, self.x1 = left * PT, self.w - right * PT
        self.y0, self.y1 = self.h - bottom * PT, top * PT   # y0: the axes' bottom edge (points from the top)
        self.fs = font_size
        self.back: list[str] = []    # grid
        self.body: list[str] = []    # data
        self.front: list[str] = []   # spines, ticks, labels, legend
        self.legend_items: list[tuple[str, dict]] = []
        self.sx: Scale | None = None
        self.sy: Scale | None = None

    def set_scales(self, sx: Scale, sy: Scale) -> None:
        """Use ``sx`` / ``sy`` (built over this chart's :meth:`xrange` / :meth:`yrange`) for data coordinates."""
        self.sx, self.sy = sx, sy

    def xrange(self) -> tuple[float, float]:
        """The axes box's x extent in points (left, right), for a :class:`Scale`."""
        return self.x0, self.x1

    def yrange(self) -> tuple[float, float]:
        """The axes box's y extent in points (bottom, top: SVG's y grows downwards), for a :class:`Scale`."""
        return self.y0, self.y1

    # ---- primitives, in points -------------------------------------------------------------------------------
    def text(self, x: float, y: float, s: str, *, size: float | None = None, anchor: str = "middle",
             baseline: str = "central", color: str = TEXT, rotate: bool = False, weight: str | None = None,
             layer: list[str] | None = None) -> None:
        """One line of text at (x, y) points; ``anchor`` start/middle/end, ``baseline`` central/hanging/auto.
        Baselines are written as a ``dy`` shift (SVG renderers differ on ``dominant-baseline``)."""
        size = size or self.fs
        dy = {"central": 0.35 * size, "hanging": 0.8 * size, "auto": 0.0}[baseline]
        rot = f' transform="rotate(-90 {_num(x)} {_num(y)})"' if rotate else ""
        w = f' font-weight="{weight}"' if weight else ""
        col = "" if color == TEXT else f' fill="{color}"'
        (self.front if layer is None else layer).append(
            f'<text x="{_num(x)}" y="{_num(y + dy)}" font-size="{_num(size)}" text-anchor="{anchor}"{col}{w}{rot}>'
            f'{esc(s)}</text>')

    def line_pts(self, pts: Sequence[tuple[float, float]], color: str, width: float = 1.0,
                 style: str = "-", layer: list[str] | None = None) -> None:
        """A polyline through ``pts`` (points), in a dash ``style`` of :data:`DASHES`."""
        d = " ".join(f"{_num(x)},{_num(y)}" for x, y in pts)
        dash = DASHES.get(style)
        da = f' stroke-dasharray="{",".join(_num(v * width) for v in dash)}"' if dash else ""
        (self.body if layer is None else layer).append(
            f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="{_num(width)}"'
            f' stroke-linejoin="round"{da}/>')

    # ---- data ------------------------------------------------------------------------------------------------
    def plot(self, xs: Sequence[float], ys: Sequence[float], *, color: str, marker_kind: str | None = None,
             linestyle: str | None = "-", markersize: float = 3.0, linewidth: float = 1.4,
             label: str | None = None) -> None:
        """A line (``linestyle`` None: markers only) through data points, with markers; ``label`` joins the
        legend."""
        pts = [(self.sx(x), self.sy(y)) for x, y in zip(xs, ys)]
        if linestyle:
            self.line_pts(pts, color, linewidth, linestyle)
        if marker_kind:
            self.body.extend(marker(marker_kind, x, y, markersize, color) for x, y in pts)
        if label is not None:
            self.legend_items.append((label, dict(color=color, marker=marker_kind, linestyle=linestyle,
                                                  markersize=markersize, linewidth=linewidth)))

    def bar(self, x: float, height: float, width: float, color: str) -> None:
        """A bar centred at data ``x``, from 0 to data ``height`` (a linear y axis)."""
        left, right = self.sx(x - width / 2), self.sx(x + width / 2)
        top, base = self.sy(height), self.sy(0)
        self.body.append(f'<rect x="{_num(left)}" y="{_num(min(top, base))}" width="{_num(right - left)}"'
                         f' height="{_num(abs(base - top))}" fill="{color}"/>')

    def vline(self, x: float, color: str = "#888888", style: str = "--", width: float = 0.8) -> None:
        """A vertical line across the axes at data ``x``."""
        px = self.sx(x)
        self.line_pts([(px, self.y0), (px, self.y1)], color, width, style)

    def annotate(self, x: float, y: float, s: str, color: str, dx: float = 3.0, size: float = 6.5) -> None:
        """A label ``dx`` points right of data (x, y), vertically centred (may run past the axes, not the figure)."""
        self.text(self.sx(x) + dx, self.sy(y), s, size=size, anchor="start", color=color, layer=self.body)

    # ---- axes ------------------------------------------------------------------------------------------------
    def xaxis(self, ticks: Sequence[float], labels: Sequence[str], *, grid: bool = True, minor: Sequence[float] = (),
              minor_labels: Sequence[str] = ()) -> None:
        """Bottom spine, ticks (3.5 pt; minor 2 pt) with labels under them, vertical grid lines at the major ticks."""
        self.front.append(self._hline(self.y0))
        for v, lab in list(zip(ticks, labels)) + list(zip(minor, minor_labels or [""] * len(minor))):
            if not self.sx.inside(v):
                continue
            px, major = self.sx(v), v in ticks
            if grid and major:
                self.back.append(f'<line x1="{_num(px)}" y1="{_num(self.y0)}" x2="{_num(px)}" y2="{_num(self.y1)}"'
                                 ' stroke="#DDDDDD" stroke-width="0.6"/>')
            self.front.append(f'<line x1="{_num(px)}" y1="{_num(self.y0)}" x2="{_num(px)}"'
                              f' y2="{_num(self.y0 + (3.5 if major else 2))}" stroke="{SPINE}" stroke-width="0.8"/>')
            for i, part in enumerate(str(lab).split("\n") if lab else []):
                self.text(px, self.y0 + 5 + i * 1.15 * self.fs, part, baseline="hanging")

    def yaxis(self, ticks: Sequence[float], labels: Sequence[str], *, grid: bool = True, minor: Sequence[float] = (),
              minor_labels: Sequence[str] = ()) -> None:
        """Left spine, ticks with labels left of them, horizontal grid lines at the major ticks."""
        self.front.append(f'<line x1="{_num(self.x0)}" y1="{_num(self.y0)}" x2="{_num(self.x0)}"'
                          f' y2="{_num(self.y1)}" stroke="{SPINE}" stroke-width="0.8"/>')
        for v, lab in list(zip(ticks, labels)) + list(zip(minor, minor_labels or [""] * len(minor))):
            if not self.sy.inside(v):
                continue
            py, major = self.sy(v), v in ticks
            if grid and major:
                self.back.append(f'<line x1="{_num(self.x0)}" y1="{_num(py)}" x2="{_num(self.x1)}" y2="{_num(py)}"'
                                 ' stroke="#DDDDDD" stroke-width="0.6"/>')
            self.front.append(f'<line x1="{_num(self.x0 - (3.5 if major else 2))}" y1="{_num(py)}"'
                              f' x2="{_num(self.x0)}" y2="{_num(py)}" stroke="{SPINE}" stroke-width="0.8"/>')
            if lab:
                self.text(self.x0 - 5, py, lab, anchor="end")

    def _hline(self, y: float) -> str:
        return (f'<line x1="{_num(self.x0)}" y1="{_num(y)}" x2="{_num(self.x1)}" y2="{_num(y)}" stroke="{SPINE}"'
                ' stroke-width="0.8"/>')

    def xlabel(self, s: str, offset: float = 21.0) -> None:
        """The x axis label, centred ``offset`` points under the axes (under one or two lines of tick labels)."""
        self.text((self.x0 + self.x1) / 2, self.y0 + offset, s, baseline="hanging")

    def ylabel(self, s: str, offset: float = 52.0) -> None:
        """The y axis label, rotated, its lines stacked left to right, ``offset`` points left of the axes."""
        parts = s.split("\n")
        for i, part in enumerate(parts):
            x = self.x0 - offset + (i - (len(parts) - 1) / 2) * 1.2 * self.fs
            self.text(x, (self.y0 + self.y1) / 2, part, rotate=True)

    def _legend_entry(self, x: float, y: float, label: str, st: dict, size: float, layer: list[str]) -> None:
        if st.get("linestyle"):
            self.line_pts([(x, y), (x + 16, y)], st["color"], st.get("linewidth", 1.4), st["linestyle"], layer)
        if st.get("marker"):
            layer.append(marker(st["marker"], x + 8, y, st.get("markersize", 3.0), st["color"]))
        if st.get("patch"):
            layer.append(f'<rect x="{_num(x + 2)}" y="{_num(y - 3.5)}" width="12" height="7" fill="{st["color"]}"/>')
        self.text(x + 20, y, label, size=size, anchor="start", layer=layer)

    def legend_below(self, cols: int, row_in: float, size: float = 7.5) -> None:
        """The legend under the x label, ``cols`` entries a row, rows ``row_in`` inches apart, ending 0.01 of the
        figure's height above its bottom edge."""
        items = self.legend_items
        if not items:
            return
        rows = -(-len(items) // cols)
        colw = (self.w * 0.9) / cols
        x_start = (self.w - colw * cols) / 2
        y_last = self.h - 0.01 * self.h - row_in * PT / 2
        for k, (label, st) in enumerate(items):
            r, c = divmod(k, cols)
            self._legend_entry(x_start + c * colw, y_last - (rows - 1 - r) * row_in * PT, label, st, size, self.front)

    def legend_inside(self, size: float = 7.5) -> None:
        """The legend in one row at the axes' top left."""
        x, y = self.x0 + 6, self.y1 + 7
        for label, st in self.legend_items:
            self._legend_entry(x, y, label, st, size, self.front)
            x += 20 + text_width(label, size) + 10

    def svg(self) -> str:
        """The chart as one ``<svg>`` element (no XML prolog), sized in points."""
        w, h = _num(self.w), _num(self.h)
        return "\n".join([
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}pt" height="{h}pt" viewBox="0 0 {w} {h}"'
            ' version="1.1" font-family="DejaVu Sans, sans-serif">',
            f'<rect width="{w}" height="{h}" fill="#FFFFFF"/>', *self.back, *self.body, *self.front, "</svg>"]) + "\n"
