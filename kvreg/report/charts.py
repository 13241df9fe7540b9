"""Report charts: matplotlib figures rendered to inline SVG strings, byte-for-byte deterministic.

matplotlib is imported lazily (plain Figure objects, no pyplot).  Determinism: ``svg.hashsalt`` is
fixed (element ids), the SVG ``Date`` metadata is dropped, and text stays text
(``svg.fonttype: none``) so the SVG is small and selectable; fonts are the
report stylesheet's.  The charts only plot rows the queries returned; they
compute nothing.

Speed: each figure has a fixed layout computed from its content (margins in inches, the figure
grows by one legend row per four series) and is drawn once: a tight bounding box or a layout engine
draws it twice at save time.  Log-axis tick labels are plain text from
:func:`_count_label` (matplotlib's default log formatter writes ``$10^{2}$`` mathtext, whose
parser took over half of a report's chart time).
"""

from __future__ import annotations

import io
import math

# Kenneth Kelly's colours of maximum contrast (without white, black and the two palest yellows), so
# devices stay apart in print.  A device's colour, marker and line style are derived from its hardware id
# (device_style), so a device looks the same in every chart of every report, whatever else is listed.
PALETTE = ["#875692", "#F38400", "#A1CAF1", "#BE0032", "#C2B280", "#848482", "#008856", "#E68FAC", "#0067A5",
           "#F99379", "#604E97", "#F6A600", "#B3446C", "#882D17", "#8DB600", "#654522", "#E25822", "#2B3D26"]
STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<"]
SERIES = {"naive": "#BBBBBB", "first principles": "#0072B2", "engine": "#D55E00"}
RC = {
    "svg.hashsalt": "kvreg-report",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 8.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "axes.edgecolor": "#555555",
    "axes.titlesize": 9.5,
    "axes.titleweight": "bold",
    "legend.frameon": False,
    "legend.fontsize": 7.5,
    # No tick marks (the grid lines and labels place the values): each was a marker drawn by matplotlib and a <use>
    # element in the SVG, ~25 a chart, for WeasyPrint to draw too (benchmarks/README.md, pdf10).  The label pads
    # add matplotlib's default tick lengths (3.5 and 2 pt) so that every label stays where it was.
    "xtick.major.size": 0, "xtick.minor.size": 0, "ytick.major.size": 0, "ytick.minor.size": 0,
    "xtick.major.pad": 7.0, "xtick.minor.pad": 5.4, "ytick.major.pad": 7.0, "ytick.minor.pad": 5.4,
}
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


END_LABEL_PT = 6.5       # font size of a line's end label
END_LABEL_OFFSET_PT = 3  # gap between a line's last point and its end label
END_LABEL_PAD_IN = 0.04  # room left between the longest end label and the figure's right edge


def _end_label(ax, x: float, y: float, text: str, color: str) -> None:
    """A direct label at a line's last point, so overlapping lines stay told apart without the legend.

    It runs to the right of the point, past the axes; :func:`_fit_end_labels` makes the room for it."""
    ax.annotate(text, (x, y), xytext=(END_LABEL_OFFSET_PT, 0), textcoords="offset points", fontsize=END_LABEL_PT,
                color=color, va="center", ha="left", annotation_clip=False)


def _fit_end_labels(fig, ax) -> None:
    """Narrow the axes from the right so that every end label (:func:`_end_label`) ends inside the figure.

    The fixed layout's right margin (MARGIN_IN, 0.12 in) holds no label: a label at a line ending on the axes' right
    edge ran off the figure and was cut in the HTML and the PDF ("mi355x", "rtx-pro-…" at 128Ki).  Each label's width
    is matplotlib's own measure of the string (``matplotlib.textpath.TextToPath.get_text_width_height_descent``, in
    points, the metrics the SVG's text is placed with), so no draw is needed; the labels' points keep their place in
    axes fraction ``f`` (the data limits do not move), so a label of width ``L`` inches ends inside when the axes'
    right edge ``R`` satisfies ``left + f·(R − left) + L ≤ width − pad``.  Axes already narrow enough are left as
    they are (the same SVG as before)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.text import Annotation
    from matplotlib.textpath import TextToPath

    labels = [t for t in ax.texts if isinstance(t, Annotation) and t.get_text()]
    if not labels:
        return
    ax.get_xlim(), ax.get_ylim()   # the autoscaled limits, as the SVG will be drawn with them
    w_in = fig.get_size_inches()[0]
    pos = ax.get_position()
    left, right = pos.x0 * w_in, (pos.x0 + pos.width) * w_in
    to_axes = ax.transAxes.inverted()
    measure = TextToPath()
    prop = FontProperties(family=RC["font.family"], size=END_LABEL_PT)
    for t in labels:
        f = to_axes.transform(ax.transData.transform(t.xy))[0]
        if f <= 0:
            continue
        width_pt = measure.get_text_width_height_descent(t.get_text(), prop, ismath=False)[0]
        room = (w_in - END_LABEL_PAD_IN - (END_LABEL_OFFSET_PT + width_pt) / 72 - left) / f
        right = min(right, left + room)
    if right < (pos.x0 + pos.width) * w_in:
        ax.set_position((pos.x0, pos.y0, (right - left) / w_in, pos.height))


class _Mpl:
    """What the charts use of matplotlib, without pyplot: figures are plain ``Figure`` objects saved straight to
    SVG (no pyplot figure manager or Agg canvas per figure, and no pyplot import: the same SVG bytes)."""

    def __init__(self):
        import matplotlib
        from matplotlib.figure import Figure

        self.rc_context = matplotlib.rc_context
        self.figure = Figure

    @staticmethod
    def close(fig) -> None:
        """Nothing to release: no pyplot manager holds the figure."""


_MPL: _Mpl | None = None


def _plt() -> _Mpl:
    global _MPL
    if _MPL is None:
        _MPL = _Mpl()
    return _MPL


def _count_label(value: float, _pos=None) -> str:
    """A log-axis tick label as plain text: 1, 10, 1,000, 0.1 (never mathtext)."""
    return f"{value:,.0f}" if value >= 1 or value == 0 else f"{value:g}"


def _minor_label(value: float, _pos=None) -> str:
    """Minor log-axis ticks: label 2× and 5× a power of ten (200, 500), so a one-decade axis reads."""
    mantissa = value / 10 ** math.floor(math.log10(value)) if value > 0 else 0
    return _count_label(value) if round(mantissa) in (2, 5) else ""


def _plain_log_labels(axis, minor: bool = False) -> None:
    """Label a log/symlog axis's major ticks with :func:`_count_label`; minor ticks at 2× and 5× or not at all."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(_count_label))
    axis.set_minor_formatter(FuncFormatter(_minor_label) if minor else NullFormatter())


def _svg(fig) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), then closed."""
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


# One figure and axes per chart kind, reused from chart to chart (in a process): creating the axes and their tick
# artists was ~30 % of a chart's CPU time (benchmarks/README.md, reportfast4).  Each kind's function makes the same
# calls on it every time, so after :func:`_reset` it ends in the state a fresh axes would: the SVG is the same bytes
# (tests/test_report_speed.py draws charts in two orders and compares them with fresh axes).
_REUSED: dict[str, tuple] = {}


def _reset(ax) -> None:
    """Empty a reused axes of the last chart's data artists, limits, legend and property cycle."""
    for artist in [*ax.lines, *ax.patches, *ax.texts, *ax.collections, *ax.images]:
        artist.remove()
    ax.containers.clear()
    ax.legend_ = None
    ax.relim()
    ax.set_autoscale_on(True)
    ax.set_prop_cycle(None)


def _figure(legend_entries: int = 0, kind: str | None = None):
    """A figure and its axes, laid out once; ``legend_entries`` series get legend rows below the axes.

    ``kind`` (the chart function's name): reuse that kind's figure and axes, emptied (:data:`_REUSED`); None: new ones.
    """
    plt = _plt()
    rows = -(-legend_entries // LEGEND_COLS)
    w, h = SIZE_IN[0], SIZE_IN[1] + rows * LEGEND_ROW_IN
    m = MARGIN_IN
    bottom = m["bottom"] + rows * LEGEND_ROW_IN
    rect = (m["left"] / w, bottom / h, 1 - (m["left"] + m["right"]) / w, (h - bottom - m["top"]) / h)
    if kind in _REUSED:
        fig, ax = _REUSED[kind]
        fig.set_size_inches(w, h)
        _reset(ax)
        ax.set_position(rect)
        return fig, ax
    fig = plt.figure(figsize=(w, h))
    ax = fig.add_axes(rect)
    if kind is not None:
        _REUSED[kind] = (fig, ax)
    return fig, ax


def _legend_below(fig, ax) -> None:
    """The axes' legend centred under the figure's x label, LEGEND_COLS entries a row."""
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 0.01), bbox_transform=fig.transFigure,
              ncols=LEGEND_COLS, borderaxespad=0)


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
    plt = _plt()
    with plt.rc_context(RC):
        hardware = list(dict.fromkeys((r.hardware_id, r.tp) for r in rows))
        fig, ax = _figure(len(hardware), "capacity_vs_context")
        for hw, tp in hardware:
            # a log axis has no zero: contexts at which nothing fits are left out (the caption says so)
            pts = [r for r in rows if r.hardware_id == hw and r.tp == tp and r.max_seqs]
            if not pts:
                continue
            st = (styles or {}).get(hw) or device_style(hw)
            label = hw if tp == 1 else f"{hw} (TP {tp})"
            ax.plot([r.context_tokens for r in pts], [r.max_seqs for r in pts], markersize=3, linewidth=1.4,
                    label=label, **st)
            _end_label(ax, pts[-1].context_tokens, pts[-1].max_seqs, label, st["color"])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _plain_log_labels(ax.yaxis, minor=True)
        # Label powers of two only: a model's native context (e.g. 160Ki) would crowd its neighbours.
        ticks = dict(sorted((r.context_tokens, r.context_label) for r in rows
                            if r.context_tokens & (r.context_tokens - 1) == 0))
        ax.set_xticks(list(ticks), list(ticks.values()))
        ax.minorticks_off()
        ax.axvline(workload_context_tokens, color="#888888", linestyle="--", linewidth=0.8)
        ax.set_xlabel("context length per sequence (tokens, log scale)")
        ax.set_ylabel("max concurrent sequences\n(sequences per replica, log)")
        _fit_end_labels(fig, ax)
        _legend_below(fig, ax)
        return _svg(fig)


def naive_vs_engine(rows: list, context_label: str) -> str | None:
    """Grouped bars per hardware at the workload context: naive, first principles and (when known) engine.

    Args:
        rows: chart_capacity rows for one model at one context.
        context_label: e.g. ``32Ki``, for the axis label.
    """
    if not rows:
        return None
    plt = _plt()
    with plt.rc_context(RC):
        fig, ax = _figure(0, "naive_vs_engine")
        series = [("naive", "naive_max_seqs"), ("first principles", "max_seqs")]
        if any(r.engine_seqs is not None for r in rows):
            series.append(("engine", "engine_seqs"))
        names = {"engine": f"engine ({rows[0].admission_engine_id})"}
        width = 0.8 / len(series)
        labels = [r.hardware_id if r.tp == 1 else f"{r.hardware_id}\n(TP {r.tp})" for r in rows]
        for j, (name, col) in enumerate(series):
            xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(rows))]
            vals = [getattr(r, col) or 0 for r in rows]
            bars = ax.bar(xs, vals, width=width * 0.95, color=SERIES[name], label=names.get(name, name))
            ax.bar_label(bars, labels=[f"{v:,}" for v in vals], fontsize=7, padding=1.5)
        ax.set_xticks(range(len(rows)), labels)
        ax.set_xlabel("device (TP size)")
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(f"concurrent sequences at {context_label}")
        ax.margins(y=0.15)
        ax.legend(loc="upper left", ncols=len(series))
        return _svg(fig)


def roofline(rows: list, context_label: str, styles: dict | None = None) -> str | None:
    """Aggregate decode tokens/s against batch size (log-log), one line per hardware.

    Args:
        rows: chart_roofline rows for one model (hardware_id, tp, batch, decode_tok_per_s).
        context_label: the workload context the rows are at.
    """
    if not rows:
        return None
    plt = _plt()
    with plt.rc_context(RC):
        lines = list(dict.fromkeys((r.hardware_id, r.tp) for r in rows))
        fig, ax = _figure(len(lines), "roofline")
        for hw, tp in lines:
            pts = [r for r in rows if r.hardware_id == hw and r.tp == tp and r.decode_tok_per_s]
            if not pts:
                continue
            st = (styles or {}).get(hw) or device_style(hw)
            label = hw if tp == 1 else f"{hw} (TP {tp})"
            ax.plot([r.batch for r in pts], [r.decode_tok_per_s for r in pts], markersize=3, linewidth=1.4,
                    label=label, **st)
            _end_label(ax, pts[-1].batch, pts[-1].decode_tok_per_s, label, st["color"])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _plain_log_labels(ax.xaxis)
        _plain_log_labels(ax.yaxis, minor=True)
        ax.set_xlabel("batch (concurrent sequences decoding, log scale)")
        ax.set_ylabel(f"decode ceiling at {context_label}\n(output tokens/s per replica, log)")
        _fit_end_labels(fig, ax)
        _legend_below(fig, ax)
        return _svg(fig)


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
    plt = _plt()
    with plt.rc_context(RC):
        models = list(dict.fromkeys(r.model_name for r in rows))
        devices = list(dict.fromkeys(r.hardware_id for r in pts))
        fig, ax = _figure(len(devices), "cost_per_million")
        y = {m: len(models) - 1 - i for i, m in enumerate(models)}
        for k, hw in enumerate(devices):
            st = (styles or {}).get(hw) or device_style(hw)
            mine = [r for r in pts if r.hardware_id == hw]
            # small vertical offsets keep devices with equal costs apart
            off = (k - (len(devices) - 1) / 2) * 0.6 / max(len(devices), 1)
            ax.plot([r.usd_per_million_output_tokens for r in mine], [y[r.model_name] + off for r in mine],
                    linestyle="none", marker=st["marker"], color=st["color"], markersize=4.5, label=hw)
        ax.set_xscale("log")
        _plain_log_labels(ax.xaxis, minor=True)
        ax.set_yticks(list(y.values()), list(y))
        ax.set_ylim(-0.6, len(models) - 0.4)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("US dollars per million output tokens (log scale), each device's cheapest option")
        pos = ax.get_position()   # model names need a wider left margin than the fixed layout's
        ax.set_position((0.3, pos.y0, 0.98 - 0.3, pos.height))
        _legend_below(fig, ax)
        return _svg(fig)
