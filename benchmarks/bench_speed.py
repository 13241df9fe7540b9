"""Speed commands benchmark: wall time of `kvreg calibrate --speed` and `kvreg plan` on the shipped registry.

Run by hand from the project root:

    python benchmarks/bench_speed.py [--runs 5]

Builds the database once (`kvreg build` into a temporary file), then runs each command in a fresh
interpreter ``--runs`` times against that file (so no rebuild is timed) and prints the median and the
worst wall time and the median CPU time (user + system of the child, DuckDB's threads included: the fairer
figure on a shared machine), plus the in-process query time of the views behind them, and where one command's
time goes (``--split``: imports, the --project check, opening the database, SQL, rendering, and for a plan each
statement over 5 ms: the ranking(s), the levers, the † comparison; CPU seconds).  The children inherit the
environment: with ``PYTHONDONTWRITEBYTECODE`` set (as on the shared build machine) every run compiles kvreg's
modules again (~0.02–0.05 s CPU more than an installed kvreg with its bytecode).
Target (issue 13): under 1 s each.  Results go in benchmarks/README.md ("Speed commands").
"""

from __future__ import annotations

import argparse
import os
import resource
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
    "plan (llama-3.1-8b, vllm-0.33, h100 + h200 fp8)": ["plan", "--model", "llama-3.1-8b", "--users", "200",
                                                        "--context", "32Ki", "--tpot-ms", "50", "--engine", "vllm-0.33",
                                                        "--hardware", "h100-sxm-80gb,h200", "--weights-dtype", "fp8",
                                                        "--kv-dtype", "fp8"],
    "plan (llama-3.1-70b, vllm-0.17-0.19, mi355x + mi300x fp8, a † call)": [
        "plan", "--model", "llama-3.1-70b", "--users", "200", "--context", "32K", "--tpot-ms", "50", "--engine",
        "vllm-0.17-0.19", "--hardware", "mi355x", "--hardware", "mi300x", "--weights-dtype", "fp8"],
}


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# One command in-process, CPU seconds per step (the steps `kvreg calibrate --speed` / `kvreg plan` take).
SPLIT = """
import resource, sys
from pathlib import Path
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
marks = [("", cpu())]
import kvreg.cli
marks.append(("import kvreg.cli", cpu()))
from kvreg.folders import is_project
root, db, argv = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
is_project(root)
marks.append(("--project check", cpu()))
from kvreg.build import connect
con = connect(root, db)
con.execute("SET enable_progress_bar = false")
marks.append(("staleness check, import duckdb, open", cpu()))
statements = []


class Timed:
    # the connection, with each statement's CPU seconds noted (the plan's rankings, levers, the dagger comparison)
    def __init__(self, c):
        self.c = c

    def execute(self, sql, *args):
        t = cpu()
        out = self.c.execute(sql, *args)
        if cpu() - t > 0.005:
            words = sql.replace("CREATE OR REPLACE TEMP TABLE ", "").split()
            statements.append(f"{words[0] if words[1] == 'AS' else ' '.join(words[:4])} {cpu() - t:.3f}")
        return out

    def __getattr__(self, name):
        return getattr(self.c, name)
if argv[0] == "calibrate":
    from kvreg.speed_calibrate import render_speed, speed_report
    rep = speed_report(con)
    marks.append(("SQL", cpu()))
    render_speed(con, "json" if "json" in argv else "table")   # queries again: rendering = this minus SQL
    marks.append(("SQL + render again", cpu()))
else:
    from kvreg.plan import plan, render_plan
    from kvreg.units import parse_context_tokens
    a = dict(zip(argv[1::2], argv[2::2]))
    hw = [h for k, v in zip(argv[1::2], argv[2::2]) if k == "--hardware" for h in v.split(",")]
    r = plan(Timed(con), a["--model"], users=int(a["--users"]), context_tokens=parse_context_tokens(a["--context"]),
             tpot_s=float(a["--tpot-ms"]) / 1e3, hardware=hw or None,
             weights_dtypes=[a["--weights-dtype"]] if "--weights-dtype" in a else None,
             kv_dtypes=[a["--kv-dtype"]] if "--kv-dtype" in a else None, engine=a.get("--engine", "first-principles"))
    marks.append(("SQL (plan)", cpu()))
    render_plan(r)
    marks.append(("render text", cpu()))
print("; ".join(f"{n} {b - a:.3f} s" for (_, a), (n, b) in zip(marks, marks[1:])) + f"; total {marks[-1][1]:.3f} s CPU")
if statements:
    print("statements over 5 ms (CPU s): " + "; ".join(statements))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--split", action="store_true", help="also split each command's CPU time in-process")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    db = Path(tempfile.mkdtemp(prefix="kvreg-bench-")) / "kvreg.duckdb"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kvreg", "build", "--project", str(ROOT), "--db", str(db)],
                   check=True, env=env, capture_output=True)
    print(f"build {time.perf_counter() - t:.2f} s")
    for name, argv in COMMANDS.items():
        times, cpus = [], []
        for _ in range(args.runs):
            t, c = time.perf_counter(), _child_cpu()
            subprocess.run([sys.executable, "-m", "kvreg", *argv, "--project", str(ROOT), "--db", str(db)],
                           check=True, env=env, capture_output=True)
            times.append(time.perf_counter() - t)
            cpus.append(_child_cpu() - c)
        print(f"{name}: median {statistics.median(times):.3f} s, worst {max(times):.3f} s, "
              f"median CPU {statistics.median(cpus):.3f} s ({args.runs} runs)")
        if args.split:
            out = subprocess.run([sys.executable, "-c", SPLIT, str(ROOT), str(db), *argv], check=True, env=env,
                                 capture_output=True, text=True).stdout
            print("  " + out.strip().replace("\n", "\n  "))

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
