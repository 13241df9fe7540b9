"""Speed commands benchmark: wall time of `kvreg calibrate --speed` and `kvreg plan` on the shipped registry.

Run by hand from the project root:

    python benchmarks/bench_speed.py [--runs 5]

Builds the database once (`kvreg build` into a temporary file), then runs each command in a fresh
interpreter ``--runs`` times against that file (so no rebuild is timed) and prints the median and the
worst wall time, plus the in-process query time of the views behind them.  Target (issue 13): under
1 s each.  Results go in benchmarks/README.md ("Speed commands").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "calibrate --speed": ["calibrate", "--speed"],
    "calibrate --speed --format json": ["calibrate", "--speed", "--format", "json"],
    "plan (qwen3-30b-a3b, 64 users, 8Ki, l40s fp8)": ["plan", "--model", "qwen3-30b-a3b", "--users", "64", "--context",
                                                      "8Ki", "--tpot-ms", "50", "--hardware", "l40s",
                                                      "--weights-dtype", "fp8"],
    "plan (llama-3.1-70b, 200 users, 32K, all hardware)": ["plan", "--model", "llama-3.1-70b", "--users", "200",
                                                           "--context", "32K", "--tpot-ms", "50"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    db = Path(tempfile.mkdtemp(prefix="kvreg-bench-")) / "kvreg.duckdb"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kvreg", "build", "--project", str(ROOT), "--db", str(db)],
                   check=True, env=env, capture_output=True)
    print(f"build {time.perf_counter() - t:.2f} s")
    for name, argv in COMMANDS.items():
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kvreg", *argv, "--project", str(ROOT), "--db", str(db)],
                           check=True, env=env, capture_output=True)
            times.append(time.perf_counter() - t)
        print(f"{name}: median {statistics.median(times):.3f} s, worst {max(times):.3f} s ({args.runs} runs)")

    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    for name, sql in {"speed_calibration": "SELECT count(*), median(abs_error) FROM speed_calibration",
                      "speed_efficiency": "SELECT count(*) FROM speed_efficiency",
                      "plans (l40s case)": "SELECT count(*) FROM plans(64, 8192, 0.05) WHERE model_id = 'qwen3-30b-a3b'"}.items():
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            con.execute(sql).fetchall()
            times.append(time.perf_counter() - t)
        print(f"query {name}: median {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main()
