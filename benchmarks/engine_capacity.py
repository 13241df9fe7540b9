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
    # kvreg fit --engine: the main table (capacity_at, engine-sized) and the engine section (engine_capacity_at)
    "fit --engine: capacity_at, 3 contexts": (
        "SELECT * FROM capacity_at([8192, 32000, 131072]) WHERE model_id = 'gemma-4-31b' AND hardware_id = 'b300'"
        " AND engine_id = 'vllm-0.22-0.26' AND weights_dtype = 'fp8' AND kv_dtype = 'fp8' AND tp = 1"),
    "fit --engine: engine_capacity_at, 3 contexts": (
        "SELECT * FROM engine_capacity_at([8192, 32000, 131072]) WHERE model_id = 'gemma-4-31b'"
        " AND hardware_id = 'b300' AND engine_id = 'vllm-0.22-0.26' AND weights_dtype = 'fp8' AND kv_dtype = 'fp8'"
        " AND tp = 1"),
    "fit --engine --block-size 32: engine_capacity_at, 3 contexts": (
        "SELECT * FROM engine_capacity_at([8192, 32000, 131072], block_size := 32) WHERE model_id = 'gemma-4-31b'"
        " AND hardware_id = 'b300' AND engine_id = 'vllm-0.22-0.26' AND weights_dtype = 'fp8' AND kv_dtype = 'fp8'"
        " AND tp = 1"),
    "plan --engine: ranked_plans, one model": (
        "SELECT * FROM ranked_plans(200, 32768, 0.05, models := ['llama-3.1-8b'], engines := ['vllm-0.33'],"
        " weights_dtypes := ['fp8'], kv_dtypes := ['fp8'])"),
    "count(*), sum(max_seqs) capacity (full grid, engine-sized)": "SELECT count(*), sum(max_seqs) FROM capacity",
}

if __name__ == "__main__":
    t = time.perf_counter()
    con = memory_connection(ROOT)
    print(f"{'build in memory (tables + all views)':55s} {time.perf_counter() - t:6.2f} s")
    for name, sql in QUERIES.items():
        if sql is None:
            continue
        t = time.perf_counter()
        try:
            rows = con.execute(sql).fetchall()
        except Exception as exc:  # a macro this checkout does not have (timing an older commit)
            print(f"{name:55s}    n/a  ({type(exc).__name__})")
            continue
        print(f"{name:55s} {time.perf_counter() - t:6.2f} s  ({len(rows):,} rows)")
