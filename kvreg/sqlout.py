"""Render a DuckDB cursor as a text table, CSV or JSON (for ``kvreg sql``)."""

from __future__ import annotations

import csv
import io
import json
import math


def query_error_text(exc: Exception) -> str:
    """DuckDB's message for a user's query, kept whole but for blank lines: its first line says what is wrong,
    the next ones the fix it suggests (``Candidate bindings: "hardware_id"``, ``Did you mean "hardware"?``) and
    where (``LINE 1: …`` with a caret under the token), which a first line alone would drop."""
    return "\n".join(line.rstrip() for line in str(exc).splitlines() if line.strip())


def _json_value(v):
    """NaN and ±inf are not JSON: they become null (a ratio of 0/0, an empty pool)."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _plain(v):
    """``v`` with every non-finite float (at any depth) replaced by None, for JSON."""
    if isinstance(v, float):
        return _json_value(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def dumps(obj) -> str:
    """``obj`` as the JSON every ``--format json`` prints: NaN/±inf as null, dates and paths as text."""
    return json.dumps(_plain(obj), indent=2, default=str, allow_nan=False)


def _cell(v) -> str:
    """Table cell text: whole floats (byte counts) in full with separators, others to 6 significant digits."""
    if v is None:
        return "NULL"
    if isinstance(v, float):
        if math.isfinite(v) and v == int(v) and abs(v) < 1e18:
            return f"{int(v):,}"
        return f"{v:.6g}"
    return str(v)


def render(cur, fmt: str = "table", max_width: int = 40) -> str:
    """Format every row of ``cur``.

    Args:
        cur: an executed DuckDB cursor.
        fmt: ``table`` (aligned text), ``csv`` or ``json`` (a list of objects).
        max_width: ``table`` only: characters a cell shows; a longer one is cut, ends in "…", and a footer
            line after the row count says so (csv and json are never cut).
    """
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    if fmt == "json":
        return json.dumps([{c: _json_value(v) for c, v in zip(cols, r)} for r in rows], indent=2, default=str,
                          allow_nan=False)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    full = [[_cell(v) for v in r] for r in rows]
    cut = any(len(c) > max_width for r in full for c in r)
    # a cut cell ends in "…" and a footer says so: a value that merely looks whole would mislead
    cells = [cols] + [[c if len(c) <= max_width else c[:max_width - 1] + "…" for c in r] for r in full]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cells[0], widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) if r[i] is not None and isinstance(r[i], (int, float)) else c.ljust(w)
                        for i, (c, w) in enumerate(zip(cells_row, widths)))
              for r, cells_row in zip(rows, cells[1:])]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    if cut:
        lines.append(f"(text cells longer than {max_width} characters are cut, ending in …;"
                     " --format csv or json prints whole values)")
    return "\n".join(lines)
