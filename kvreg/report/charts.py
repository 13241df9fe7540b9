"""Report charts: inline SVG strings written by :mod:`kvreg.report.svgplot`, byte-for-byte deterministic.

The charts only plot rows the queries returned; they compute nothing but axis limits and ticks.  Text stays
text (``<text>`` elements, the report stylesheet's font), so the SVG is small and selectable; no ids or dates are
written, so the same rows give the same bytes.

Speed: until this module wrote the SVG itself, matplotlib drew each of the Q4 2026 report's 31 charts in
~0.11 s of CPU (tick and text artists, its SVG backend) after a ~0.9 s import: 4.4 s of a 10 s HTML report
(benchmarks/README.md, "reportfast3").  The layout is fixed in inches (``SIZE_IN``, ``MARGIN_IN``; the figure grows by
one legend row per four series), as it was with matplotlib.  Log-axis tick labels are plain text from
:func:`_count_label` (1, 10, 1,000): a log axis has no zero.
"""

from __future__ import annotations

import math

from kvreg.report import svgplot

# Kenneth Kelly's colours of maximum contrast (without white, black and the two palest yellows), so
# devices stay apart in print.  A device's colour, marker and line style are derived from its hardware id
# (device_style), so a device looks the same in every chart of every report, whatever else is listed.
PALETTE = ["#875692", "#F38400", "#A1CAF1", "#BE0032", "#C2B280", "#848482", "#008856", "#E68FAC", "#0067A5",
           "#F99379", "#604E97", "#F6A600", "#B3446C", "#882D17", "#8DB600", "#654522", "#E25822", "#2B3D26"]
STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<"]
SERIES = {"naive": "#BBBBBB", "first principles": "#0072B2", "engine": "#D55E00"}
FONT_SIZE = 8.5          # tick and axis labels, points
LEGEND_FONT_SIZE = 7.5
END_LABEL_FONT_SIZE = 6.5
SIZE_IN = (6.6, 2.9)  # width × height of a chart without a legend below it
# Fixed layout, inches: room for two-line y labels and 5-digit tick labels on the left, two-line
# x tick labels plus the x label at the bottom; each legend row below the axes adds LEGEND_ROW_IN.
MARGIN_IN = {"left": 0.95, "right": 0.12, "top": 0.12, "bottom": 0.62}
LEGEND_ROW_IN = 0.17
LEGEND_COLS = 4


def device_style(hardware_id: str) -> dict:
    """Colour, marker and line style of one device, from a stable hash of its id (same in every chart).

    Three independent digits of the SHA-1 of the id pick the colour, marker and style, so two devices share
    all three only by a 1-in-400 chance; the charts also label each line at its end.
    """
    import hashlib

    h = int(hashlib.sha1(hardware_id.encode()).hexdigest(), 16)
    return {"color": PALETTE[h % len(PALETTE)], "marker": MARKERS[(h // 97) % len(MARKERS)],
            "linestyle": STYLES[(h // 9973) % len(STYLES)]}


def report_styles(hardware_ids) -> dict[str, dict]:
    """One style per device of a report: :func:`device_style`, with colour clashes inside the report resolved.

    Devices are taken in id order; a device whose hashed colour is already taken moves to the next free
    colour of the palette (linear probing), so each device of the report has its own colour, the same in
    every chart, and a device keeps its colour in any report where its hashed colour is free.
    """
    taken: set[str] = set()
    out = {}
    for hid in sorted(set(hardware_ids)):
        st = dict(device_style(hid))
        i = PALETTE.index(st["color"])
        for k in range(len(PALETTE)):
            c = PALETTE[(i + k) % len(PALETTE)]
            if c not in taken:
                st["color"] = c
                break
        taken.add(st["color"])
        out[hid] = st
    return out


def _count_label(value: float, _pos=None) -> str:
    """A log-axis tick label as plain text: 1, 10, 1,000, 0.1 (never mathtext)."""
    return f"{value:,.0f}" if value >= 1 or value == 0 else f"{value:g}"


def _minor_label(value: float, _pos=None) -> str:
    """Minor log-axis ticks: label 2× and 5× a power of ten (200, 500), so a one-decade axis reads."""
    mantissa = value / 10 ** math.floor(math.log10(value)) if value > 0 else 0
    return _count_label(value) if round(mantissa) in (2, 5) else ""




def _log_axis_labels(lo: float, hi: float, base: float = 10, minor: bool = False):
    """Major ticks (powers of ``base``) and their labels within [lo, hi]; with ``minor`` (base 10) also the minor
    ticks 2× … 9× and their labels at 2× and 5× (:func:`_minor_label`), so an axis spanning a decade or two reads."""
    major = svgplot.log_ticks(lo, hi, base)
    labels = [_count_label(v) for v in major]
    if not (minor and base == 10):
        return major, labels, [], []
    small = svgplot.log_minor_ticks(lo, hi)
    return major, labels, small, [_minor_label(v) for v in small]


def _chart(legend_entries: int = 0) -> svgplot.Chart:
    """A chart laid out once: ``SIZE_IN`` plus one legend row (``LEGEND_ROW_IN``) per ``LEGEND_COLS`` series."""
    rows = -(-legend_entries // LEGEND_COLS)
    m = MARGIN_IN
    return svgplot.Chart(SIZE_IN[0], SIZE_IN[1] + rows * LEGEND_ROW_IN, m["left"], m["right"], m["top"],
                         m["bottom"] + rows * LEGEND_ROW_IN, font_size=FONT_SIZE)


def _xlabel(chart: svgplot.Chart, text: str, tick_lines: int = 1) -> None:
    """The x label under ``tick_lines`` lines of tick labels."""
    chart.xlabel(text, offset=5 + tick_lines * 1.15 * FONT_SIZE + 3)


def _lines_chart(series: list, *, x_base: int, x_ticks=None, y_minor: bool, vline: float | None = None) -> svgplot.Chart:
    """A log-log chart of device lines: ``series`` ``[(label, style, xs, ys)]`` (points with y > 0 only), x in log
    ``x_base`` (ticks ``x_ticks`` ``{value: label}``, default its powers with :func:`_count_label`), y log 10, an
    end label at each line's last point, the legend below."""
    ch = _chart(len(series))
    xs_all = [x for _, _, xs, _ in series for x in xs]
    ys_all = [y for _, _, _, ys in series for y in ys]
    if not xs_all:   # nothing fits anywhere: empty axes over the ticks asked for
        xs_all, ys_all = list(x_ticks or [1, 2]), [1, 10]
    xlo, xhi = svgplot.limits(xs_all, "log")
    ylo, yhi = svgplot.limits(ys_all, "log")
    ch.set_scales(svgplot.Scale("log", xlo, xhi, *ch.xrange(), base=x_base), svgplot.Scale("log", ylo, yhi, *ch.yrange()))
    if x_ticks is None:
        major, labels, _, _ = _log_axis_labels(xlo, xhi, x_base)
    else:
        major, labels = list(x_ticks), list(x_ticks.values())
    ch.xaxis(major, labels)
    ymaj, ylab, ymin, yminlab = _log_axis_labels(ylo, yhi, 10, minor=y_minor)
    ch.yaxis(ymaj, ylab, minor=ymin, minor_labels=yminlab)
    if vline is not None and ch.sx.inside(vline):
        ch.vline(vline)
    for label, st, xs, ys in series:
        ch.plot(xs, ys, color=st["color"], marker_kind=st["marker"], linestyle=st["linestyle"], markersize=3,
                linewidth=1.4, label=label)
        ch.annotate(xs[-1], ys[-1], label, st["color"], size=END_LABEL_FONT_SIZE)
    return ch


def capacity_vs_context(rows: list, workload_context_tokens: int, styles: dict | None = None) -> str | None:
    """Max concurrent sequences against context length (log2 x axis), one line per hardware.

    Args:
        rows: chart_capacity rows for one model (hardware_id, tp, context_tokens, context_label,
            max_seqs, naive_max_seqs, engine_seqs), ordered by hardware then context.
        workload_context_tokens: drawn as a dashed vertical line.

    Returns:
        An SVG string, or None when there is nothing to plot.
    """
    if not rows:
        return None
    series = []
    for hw, tp in dict.fromkeys((r.hardware_id, r.tp) for r in rows):
        # a log axis has no zero: contexts at which nothing fits are left out (the caption says so)
        pts = [r for r in rows if r.hardware_id == hw and r.tp == tp and r.max_seqs]
        if pts:
            series.append((hw if tp == 1 else f"{hw} (TP {tp})", (styles or {}).get(hw) or device_style(hw),
                           [r.context_tokens for r in pts], [r.max_seqs for r in pts]))
    # Label powers of two only: a model's native context (e.g. 160Ki) would crowd its neighbours.
    ticks = dict(sorted((r.context_tokens, r.context_label) for r in rows
                        if r.context_tokens & (r.context_tokens - 1) == 0))
    ch = _lines_chart(series, x_base=2, x_ticks=ticks, y_minor=False, vline=workload_context_tokens)
    _xlabel(ch, "context length per sequence (tokens, log scale)")
    ch.ylabel("max concurrent sequences\n(sequences per replica, log)")
    ch.legend_below(LEGEND_COLS, LEGEND_ROW_IN, LEGEND_FONT_SIZE)
    return ch.svg()


def naive_vs_engine(rows: list, context_label: str) -> str | None:
    """Grouped bars per hardware at the workload context: naive, first principles and (when known) engine.

    Args:
        rows: chart_capacity rows for one model at one context.
        context_label: e.g. ``32Ki``, for the axis label.
    """
    if not rows:
        return None
    ch = _chart()
    series = [("naive", "naive_max_seqs"), ("first principles", "max_seqs")]
    if any(r.engine_seqs is not None for r in rows):
        series.append(("engine", "engine_seqs"))
    names = {"engine": f"engine ({rows[0].admission_engine_id})"}
    width = 0.8 / len(series)
    labels = [r.hardware_id if r.tp == 1 else f"{r.hardware_id}\n(TP {r.tp})" for r in rows]
    top = max([getattr(r, col) or 0 for r in rows for _, col in series] + [1])
    ylo, yhi = 0.0, top * 1.15   # room above the tallest bar for its label and the legend
    n = len(rows)
    xlo, xhi = -0.5 - 0.05 * n, n - 0.5 + 0.05 * n
    ch.set_scales(svgplot.Scale("linear", xlo, xhi, *ch.xrange()), svgplot.Scale("linear", ylo, yhi, *ch.yrange()))
    ticks = svgplot.linear_ticks(ylo, yhi)
    ch.yaxis(ticks, [f"{t:,.0f}" if t == int(t) else f"{t:,g}" for t in ticks])
    ch.xaxis(list(range(n)), labels, grid=False)
    for j, (name, col) in enumerate(series):
        color = SERIES[name]
        for i, r in enumerate(rows):
            v = getattr(r, col) or 0
            x = i + (j - (len(series) - 1) / 2) * width
            ch.bar(x, v, width * 0.95, color)
            ch.text(ch.sx(x), ch.sy(v) - 1.5, f"{v:,}", size=7, baseline="auto", layer=ch.body)
        ch.legend_items.append((names.get(name, name), {"color": color, "patch": True}))
    _xlabel(ch, "device (TP size)", max(len(lab.split("\n")) for lab in labels))
    ch.ylabel(f"concurrent sequences at {context_label}", offset=40)
    ch.legend_inside(LEGEND_FONT_SIZE)
    return ch.svg()


def roofline(rows: list, context_label: str, styles: dict | None = None) -> str | None:
    """Aggregate decode tokens/s against batch size (log-log), one line per hardware.

    Args:
        rows: chart_roofline rows for one model (hardware_id, tp, batch, decode_tok_per_s).
        context_label: the workload context the rows are at.
    """
    if not rows:
        return None
    series = []
    for hw, tp in dict.fromkeys((r.hardware_id, r.tp) for r in rows):
        pts = [r for r in rows if r.hardware_id == hw and r.tp == tp and r.decode_tok_per_s]
        if pts:
            series.append((hw if tp == 1 else f"{hw} (TP {tp})", (styles or {}).get(hw) or device_style(hw),
                           [r.batch for r in pts], [r.decode_tok_per_s for r in pts]))
    ch = _lines_chart(series, x_base=2, y_minor=True)
    _xlabel(ch, "batch (concurrent sequences decoding, log scale)")
    ch.ylabel(f"decode ceiling at {context_label}\n(output tokens/s per replica, log)")
    ch.legend_below(LEGEND_COLS, LEGEND_ROW_IN, LEGEND_FONT_SIZE)
    return ch.svg()


def cost_per_million(rows: list, styles: dict | None = None) -> str | None:
    """Dollars per million output tokens for each model (rows of the chart) on each device (one marker each).

    Args:
        rows: chart_cost rows (model_name, hardware_id, usd_per_million_output_tokens), models in report order.
            Rows without a price are left out (the summary lists unpriced devices apart).

    Returns:
        An SVG string, or None when no row has a price.
    """
    pts = [r for r in rows if r.usd_per_million_output_tokens]
    if not pts:
        return None
    models = list(dict.fromkeys(r.model_name for r in rows))
    devices = list(dict.fromkeys(r.hardware_id for r in pts))
    ch = _chart(len(devices))
    ch.x0 = 0.3 * ch.w    # model names need a wider left margin than the fixed layout's
    ch.x1 = 0.98 * ch.w
    y = {m: len(models) - 1 - i for i, m in enumerate(models)}
    xlo, xhi = svgplot.limits([r.usd_per_million_output_tokens for r in pts], "log")
    ch.set_scales(svgplot.Scale("log", xlo, xhi, *ch.xrange()), svgplot.Scale("linear", -0.6, len(models) - 0.4,
                                                                            *ch.yrange()))
    major, labels, minor, minor_labels = _log_axis_labels(xlo, xhi, 10, minor=True)
    ch.xaxis(major, labels, minor=minor, minor_labels=minor_labels)
    ch.yaxis(list(y.values()), list(y), grid=False)
    for k, hw in enumerate(devices):
        st = (styles or {}).get(hw) or device_style(hw)
        mine = [r for r in pts if r.hardware_id == hw]
        # small vertical offsets keep devices with equal costs apart
        off = (k - (len(devices) - 1) / 2) * 0.6 / max(len(devices), 1)
        ch.plot([r.usd_per_million_output_tokens for r in mine], [y[r.model_name] + off for r in mine],
                color=st["color"], marker_kind=st["marker"], linestyle=None, markersize=4.5, label=hw)
    _xlabel(ch, "US dollars per million output tokens (log scale), each device's cheapest option")
    ch.legend_below(LEGEND_COLS, LEGEND_ROW_IN, LEGEND_FONT_SIZE)
    return ch.svg()
