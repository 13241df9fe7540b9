"""Time `kvreg report`: HTML and PDF for reports/example.yaml, reports/2026-q4.yaml and a large report.

The large report lists every shipped model and hardware entry (68 × 25 on 2026-11-29), weights in
bf16 and fp8, KV cache in fp8, TP 1 and 8, three contexts (8Ki, 32Ki, 128Ki), and first principles
beside one vLLM release (so engine_capacity, roofline and plans are all exercised): ~41,000
capacity rows.  (The earlier definition — 2 × 2 precisions, TP 1/2/4/8, seven contexts — grew to
~400,000 rows with the registry and is no longer a report anyone would read.)  Run by hand from the project root:

    python benchmarks/bench_report.py [--repeat N]
    python benchmarks/bench_report.py --cli 2026-q4 [--repeat N] [--format html] [--cold]

and record the results in benchmarks/README.md ("Report rendering").  ``--cli`` runs the README's command
(``python -m kvreg report reports/ID.yaml``) in a fresh interpreter per run on a copy of the project, the
database reused after a first run that builds it, and prints each run's wall time and CPU time (user + sys of
the command and of the chart worker it starts and reaps): the figure the speed targets are stated in.  ``--cold``
deletes what a report keeps between runs (``.kvreg/charts``, ``.kvreg/report-tables``) before each reused-database
run, so every chart is drawn and every query runs: the first report after a build.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def large_report(project: Path) -> str:
    """Write reports/large.yaml listing every model (but draft heads) and hardware entry of ``project``; return its id."""
    # a speculative-decoding draft head (draft_for) is refused in a report (report-draft-head): its target is listed
    models = sorted(p.stem for p in (project / "registry" / "models").glob("*.yaml")
                    if "draft_for" not in (yaml.safe_load(p.read_text()) or {}))
    hardware = sorted(p.stem for p in (project / "hardware").glob("*.yaml"))
    doc = {"id": "large", "title": "Every model on every device", "period": "benchmark",
           "models": models, "hardware": hardware, "engines": ["first-principles", "vllm-0.22-0.26"],
           "weights_dtypes": ["bf16", "fp8"], "kv_dtypes": ["fp8"],
           "tp": [1, 8], "contexts": ["8Ki", "32Ki", "128Ki"],
           "workload": {"users": 200, "context": "32Ki"}}
    (project / "reports" / "large.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return "large"


def time_report(project: Path, report_id: str, repeat: int, pdf: bool = True) -> dict[str, float]:
    """Best-of-``repeat`` seconds for the HTML (validate, build, query, charts, render) and for HTML + PDF.

    Runs after the first read the charts and heaviest tables the first kept (``.kvreg/charts``,
    ``.kvreg/report-tables``): the first run is the cold figure, the best of the rest the kept one."""
    from kvreg.report.make import render

    best = {"html_s": float("inf"), "html_pdf_s": float("nan")}
    sizes = {}
    for _ in range(repeat):
        t = time.perf_counter()
        out = render(project, report_id, ["html"])
        best["html_s"] = min(best["html_s"], time.perf_counter() - t)
        sizes = {k: len(v) for k, v in out.items()}
        if pdf:
            t = time.perf_counter()
            out = render(project, report_id, ["html", "pdf"])
            best["html_pdf_s"] = min(best["html_pdf_s"] if best["html_pdf_s"] == best["html_pdf_s"] else float("inf"),
                                     time.perf_counter() - t)
            sizes = {k: len(v) for k, v in out.items()}
            (project / f"{report_id}.pdf").write_bytes(out["pdf"])
    return best | {f"{k}_bytes": v for k, v in sizes.items()}


def time_cli(project: Path, report_id: str, formats: str, repeat: int, cold: bool = False) -> None:
    """Print wall and CPU seconds of ``python -m kvreg report`` for ``report_id``: the first run (builds the project's
    database) and ``repeat`` runs reusing it.  CPU is the children's rusage delta around each run (the command and
    the chart worker it waits for at exit).  ``cold``: the charts and tables kept by earlier runs deleted first."""
    import os
    import resource
    import subprocess

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    cmd = [sys.executable, "-m", "kvreg", "report", f"reports/{report_id}.yaml", "--format", formats,
           "--out", str(project / "out")]
    for run in range(repeat + 1):
        if cold:
            for kept in ("charts", "report-tables"):
                shutil.rmtree(project / ".kvreg" / kept, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, cwd=project, env=env, check=True, capture_output=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        label = "first (build)" if run == 0 else "reused, cold" if cold else "reused db"
        print(f"{report_id} {formats} {label:13s} wall {wall:6.2f} s   "
              f"cpu {cpu:6.2f} s   load {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-large-pdf", action="store_true", help="time only the HTML of the large report")
    ap.add_argument("--cli", metavar="REPORT_ID", help="time `python -m kvreg report` for this report (wall and CPU)")
    ap.add_argument("--format", default="html", help="with --cli: html, pdf or html,pdf")
    ap.add_argument("--cold", action="store_true", help="with --cli: delete the kept charts and tables before each run")
    args = ap.parse_args()
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            for folder in ("registry", "hardware", "reports"):
                shutil.copytree(ROOT / folder, Path(tmp) / folder)
            time_cli(Path(tmp), args.cli, args.format, args.repeat, args.cold)
        return
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        for folder in ("registry", "hardware", "reports"):
            shutil.copytree(ROOT / folder, project / folder)
        large = large_report(project)
        for rid in ("example", "2026-q4", large):
            r = time_report(project, rid, args.repeat, pdf=not (args.no_large_pdf and rid == large))
            pages = ""
            if (project / f"{rid}.pdf").exists() and shutil.which("pdfinfo"):
                import subprocess

                info = subprocess.run(["pdfinfo", str(project / f"{rid}.pdf")], capture_output=True, text=True).stdout
                pages = next((ln.split()[-1] for ln in info.splitlines() if ln.startswith("Pages:")), "")
            print(f"{rid:8s} html {r['html_s']:6.2f} s   html+pdf {r['html_pdf_s']:6.2f} s   "
                  f"html {r['html_bytes'] / 1e3:8.0f} kB   pdf {r.get('pdf_bytes', 0) / 1e3:8.0f} kB   pages {pages}",
                  flush=True)


if __name__ == "__main__":
    main()
