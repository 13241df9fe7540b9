"""By hand: the shipped registry's base tables built by the code at a git revision and by the working tree.

``python tools/compare_base_tables.py [REV]`` (default ``main``) archives REV into a temporary folder,
builds the working tree's registry with that code and with the working tree's code (each in its own
process, database in the temporary folder), and compares every base table: ``DESCRIBE`` (column names,
order, types, nullability) and ``md5(string_agg(row))`` in table order and sorted by every column, and every
view's ``DESCRIBE``
(the columns the views pass on).  Columns are compared by name: a table whose columns only moved
(a converted table taking its markers' declaration order) is reported as such, with both orders,
and does not fail.  Exit status 1 when any differs in rows, names or types.
Used to show a refactor of kvreg/tables.py leaves the database identical (issue 14 item 5).

``--rev-registry``: REV's code builds REV's own registry (not the working tree's), so a change of the
registry files and the code together is compared: the registry stripped of geometry its shipped
configs give (tools/strip_config_geometry.py, issue 14 item 1) against the full one.
``--ignore-location``: the rows are compared without their ``file``, ``line`` and ``col`` columns (a key
that moved to another line or file, nothing else).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_DUMP = r"""
import json, sys
import duckdb
from kvreg.build import build
db = build(sys.argv[1], sys.argv[2])
con = duckdb.connect(str(db), read_only=True)
out = {}
for (t,) in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
                        "AND table_name <> 'build_info' ORDER BY table_name").fetchall():
    desc = [list(map(str, r)) for r in con.execute(f'DESCRIBE "{t}"').fetchall()]
    cols = ", ".join(f'"{c}"' for c in sorted(r[0] for r in desc if r[0] not in sys.argv[3:]))
    # md5 of the rows in table order (rowid: the order the frame was loaded in) and sorted by every column
    n, digest, by_value = con.execute(
        f'SELECT count(*), md5(coalesce(string_agg(s, chr(10) ORDER BY r), \'\')), '
        f'md5(coalesce(string_agg(s, chr(10) ORDER BY s), \'\')) '
        f'FROM (SELECT rowid AS r, CAST(ROW({cols}) AS VARCHAR) AS s FROM "{t}")').fetchone()
    out[t] = {"describe": sorted(desc), "order": [r[0] for r in desc], "rows": n, "md5": digest,
              "md5_sorted": by_value}
for (t,) in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'VIEW' "
                        "ORDER BY table_name").fetchall():
    desc = [list(map(str, r)) for r in con.execute(f'DESCRIBE "{t}"').fetchall()]
    out["view " + t] = {"describe": sorted(desc), "order": [r[0] for r in desc], "rows": None, "md5": None}
print(json.dumps(out))
"""


LOCATION = ("file", "line", "col")
"""Where a row's YAML is (``--ignore-location`` leaves these columns out of the row digests)."""


def dump(code: Path, project: Path, db: Path, ignore: tuple[str, ...] = ()) -> dict:
    """Build ``project`` into ``db`` with the kvreg package under ``code``; the per-table digests
    (of every column but those named in ``ignore``)."""
    import json

    env = dict(os.environ, PYTHONPATH=str(code))
    res = subprocess.run([sys.executable, "-c", _DUMP, str(project), str(db), *ignore], env=env, cwd=code,
                         capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"build with {code} failed:\n{res.stderr}")
    return json.loads(res.stdout.splitlines()[-1])


def main(rev: str = "main", *flags: str) -> int:
    with tempfile.TemporaryDirectory(prefix="kvreg-compare-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
        tarfile.open(fileobj=io.BytesIO(tar)).extractall(base)
        ignore = LOCATION if "--ignore-location" in flags else ()
        old = dump(base, base if "--rev-registry" in flags else ROOT, Path(tmp) / "old.duckdb", ignore)
        new = dump(ROOT, ROOT, Path(tmp) / "new.duckdb", ignore)
    from kvreg.build import PERSISTED_VIEWS

    bad = moved = shuffled = 0
    for t in sorted(set(old) | set(new)):
        a, b = old.get(t), new.get(t)
        # A persisted view's table holds its rows in the order DuckDB's parallel plan produced them: no frame order
        # to keep, and two builds of the same code differ in it.  Its rows are compared as a set (sorted digest).
        ignore = {"order"} | ({"md5"} if t in PERSISTED_VIEWS else set())
        key = lambda d: d and {k: v for k, v in d.items() if k not in ignore}  # noqa: E731
        same = key(a) == key(b)
        reordered = same and a["order"] != b["order"]
        row_order = same and t in PERSISTED_VIEWS and a["md5"] != b["md5"]
        bad += not same
        moved += reordered
        shuffled += row_order
        rows = "" if (a or b)["rows"] is None else f"{(a or b)['rows']} rows, "
        status = ("DIFFERS" if not same else "same, column order differs" if reordered
                  else "same rows, another row order (a persisted view)" if row_order else "same")
        if not same and a and b and a.get("md5_sorted") == b.get("md5_sorted") and a["describe"] == b["describe"]:
            status = "DIFFERS in row order only"
        print(f"{status}  {t}  ({rows}{len((a or b)['describe'])} columns)")
        if not same and a and b and a["describe"] != b["describe"]:
            print(f"    columns {rev}: {a['describe']}\n    columns tree: {b['describe']}")
        if reordered:
            print(f"    order {rev}: {a['order']}\n    order tree: {b['order']}")
    views = sum(t.startswith("view ") for t in set(old) | set(new))
    print(f"{len(set(old) | set(new)) - views} base tables and {views} views, {bad} differ in rows or types, "
          f"{moved} only in column order, {shuffled} persisted views only in row order")
    return 1 if bad else 0


if __name__ == "__main__":
    revs = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(main(revs[0] if revs else "main", *[a for a in sys.argv[1:] if a.startswith("--")]))
