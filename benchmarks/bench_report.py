"""Time `kvreg report`: HTML and PDF for reports/example.yaml and for a large report.

The large report lists every shipped model and hardware entry, weights and KV cache in bf16 and
fp8, TP 1, 2, 4 and 8, and seven contexts (4Ki … 256Ki).  Run by hand from the project root:

    python benchmarks/bench_report.py [--repeat N]

and record the results in benchmarks/README.md ("Report rendering").
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
    """Write reports/large.yaml listing every model and hardware entry of ``project``; return its id."""
    models = sorted(p.stem for p in (project / "registry" / "models").glob("*.yaml"))
    hardware = sorted(p.stem for p in (project / "hardware").glob("*.yaml"))
    doc = {"id": "large", "title": "Every model on every device", "period": "benchmark",
           "models": models, "hardware": hardware, "weights_dtypes": ["bf16", "fp8"], "kv_dtypes": ["bf16", "fp8"],
           "tp": [1, 2, 4, 8], "contexts": ["4Ki", "8Ki", "16Ki", "32Ki", "64Ki", "128Ki", "256Ki"],
           "workload": {"users": 200, "context": "32Ki"}}
    (project / "reports" / "large.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return "large"


def time_report(project: Path, report_id: str, repeat: int) -> dict[str, float]:
    """Best-of-``repeat`` seconds for the HTML (validate, build, query, charts, render) and for HTML + PDF."""
    from kvreg.report.make import render

    best = {"html_s": float("inf"), "html_pdf_s": float("inf")}
    sizes = {}
    for _ in range(repeat):
        t = time.perf_counter()
        out = render(project, report_id, ["html"])
        best["html_s"] = min(best["html_s"], time.perf_counter() - t)
        t = time.perf_counter()
        out = render(project, report_id, ["html", "pdf"])
        best["html_pdf_s"] = min(best["html_pdf_s"], time.perf_counter() - t)
        sizes = {k: len(v) for k, v in out.items()}
    return best | {f"{k}_bytes": v for k, v in sizes.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        for folder in ("registry", "hardware", "reports"):
            shutil.copytree(ROOT / folder, project / folder)
        large = large_report(project)
        for rid in ("example", large):
            r = time_report(project, rid, args.repeat)
            print(f"{rid:8s} html {r['html_s']:6.2f} s   html+pdf {r['html_pdf_s']:6.2f} s   "
                  f"html {r['html_bytes'] / 1e3:8.0f} kB   pdf {r['pdf_bytes'] / 1e3:8.0f} kB")


if __name__ == "__main__":
    main()
