"""Render a :class:`DiffResult` as text (terminal), Markdown (a pull-request comment) or JSON.

Numbers are printed with their units through :mod:`kvreg.formats` (bytes as
KiB/MiB/GiB, sequences and tokens as whole counts); JSON keeps base units.
"""

from __future__ import annotations

import dataclasses
import json

from kvreg import formats
from kvreg.diff.model import UNMOVED, DiffResult, FigureChange, ScenarioSetChange
from kvreg.diff.scenarios import ENTITY_COLUMNS

DETAIL_ROWS = 200  # Markdown rows per entry inside <details>
DETAIL_BUDGET = 50_000  # characters of <details> rows in all: a GitHub comment stops at 65,536


def figure_value(column: str, v) -> str:
    """One figure with its unit, chosen by the column name's unit suffix."""
    if v is None:
        return "n/a"
    if column.endswith("_bytes"):
        return formats.bytes_binary(v)
    if column.endswith("_per_s"):
        return f"{v:,.1f}/s"
    if column.startswith("usd") or column.endswith("_usd"):
        return formats.usd(v)
    if isinstance(v, int) or float(v).is_integer():
        return formats.count(v)
    return f"{v:,.4g}"


def pct_text(f: FigureChange) -> str:
    """``+2.8%``; a sequence count from or to 0 is said in words (fits / no longer fits), not as a %."""
    seqs = f.figure.endswith("_seqs") or f.figure == "batch"
    if (seqs and f.old == 0 and f.new) or (f.old is None and f.new is not None):
        return "now fits"
    if (seqs and f.new == 0 and f.old) or (f.new is None and f.old is not None):
        return "no longer fits"
    if f.pct is None:
        return "from 0" if f.old == 0 else "n/a"
    return signed_pct(f.pct)


def _key_part(col: str, v) -> str:
    from kvreg.tables import context_label

    if v is None:
        return f"{col}=NULL"
    if col in ("context_tokens", "max_model_len", "max_num_batched_tokens"):
        return context_label(int(v))
    if col == "tp":
        return f"TP{v}"
    if col == "weights_dtype":
        return f"w:{v}"
    if col == "kv_dtype":
        return f"kv:{v}"
    if col.startswith("batch"):
        return f"batch {v}"
    if col == "at":
        return f"at {v}"
    return str(v)


def scenario_label(keys: dict, kind: str) -> str:
    """The scenario's key values joined by `` · ``, leaving out the entry it is grouped under."""
    skip = ENTITY_COLUMNS.get(kind)
    return " · ".join(_key_part(k, v) for k, v in keys.items() if k != skip)


def _value_text(v) -> str:
    if v is None:
        return "(absent)"
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def _groups(result: DiffResult) -> list[tuple[tuple[str, str], list[FigureChange]]]:
    # Figures arrive sorted by group (largest change first) within each view; keep first-seen group order.
    order: dict[tuple[str, str], list[FigureChange]] = {}
    for f in result.figures:
        order.setdefault((f.kind, f.id), []).append(f)
    return list(order.items())


def _sets_by_entry(result: DiffResult) -> dict[tuple[str, str], list[ScenarioSetChange]]:
    out: dict[tuple[str, str], list[ScenarioSetChange]] = {}
    for s in result.scenario_sets:
        out.setdefault((s.kind, s.id), []).append(s)
    return out


def _summaries(result: DiffResult, kind: str, eid: str):
    return [s for s in result.summaries if (s.kind, s.id) == (kind, eid)]


def signed_pct(pct: float) -> str:
    """``+2.8%``; a change that rounds to 0.0 keeps two significant digits (``-0.031%``), never ``-0.0%``."""
    text = f"{pct:+.1f}%"
    return text if text not in ("+0.0%", "-0.0%") or pct == 0 else f"{pct:+.2g}%"


def range_text(s) -> str:
    """``-12.5% … -3.3%``: one figure's % changes over the entry's up and down scenarios (old and new both
    values; the ones that no longer or now fit are counted by :func:`classes_text`, not ranged); ``no % range``
    when there is none."""
    if s.min_pct is None:
        return "no % range"
    lo, hi = signed_pct(s.min_pct), signed_pct(s.max_pct)
    return lo if lo == hi else f"{lo} … {hi}"


def classes_text(s) -> str:
    """``3 up, 5 down, 2 no longer fit, 0 now fit``: the summary's four classes, which add up to ``s.count``."""
    return (f"{s.up:,} up, {s.down:,} down, {s.no_longer_fit:,} no longer fit, {s.now_fit:,} now fit")


def _edited(result: DiffResult) -> set[tuple[str, str]]:
    return {(e.kind, e.id) for e in result.entries}


def _counts(result: DiffResult) -> str:
    by = {s: sum(1 for e in result.entries if e.status == s) for s in ("added", "removed", "changed")}
    added = sum(s.count for s in result.scenario_sets if s.status == "added")
    removed = sum(s.count for s in result.scenario_sets if s.status == "removed")
    noun = "entry" if by["added"] == 1 else "entries"
    return (f"{by['added']} {noun} added, {by['removed']} removed, {by['changed']} changed · "
            f"{result.figures_moved():,} scenario figures moved · {added:,} scenarios added, {removed:,} removed")


def _option_text(o) -> str:
    if o is None:
        return "no option meets the workload"
    hw, engine, w, kv, tp, devices = o
    return f"{hw} · {engine} · w:{w} · kv:{kv} · TP{tp} · {formats.counted(devices, 'device')}"


def _recommendation_lines(result: DiffResult) -> list[str]:
    if not result.reports_checked:
        return ["Report recommendations: no report names a changed entry."]
    head = f"Report recommendations ({', '.join(result.reports_checked)}): "
    if not result.recommendations:
        return [head + "none flips."]
    return [head + f"{len(result.recommendations)} flip."] + [
        f"  report {r.report}, model {r.model}: {_option_text(r.old)} → {_option_text(r.new)}"
        for r in result.recommendations]


def _footer(result: DiffResult) -> list[str]:
    out = []
    if result.hidden_below_threshold:
        out.append(f"{formats.counted(result.hidden_below_threshold, 'figure change')} below"
                   f" {result.threshold_pct:g}% hidden.")
    left_out = result.left_out
    if left_out:
        from kvreg.diff.focus import LEFT_OUT

        parts = [f"{n:,} {LEFT_OUT[why]}" for why, n in sorted(left_out.items(), key=lambda kv: list(LEFT_OUT).index(kv[0]))]
        # moved figures and scenarios on one side only, of rows kvreg plan refuses (focus.LEFT_OUT)
        out.append(f"Left out of the focus: {sum(left_out.values()):,} changes: " + "; ".join(parts)
                   + " (--all-scenarios compares them).")
    skipped = [v for v in result.views if v.skipped]
    compared = [f"{v.view} ({v.base_rows:,} → {formats.counted(v.head_rows, 'row')})"
                for v in result.views if not v.skipped]
    out.append("Views compared: " + (", ".join(compared) or "none")
               + ("; not present: " + ", ".join(v.view for v in skipped if v.skipped == "view not present")
                  if any(v.skipped == "view not present" for v in skipped) else "")
               + ("; not moved (they read no table that differs): "
                  + ", ".join(v.view for v in skipped if v.skipped == UNMOVED)
                  if any(v.skipped == UNMOVED for v in skipped) else ""))
    for v in skipped:
        if v.skipped not in ("view not present", UNMOVED):
            out.append(f"View {v.view} skipped: {v.skipped}")
    return out


def render_text(result: DiffResult, top: int = 10) -> str:
    """A terminal report; ``top`` figure changes per entry (0 = all)."""
    lines = [f"kvreg diff {result.base_label} → {result.head_label}", _counts(result), ""]
    for e in result.entries:
        lines.append(f"{e.status} {e.kind} {e.id} ({e.file}:{e.line})")
        for f in e.fields:
            lines.append(f"  {f.file}:{f.line}  {f.path}: {_value_text(f.old)} → {_value_text(f.new)}")
    if result.entries:
        lines.append("")
    edited = _edited(result)
    sets = _sets_by_entry(result)
    for (kind, eid), figs in _groups(result):
        why = "" if (kind, eid) in edited else " (not edited; depends on a changed entry)"
        moved = result.figures_moved(kind, eid)
        lines.append(f"{kind} {eid}{why}: {moved:,} figures moved")
        for sm in _summaries(result, kind, eid):
            lines.append(f"  {sm.view}.{sm.figure}: {sm.count:,} scenarios ({classes_text(sm)}), "
                         f"{range_text(sm)}")
        rows = [(scenario_label(f.keys, kind), f"{f.view}.{f.figure}", figure_value(f.figure, f.old),
                 figure_value(f.figure, f.new), pct_text(f)) for f in (figs[:top] if top else figs)]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for r in rows:
            lines.append("  " + "  ".join(c.rjust(w) if i >= 2 else c.ljust(w)
                                          for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if top and moved > top:
            lines.append(f"  … {moved - top:,} more (--top 0 shows all)")
    for (kind, eid), ss in sets.items():
        for s in ss:
            lines.append(f"{kind} {eid}: {s.count:,} {s.view} scenarios {s.status}")
            for row in s.sample:
                figs = ", ".join(f"{c} {figure_value(c, row[c])}" for c in row if c not in ENTITY_COLUMNS.values()
                                 and c in _figure_columns(result, s.view))
                lines.append(f"  {scenario_label({k: v for k, v in row.items() if k in _key_columns(result, s.view)}, kind)}: {figs}")
    if result.figures or result.scenario_sets:
        lines.append("")
    if not result.has_changes:
        lines.append("No registry changes.")
    lines.extend(_recommendation_lines(result))
    lines.extend(_footer(result))
    return "\n".join(lines)


def _key_columns(result: DiffResult, view: str) -> tuple[str, ...]:
    return next((v.keys for v in result.views if v.view == view), ())


def _figure_columns(result: DiffResult, view: str) -> tuple[str, ...]:
    return next((v.figures for v in result.views if v.view == view), ())


def _md(v) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def _md_figure_rows(kind: str, figs: list[FigureChange]) -> list[str]:
    return [f"| {_md(scenario_label(f.keys, kind))} | `{f.view}.{f.figure}` | {figure_value(f.figure, f.old)} | "
            f"{figure_value(f.figure, f.new)} | {pct_text(f)} |" for f in figs]


def render_markdown(result: DiffResult, top: int = 10) -> str:
    """A pull-request comment: summary table, then per entry the ``top`` largest changes, the rest collapsed."""
    top = top or result.figures_moved() or 1
    out = [f"### kvreg diff: `{_md(result.base_label)}` → `{_md(result.head_label)}`", "", _counts(result), ""]
    groups = dict(_groups(result))
    sets = _sets_by_entry(result)
    if result.entries:
        out += ["| entry | status | where | scenario figures moved | largest change |", "|---|---|---|---:|---|"]
        for e in result.entries:
            figs = groups.get((e.kind, e.id), [])
            big = (f"`{figs[0].figure}` {figure_value(figs[0].figure, figs[0].old)} → "
                   f"{figure_value(figs[0].figure, figs[0].new)} ({pct_text(figs[0])})") if figs else ""
            notes = ([big] if figs else []) + [f"{s.count:,} {s.view} scenarios {s.status}"
                                               for s in sets.get((e.kind, e.id), [])]
            out.append(f"| {e.kind} `{e.id}` | {e.status} | `{e.file}:{e.line}` | {result.figures_moved(e.kind, e.id):,} | "
                       f"{'; '.join(notes) or '—'} |")
        out.append("")
        fields = [(e, f) for e in result.entries for f in e.fields]
        if fields:
            out += ["#### Fields changed", "", "| entry | key | old | new | where |", "|---|---|---|---|---|"]
            out += [f"| {e.kind} `{e.id}` | `{f.path}` | {_md(_value_text(f.old))} | {_md(_value_text(f.new))} | "
                    f"`{f.file}:{f.line}` |" for e, f in fields]
            out.append("")
    edited = _edited(result)
    budget = DETAIL_BUDGET
    for (kind, eid), figs in groups.items():
        why = "" if (kind, eid) in edited else " (not edited; depends on a changed entry)"
        moved = result.figures_moved(kind, eid)
        out += [f"#### {kind} `{eid}`{why}: {moved:,} figures moved", "",
                "| figure | scenarios | up | down | no longer fit | now fit | change of up/down |",
                "|---|---:|---:|---:|---:|---:|---|"]
        out += [f"| `{sm.view}.{sm.figure}` | {sm.count:,} | {sm.up:,} | {sm.down:,} | {sm.no_longer_fit:,} | "
                f"{sm.now_fit:,} | {range_text(sm)} |"
                for sm in _summaries(result, kind, eid)]
        out += ["", f"Largest {min(top, moved):,}:", "",
                "| scenario | figure | old | new | change |", "|---|---|---:|---:|---:|"]
        out += _md_figure_rows(kind, figs[:top])
        rest, n_rest = figs[top:], moved - min(top, moved)
        if n_rest:
            rows = []
            for row in _md_figure_rows(kind, rest[:DETAIL_ROWS]):
                if budget - len(row) - 1 < 0:
                    break
                rows.append(row)
                budget -= len(row) + 1
            out += ["", f"<details><summary>{formats.counted(n_rest, 'more change', 'more changes')}</summary>", "",
                    "| scenario | figure | old | new | change |", "|---|---|---:|---:|---:|"]
            out += rows
            if n_rest > len(rows):
                out += ["", f"… {n_rest - len(rows):,} more; run `kvreg diff` locally to see all."]
            out += ["", "</details>"]
        out.append("")
    for (kind, eid), ss in sets.items():
        for s in ss:
            keys, figs = _key_columns(result, s.view), _figure_columns(result, s.view)
            out += [f"#### {kind} `{eid}`: {s.count:,} `{s.view}` scenarios {s.status}", "",
                    "| scenario | " + " | ".join(f"`{c}`" for c in figs) + " |",
                    "|---|" + "---:|" * len(figs)]
            shown = 0
            for row in s.sample:
                line = (f"| {_md(scenario_label({k: row[k] for k in keys}, kind))} | "
                        + " | ".join(figure_value(c, row[c]) for c in figs) + " |")
                if budget - len(line) - 1 < 0:
                    break
                out.append(line)
                budget -= len(line) + 1
                shown += 1
            if s.count > shown:
                out.append(f"\n… {s.count - shown:,} more.")
            out.append("")
    if not result.has_changes:
        out += ["No registry changes.", ""]
    out += [line.replace("  report ", "- report ", 1) for line in _recommendation_lines(result)] + [""]
    out += _footer(result)
    return "\n".join(out).rstrip() + "\n"


def render_json(result: DiffResult) -> str:
    """The whole result as JSON (figures in base units; ``pct`` null when old is 0).

    ``figure_rows`` appears only for a bounded result (``figures`` then holds at most that many per entry
    and view); the CLI's JSON is never bounded.
    """
    data = dataclasses.asdict(result)
    if data["figure_rows"] is None:
        del data["figure_rows"]
    return json.dumps(data | {"left_out": result.left_out, "has_changes": result.has_changes}, indent=2, default=str)


def rows_needed(fmt: str, top: int) -> int | None:
    """Figure changes per entry and view that ``render(result, fmt, top)`` can print (None: all of them).

    Text prints ``top`` per entry, Markdown ``top`` plus at most :data:`DETAIL_ROWS` collapsed; JSON and
    ``top`` 0 print every change.  An entry's rows are its views' rows in view order, so its first N
    rows are always among the first N of one view or the next.
    """
    if fmt == "json" or not top:
        return None
    return top + (DETAIL_ROWS if fmt == "markdown" else 0)


def render(result: DiffResult, fmt: str = "text", top: int = 10) -> str:
    """Dispatch on ``fmt``: ``text``, ``markdown`` or ``json``."""
    if fmt == "json":
        return render_json(result)
    if fmt == "markdown":
        return render_markdown(result, top)
    return render_text(result, top)
