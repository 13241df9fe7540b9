"""Render a DuckDB cursor as a text table, CSV or JSON (for ``kvreg sql``)."""

from __future__ import annotations

import csv
import io
import json


def render(cur, fmt: str = "table", max_width: int = 40) -> str:
    """Format every row of ``cur``.

    Args:
        cur: an executed DuckDB cursor.
        fmt: ``table`` (aligned text), ``csv`` or ``json`` (a list of objects).
    """
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    if fmt == "json":
        return json.dumps([dict(zip(cols, r)) for r in rows], indent=2, default=str)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    cells = [cols] + [["NULL" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))[:max_width]
                       for v in r] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cells[0], widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) if r[i] is not None and isinstance(r[i], (int, float)) else c.ljust(w)
                        for i, (c, w) in enumerate(zip(cells_row, widths)))
              for r, cells_row in zip(rows, cells[1:])]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)
