"""Time the engine-accounting views over the shipped registry (run by hand: python benchmarks/engine_capacity.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's kvreg, not an installed one

from kvreg.build import memory_connection  # noqa: E402

QUERIES = {
    "build in memory (tables + all views)": None,
    "count(*) engine_capacity (full grid)": "SELECT count(*) FROM engine_capacity",
    "one fit: model × hardware × engine, default batch": (
        "SELECT * FROM engine_capacity WHERE model_id = 'gemma-4-31b' AND hardware_id = 'b300'"
        " AND engine_id = 'vllm-0.22-0.26' AND weights_dtype = 'fp8' AND kv_dtype = 'fp8' AND tp = 1 AND default_batched"),
    "engine_capacity_for_memory (all engines × models)": "SELECT * FROM engine_capacity_for_memory(50 * 2^30, 40960, 8192)",
    "calibration (all observations)": "SELECT * FROM calibration",
}

if __name__ == "__main__":
    t = time.perf_counter()
    con = memory_connection(ROOT)
    print(f"{'build in memory (tables + all views)':55s} {time.perf_counter() - t:6.2f} s")
    for name, sql in QUERIES.items():
        if sql is None:
            continue
        t = time.perf_counter()
        rows = con.execute(sql).fetchall()
        print(f"{name:55s} {time.perf_counter() - t:6.2f} s  ({len(rows):,} rows)")
