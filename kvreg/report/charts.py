"""Report charts: matplotlib figures rendered to inline SVG strings, byte-for-byte deterministic.

matplotlib is imported lazily (Agg backend).  Determinism: ``svg.hashsalt`` is
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

# Print-friendly palette (Okabe–Ito, colour-blind safe), one colour per hardware in report order.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
# Line styles cycle with the colours, so hardware with identical curves (two 80 GB parts) stays visible.
STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
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
}
SIZE_IN = (6.6, 2.9)  # width × height of a chart without a legend below it
# Fixed layout, inches: room for two-line y labels and 5-digit tick labels on the left, two-line
# x tick labels plus the x label at the bottom; each legend row below the axes adds LEGEND_ROW_IN.
MARGIN_IN = {"left": 0.95, "right": 0.12, "top": 0.12, "bottom": 0.62}
LEGEND_ROW_IN = 0.17
LEGEND_COLS = 4


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


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


def _figure(legend_entries: int = 0):
    """A figure and its axes, laid out once; ``legend_entries`` series get legend rows below the axes."""
    plt = _plt()
    rows = -(-legend_entries // LEGEND_COLS)
    w, h = SIZE_IN[0], SIZE_IN[1] + rows * LEGEND_ROW_IN
    m = MARGIN_IN
    bottom = m["bottom"] + rows * LEGEND_ROW_IN
    fig = plt.figure(figsize=(w, h))
    ax = fig.add_axes((m["left"] / w, bottom / h, 1 - (m["left"] + m["right"]) / w,
                       (h - bottom - m["top"]) / h))
    return fig, ax


def _legend_below(fig, ax) -> None:
    """The axes' legend centred under the figure's x label, LEGEND_COLS entries a row."""
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 0.01), bbox_transform=fig.transFigure,
              ncols=LEGEND_COLS, borderaxespad=0)


def capacity_vs_context(rows: list, workload_context_tokens: int) -> str | None:
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
        fig, ax = _figure(len(hardware))
        for i, (hw, tp) in enumerate(hardware):
            pts = [r for r in rows if r.hardware_id == hw and r.tp == tp]
            label = hw if tp == 1 else f"{hw} (TP {tp})"
            ax.plot([r.context_tokens for r in pts], [r.max_seqs for r in pts], marker=MARKERS[i % len(MARKERS)],
                    markersize=3, linewidth=1.4, linestyle=STYLES[i % len(STYLES)], color=PALETTE[i % len(PALETTE)],
                    label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=1)  # log-like, but 0 (nothing fits) stays on the chart
        ax.set_ylim(bottom=0)
        _plain_log_labels(ax.yaxis)
        # Label powers of two only: a model's native context (e.g. 160Ki) would crowd its neighbours.
        ticks = dict(sorted((r.context_tokens, r.context_label) for r in rows
                            if r.context_tokens & (r.context_tokens - 1) == 0))
        ax.set_xticks(list(ticks), list(ticks.values()))
        ax.minorticks_off()
        ax.axvline(workload_context_tokens, color="#888888", linestyle="--", linewidth=0.8)
        ax.set_xlabel("context length per sequence (tokens, log scale)")
        ax.set_ylabel("max concurrent sequences\n(first principles, per replica)")
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
        fig, ax = _figure()
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
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(f"concurrent sequences at {context_label}")
        ax.margins(y=0.15)
        ax.legend(loc="upper left", ncols=len(series))
        return _svg(fig)


def roofline(rows: list, context_label: str) -> str | None:
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
        fig, ax = _figure(len(lines))
        for i, (hw, tp) in enumerate(lines):
            pts = [r for r in rows if r.hardware_id == hw and r.tp == tp]
            ax.plot([r.batch for r in pts], [r.decode_tok_per_s for r in pts], marker=MARKERS[i % len(MARKERS)],
                    markersize=3, linewidth=1.4, linestyle=STYLES[i % len(STYLES)], color=PALETTE[i % len(PALETTE)],
                    label=hw if tp == 1 else f"{hw} (TP {tp})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _plain_log_labels(ax.xaxis)
        _plain_log_labels(ax.yaxis, minor=True)
        ax.set_xlabel("batch (concurrent sequences decoding)")
        ax.set_ylabel(f"decode tok/s ceiling at {context_label}")
        _legend_below(fig, ax)
        return _svg(fig)
