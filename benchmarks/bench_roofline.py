"""Roofline grid benchmark: row count and time of the roofline, costs and plans views.

Run by hand from the project root:

    python benchmarks/bench_roofline.py [--hardware-copies N]

``--hardware-copies N`` builds a temporary project holding N copies of every shipped
hardware entry (ids suffixed ``-copyK``) to see how the grid scales as hardware is added.
Results go in benchmarks/README.md ("Roofline grid").
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's kvreg, not an installed one


def _project(copies: int) -> Path:
    if copies <= 1:
        return ROOT
    tmp = Path(tempfile.mkdtemp(prefix="kvreg-bench-"))
    shutil.copytree(ROOT / "registry", tmp / "registry")
    (tmp / "hardware").mkdir()
    for f in sorted((ROOT / "hardware").glob("*.yaml")):
        for k in range(copies):
            hid = f.stem if k == 0 else f"{f.stem}-copy{k}"
            (tmp / "hardware" / f"{hid}.yaml").write_text(f.read_text().replace(f"id: {f.stem}\n", f"id: {hid}\n", 1))
    return tmp


def _timed(con, sql: str, params=()):
    t = time.perf_counter()
    out = con.execute(sql, list(params)).fetchall()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hardware-copies", type=int, default=1)
    args = ap.parse_args()

    import duckdb

    from kvreg.build import memory_connection

    t = time.perf_counter()
    con = memory_connection(_project(args.hardware_copies))
    build_s = time.perf_counter() - t
    n_hw = con.execute("SELECT count(*) FROM hardware").fetchone()[0]
    print(f"duckdb {duckdb.__version__}; {n_hw} hardware entries; build (tables + views) {build_s:.2f} s")
    for view in ("roofline", "costs"):
        [(n,)], s_count = _timed(con, f"SELECT count(*) FROM {view}")
        _, s_full = _timed(con, f"CREATE OR REPLACE TEMP TABLE _m AS SELECT * FROM {view}")
        print(f"{view}: {n:,} rows; count(*) {s_count:.2f} s; materialise every column {s_full:.2f} s")
    [(n,)], s = _timed(con, "SELECT count(*) FROM plans(200, 32000, 0.05, NULL)")
    print(f"plans(200 users, 32,000 tokens, 50 ms): {n:,} rows in {s:.2f} s")
    _, s = _timed(con, "SELECT * FROM plans(200, 32000, 0.05, NULL) WHERE model_id = 'llama-3.1-70b'"
                       " AND weights_dtype = 'bf16' AND kv_dtype = 'bf16'")
    print(f"plans for one model, one precision pair (what `kvreg plan` runs): {s:.2f} s")


if __name__ == "__main__":
    main()
