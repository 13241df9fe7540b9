"""Benchmark: `kvreg diff` between two commits of the shipped registry (run by hand).

Makes a temporary git repository from this checkout's registry (registry/,
hardware/, reports/ if present), commits it, then commits ONE edit (``--case``:
``hardware`` = generic-80gb usable memory 79.6 → 79.0 GiB, ``model`` = Gemma 4
31B's global KV heads 4 → 8, ``engine`` = vLLM 0.33's window batched-tokens factor 2 → 1,
``price`` = H100 SXM's lowest rental quote 2.99 → 2.79 USD/h, ``many`` = 25 entries of mixed kinds (10 accelerators'
usable memory 1 % less, 10 models' bf16 checkpoint bytes 1 % more, 5 accelerators' first rental quote 5 % less),
``many-hardware`` = 25 accelerators' usable memory each 1 % less), and times ``diff_projects("HEAD~1", "HEAD")`` — both revisions
materialized with git archive, both registries built in memory, the views
joined in SQL.  ``--scale N`` also clones every model and accelerator N times
under new ids (a registry the size issue 7 aims at) to see how the time grows.

    python benchmarks/bench_diff.py [--case hardware|model|engine|price|many|many-hardware] [--all-scenarios] [--scale 6] [--repeat 3] [--all-figures] [--out DIR]

Results go in benchmarks/README.md ("kvreg diff").
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvreg.diff import diff_projects  # noqa: E402
from kvreg.diff.render import render, rows_needed  # noqa: E402


def cpu_seconds() -> float:
    """The process's user + system CPU time (DuckDB's threads included), seconds."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


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
    return root


# One-entry edits, each committed on its own (HEAD~1 → HEAD is that edit alone).
EDITS = {
    # the fresh-user case: usable memory 79.6 → 79.0 GiB
    "hardware": ("hardware/generic-80gb.yaml", "value: 79.6 GiB", "value: 79.0 GiB"),
    # Gemma 4 31B global-layer KV heads 4 → 8, in the entry and its shipped config.json (they must agree)
    "model": ("registry/models/gemma-4-31b.yaml", "kv_heads: 4 ", "kv_heads: 8 "),
}
EDITS["engine"] = ("registry/engines/vllm-0.33.yaml", "  window_batched_tokens_factor:\n    value: 2",
                    "  window_batched_tokens_factor:\n    value: 1")
ALSO = {"model": ("registry/models/gemma-4-31b.config.json", '"num_global_key_value_heads": 4',
                  '"num_global_key_value_heads": 8')}
# a price edit: H100 SXM's lowest rental quote (Lambda, 2.99) → 2.79 USD per hour (moves costs only)
EDITS["price"] = ("hardware/h100-sxm-80gb.yaml", "{usd_per_hour: {value: 2.99,", "{usd_per_hour: {value: 2.79,")
MANY = 25  # the "25 changed entries" case (many-hardware): the first 25 accelerators' usable memory, each 1 % less
_USABLE = re.compile(r"(?m)^(memory_usable: \{value: )([0-9.]+)( (?:GiB|MiB|GB))")
_PRICE = re.compile(r"(\{usd_per_hour: \{value: )([0-9.]+)(,)")
_PARAMS = re.compile(r"(?m)^(params_total: \{value: )([0-9.e+]+)(,)")
# The mixed 25-entry case (many): 10 accelerators' usable memory 1 % less, 10 models' params_total 1 % more (their
# weights, where no checkpoint states its bytes), 5 other accelerators' rental quotes each 5 % less (entries of
# kinds hardware, model and price).
MIXED = (("hardware", _USABLE, 0.99, 10, "{:.6g}"), ("registry/models", _PARAMS, 1.01, 10, "{:.0f}"),
         ("hardware", _PRICE, 0.95, 5, "{:.4g}"))


def edit_each(root: Path, folder: str, pattern: re.Pattern, factor: float, count: int, fmt: str,
              skip: set[Path]) -> set[Path]:
    """Scale the first match of ``pattern`` by ``factor`` in the first ``count`` files of ``folder`` not in ``skip``."""
    done: set[Path] = set()
    for path in sorted((root / folder).glob("*.yaml")):
        text = path.read_text()
        m = pattern.search(text)
        if m is None or path in skip or len(done) == count:
            continue
        every = pattern is _PRICE  # every quote of the accelerator, so its lowest moves
        path.write_text(pattern.sub(lambda g: g.group(1) + fmt.format(float(g.group(2)) * factor) + g.group(3), text,
                                    count=0 if every else 1))
        done.add(path)
    assert len(done) == count, (folder, len(done))
    return done


def edit_many(root: Path, mixed: bool) -> None:
    if not mixed:
        edit_each(root, "hardware", _USABLE, 0.99, MANY, "{:.6g}", set())
        git(root, "commit", "-qam", f"edit {MANY} accelerators")
        return
    edited: set[Path] = set()
    for folder, pattern, factor, count, fmt in MIXED:
        edited |= edit_each(root, folder, pattern, factor, count, fmt, edited)
    assert len(edited) == MANY, len(edited)
    git(root, "commit", "-qam", f"edit {MANY} entries of mixed kinds")


def edit(root: Path, case: str) -> None:
    if case in ("many", "many-hardware"):
        return edit_many(root, case == "many")
    for rel, old, new in filter(None, (EDITS[case], ALSO.get(case))):
        path = root / rel
        if not path.exists():
            continue
        text = path.read_text()
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1))
    git(root, "commit", "-qam", f"edit {case}")


def run(scale: int, repeat: int, cases: list[str], all_modes: tuple[bool, ...], figure_rows: int | None,
        out: Path | None = None) -> None:
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="kvreg-bench-diff-") as tmp:
            root = make_repo(Path(tmp), scale)
            edit(root, case)
            models = len(list((root / "registry/models").glob("*.yaml")))
            hardware = len(list((root / "hardware").glob("*.yaml")))
            for all_scenarios in all_modes:
                times, cpus = [], []
                for _ in range(repeat):
                    steps: list[tuple[float, float, str]] = []
                    load = os.getloadavg()[0]
                    t0, c0 = time.perf_counter(), cpu_seconds()

                    def step(msg: str) -> None:  # printed as it happens too: a run stopped early shows where it was
                        steps.append((time.perf_counter(), cpu_seconds(), msg))
                        print(f"    [{steps[-1][0] - t0:.1f} s wall / {steps[-1][1] - c0:.1f} s cpu] {msg}", flush=True)

                    r = diff_projects("HEAD~1", "HEAD", root, all_scenarios=all_scenarios, figure_rows=figure_rows,
                                      progress=step)
                    t1, c1 = time.perf_counter(), cpu_seconds()
                    times.append(t1 - t0)
                    cpus.append(c1 - c0)
                    marks = steps + [(t1, c1, "end")]
                    print("  steps (wall / cpu): " + "; ".join(f"{m} {b - a:.1f} / {d - c:.1f} s"
                                                             for (a, c, m), (b, d, _) in zip(marks, marks[1:])))
                    print(f"  wall {t1 - t0:.2f} s, cpu {c1 - c0:.2f} s, load {load:.1f} → {os.getloadavg()[0]:.1f}, "
                          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")
                if out is not None:  # the CLI's text and Markdown, to compare before / after with cmp
                    out.mkdir(parents=True, exist_ok=True)
                    for fmt, ext in (("text", "txt"), ("markdown", "md"), ("json", "json")):
                        (out / f"{case}-scale{scale}.{ext}").write_text(render(r, fmt, 10))
                cap = next(v for v in r.views if v.view == "capacity")
                print(f"{case} edit, scale {scale}: {models} models × {hardware} hardware, all_scenarios={all_scenarios}: "
                      f"best {min(times):.2f} s wall / {min(cpus):.2f} s cpu of {repeat}; capacity rows compared {cap.head_rows:,}; "
                      f"entries changed {len(r.entries)}; figures moved {r.figures_moved():,} ({len(r.figures):,} fetched)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--case", action="append", choices=sorted(EDITS) + ["many", "many-hardware"],
                    help="edit to time (default: every one-entry edit and many)")
    ap.add_argument("--all-scenarios", action="store_true", help="also time --all-scenarios")
    ap.add_argument("--all-figures", action="store_true",
                    help="fetch every moved figure into Python (as --format json); default: what the Markdown prints")
    ap.add_argument("--out", type=Path, help="write each case's text and Markdown output into this folder")
    a = ap.parse_args()
    modes = (False, True) if a.all_scenarios else (False,)
    rows = None if a.all_figures else rows_needed("markdown", 10)
    cases = a.case or sorted(EDITS) + ["many"]
    run(1, a.repeat, cases, modes, rows, a.out)
    if a.scale > 1:
        run(a.scale, a.repeat, cases, modes, rows, a.out)
