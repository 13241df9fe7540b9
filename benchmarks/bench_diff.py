"""Benchmark: `kvreg diff` between two commits of the shipped registry (run by hand).

Makes a temporary git repository from this checkout's registry (registry/,
hardware/, reports/ if present), commits it, edits one model (Gemma 4 31B's
global KV heads 4 → 8) and one accelerator (H100 usable memory), commits
again, and times ``diff_projects("HEAD~1", "HEAD")`` — both revisions
materialized with git archive, both registries built in memory, the views
joined in SQL.  ``--scale N`` also clones every model and accelerator N times
under new ids (a registry the size issue 7 aims at) to see how the time grows.

    python benchmarks/bench_diff.py [--scale 6] [--repeat 3]

Results go in benchmarks/README.md ("kvreg diff").
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvreg.diff import diff_projects  # noqa: E402


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@kvreg",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


def clone_entries(root: Path, folder: str, copies: int) -> None:
    for path in sorted((root / folder).glob("*.yaml")):
        text = path.read_text()
        for i in range(1, copies):
            new_id = f"{path.stem}-copy{i}"
            copy = text.replace(f"\nid: {path.stem}\n", f"\nid: {new_id}\n", 1)
            copy = re.sub(r"(?m)^hf_id: (.+)$", rf"hf_id: \1-copy{i}", copy)  # hf_id must stay unique
            (path.parent / f"{new_id}.yaml").write_text(copy)


def make_repo(tmp: Path, scale: int) -> Path:
    root = tmp / "proj"
    for folder in ("registry", "hardware", "reports"):
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, root / folder)
    if scale > 1:
        clone_entries(root, "registry/models", scale)
        clone_entries(root, "hardware", scale)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    gemma = root / "registry/models/gemma-4-31b.yaml"
    gemma.write_text(gemma.read_text().replace("kv_heads: 4 ", "kv_heads: 8 ", 1))
    h100 = root / "hardware/h100-sxm-80gb.yaml"
    h100.write_text(h100.read_text().replace("value: 81089 MiB", "value: 81000 MiB", 1))
    git(root, "commit", "-qam", "edit")
    return root


def run(scale: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kvreg-bench-diff-") as tmp:
        root = make_repo(Path(tmp), scale)
        models = len(list((root / "registry/models").glob("*.yaml")))
        hardware = len(list((root / "hardware").glob("*.yaml")))
        for all_scenarios in (False, True):
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                r = diff_projects("HEAD~1", "HEAD", root, all_scenarios=all_scenarios)
                times.append(time.perf_counter() - t0)
            cap = next(v for v in r.views if v.view == "capacity")
            print(f"scale {scale}: {models} models × {hardware} hardware, all_scenarios={all_scenarios}: "
                  f"best {min(times):.2f} s of {repeat}; capacity rows compared {cap.head_rows:,}; "
                  f"entries changed {len(r.entries)}; figures moved {len(r.figures):,}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    run(1, a.repeat)
    if a.scale > 1:
        run(a.scale, a.repeat)
