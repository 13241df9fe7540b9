"""Benchmark: build the database and scan the full capacity grid, on the shipped registry and at scale.

Run by hand from the project root (results go in benchmarks/README.md):

    python benchmarks/bench_capacity.py                  # both cases, each in its own process
    python benchmarks/bench_capacity.py --case shipped   # one case, in this process

Cases:
    shipped    the registry in this checkout
    synthetic  a generated registry of 40 models (dense, sliding-window, hybrid recurrent and MLA
               geometries) × 25 hardware entries, written to a temporary directory with
               tests/registry_factory.py

For each case it reports the build time (validation + tables + views, written atomically),
the rows of `capacity`, the time of `SELECT count(*), sum(max_seqs) FROM capacity` (median of
5 runs on a read-only connection, first run reported separately), the time of the filtered query
`kvreg fit` runs (one scenario, three contexts; on the view and, when the build has it, through the
`capacity_at` table macro at off-axis contexts), the time to fetch every column of every row into a
pandas frame (as an export would; skipped above FETCH_ALL_MAX_ROWS) and the process's peak RSS.
Each case runs in a fresh interpreter so the peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUERY = "SELECT count(*), sum(max_seqs) FROM capacity"
# What `kvreg fit` runs: one scenario at three contexts, filtered on the view (filter pushdown) ...
FIT_QUERY = ("SELECT * FROM capacity WHERE model_id = ? AND hardware_id = ? AND engine_id = 'first-principles'"
             " AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp = 4"
             " AND list_contains([8192, 32768, 131072], context_tokens) ORDER BY context_tokens")
# ... and the same at off-axis contexts through the table macro (when the build has it).
FIT_AT_QUERY = ("SELECT * FROM capacity_at([8000, 20000, 32000]) WHERE model_id = ? AND hardware_id = ?"
                " AND engine_id = 'first-principles' AND weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp = 4"
                " ORDER BY context_tokens")
# Fetching every row into pandas takes ~0.5 KiB per row: skipped above this many rows (the
# shipped registry's ~21.6 million rows would need >10 GiB).
FETCH_ALL_MAX_ROWS = 2_000_000
FIT_IDS = {"shipped": ("llama-3.1-70b", "h100-sxm-80gb"), "synthetic": ("synth-05", "hw-03")}


def _median_s(con, query: str, params: list) -> float:
    """Median wall time of 5 runs after one warm-up (seconds)."""
    con.execute(query, params).fetchall()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        con.execute(query, params).fetchall()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 4)


def synthetic_project(root: Path, n_models: int = 40, n_hardware: int = 25) -> Path:
    """Write a registry of ``n_models`` × ``n_hardware`` varied entries under ``root``."""
    from tests.registry_factory import engine_entry, hardware_entry, write_project

    models = {}
    for i in range(n_models):
        layers = 24 + 8 * (i % 10)                      # 24 … 96 layers
        heads, dim = (8, 128) if i % 3 else (4, 256)
        shape = dict(kv_heads=heads, head_dim=dim)
        kind = i % 4
        if kind == 0:                                    # dense, all full attention
            groups = [dict(kind="full", count=layers, **shape)]
        elif kind == 1:                                  # sliding window 5:1 with full layers
            full = layers // 6
            groups = [dict(kind="sliding", count=layers - full, window=1024 * (1 + i % 4), **shape),
                      dict(kind="full", count=full, **shape)]
        elif kind == 2:                                  # Gated DeltaNet hybrid 3:1
            full = layers // 4
            groups = [dict(kind="recurrent", count=layers - full, variant="gated_deltanet",
                           state=[dict(role="ssm", shape=[32, 128, 128], dtype="fp32"),
                                  dict(role="conv", shape=[3, 8192], dtype="bf16")]),
                      dict(kind="full", count=full, **shape)]
        else:                                            # MLA
            groups = [dict(kind="mla", count=layers, kv_lora_rank=512, qk_rope_head_dim=64, kv_heads=16,
                           head_dim=192, v_head_dim=128)]
        models[f"synth-{i:02d}"] = {"layers": layers, "groups": groups, "params_total": 1e9 * (1 + i * 3),
                                    "native_context": 2**(15 + i % 6)}
    hardware = {f"hw-{j:02d}": hardware_entry(f"hw-{j:02d}", memory_marketed=f"{24 + 8 * j} GB",
                                              memory_usable=f"{(24 + 8 * j) * 0.93:.1f} GiB")
                for j in range(n_hardware)}
    return write_project(root, models=models, hardware=hardware, engines={"first-principles": engine_entry()})


def run_case(case: str) -> dict:
    """Build and query one case in this process; return its figures."""
    import duckdb

    from kvreg.build import build

    with tempfile.TemporaryDirectory(prefix="kvreg-bench-") as tmp:
        root = ROOT if case == "shipped" else synthetic_project(Path(tmp) / "project")
        db = Path(tmp) / "bench.duckdb"
        t0 = time.perf_counter()
        build(root, db)
        build_s = time.perf_counter() - t0
        con = duckdb.connect(str(db), read_only=True)
        times, result = [], None
        for _ in range(6):
            t0 = time.perf_counter()
            result = con.execute(QUERY).fetchone()
            times.append(time.perf_counter() - t0)
        fetch_s = frame_mib = None
        if result[0] <= FETCH_ALL_MAX_ROWS:
            t0 = time.perf_counter()
            frame = con.execute("SELECT * FROM capacity").df()   # every column of every row, as an export would
            fetch_s = round(time.perf_counter() - t0, 3)
            frame_mib = round(frame.memory_usage(deep=True).sum() / 2**20, 1)
            del frame
        fit_s = _median_s(con, FIT_QUERY, list(FIT_IDS[case]))
        has_at = con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'capacity_at'").fetchone()[0]
        fit_at_s = _median_s(con, FIT_AT_QUERY, list(FIT_IDS[case])) if has_at else None
        counts = con.execute("SELECT (SELECT count(*) FROM models), (SELECT count(*) FROM hardware)").fetchone()
        con.close()
    return {"case": case, "models": counts[0], "hardware": counts[1], "capacity_rows": result[0],
            "sum_max_seqs": result[1], "build_s": round(build_s, 3), "query_first_s": round(times[0], 4),
            "query_median_s": round(statistics.median(times[1:]), 4), "fetch_all_s": fetch_s,
            "fit_median_s": fit_s, "fit_at_median_s": fit_at_s,
            "fetch_all_mib": frame_mib,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "duckdb": duckdb.__version__}


def help_time() -> float:
    """Median wall time of ``python -m kvreg --help`` over 5 runs (seconds)."""
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kvreg", "--help"], cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=["shipped", "synthetic"])
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case)))
        return
    rows = []
    for case in ("shipped", "synthetic"):
        out = subprocess.run([sys.executable, __file__, "--case", case], check=True, capture_output=True, text=True)
        rows.append(json.loads(out.stdout.splitlines()[-1]))
    cols = ["case", "models", "hardware", "capacity_rows", "build_s", "query_first_s", "query_median_s",
            "fetch_all_s", "fit_median_s", "fit_at_median_s", "peak_rss_mib"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f"{r[c]:,}" if isinstance(r[c], int) else str(r[c]) for c in cols) + " |")
    print(f"\nsum(max_seqs): " + ", ".join(f"{r['case']} {r['sum_max_seqs']:,}" for r in rows))
    print(f"duckdb {rows[0]['duckdb']}; python -m kvreg --help: {help_time()} s (median of 5)")


if __name__ == "__main__":
    main()
