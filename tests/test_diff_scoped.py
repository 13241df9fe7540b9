"""The focused (scoped) diff against the exhaustive one (``--all-scenarios``), on a small fixture registry.

The default diff cuts both sides to the touched entries (``cut_to_touched``; one copy per kind for an edit of
several kinds, ``cut_by_kind``), computes the shared steps once per side and copies the ones whose inputs did not
change from BASE (``shared_steps``: a price edit).  None of that may change a number: every figure the focused
diff reports must be the exhaustive diff's figure for the same scenario (old and new), and every figure the
exhaustive diff moves on a scenario the focus keeps (contexts within the native context; bf16 weights, the only
dtype this fixture's accelerators run, as they list no native precisions and the models no checkpoints; the
batch-1 rate) must be reported by the focused diff.  One edit of each kind: a model, an accelerator, an engine
release, a price, and a model with an accelerator together.
"""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from kvreg.diff import diff_projects
from tests.registry_factory import engine_entry, hardware_entry, model_entry, write_project

NATIVE = 32768  # every fixture model's native context


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=kvreg test", "-c", "user.email=test@kvreg",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


def models(m_kv_heads: int = 8) -> dict:
    return {
        "m": model_entry("m", 32, [{"kind": "full", "count": 32, "kv_heads": m_kv_heads, "head_dim": 128}],
                         native_context=NATIVE),
        "n": model_entry("n", 16, [{"kind": "full", "count": 16, "kv_heads": 4, "head_dim": 128}],
                         native_context=NATIVE, params_total=2e9),
    }


def hardware(usable: str = "79.6 GiB", usd: float = 2.5) -> dict:
    price = {"rental": [{"usd_per_hour": usd, "provider": "fixture cloud", "date": datetime.date(2026, 1, 1)}]}
    return {"hw": hardware_entry("hw", memory_usable=usable, price=price),
            "hw2": hardware_entry("hw2", memory_marketed="48 GB", memory_usable="44 GiB", bandwidth="0.9 TB/s",
                                  price={"rental": [{"usd_per_hour": 1.0, "provider": "fixture cloud",
                                                     "date": datetime.date(2026, 1, 1)}]})}


def engines(reserve: str = "6 GiB") -> dict:
    return {"first-principles": engine_entry(runtime_reserve=reserve),
            "fp-lean": engine_entry("fp-lean", runtime_reserve="2 GiB")}


def write(root: Path, m_kv_heads=8, usable="79.6 GiB", usd=2.5, reserve="6 GiB") -> None:
    for folder in ("registry/models", "hardware", "registry/engines"):
        for f in (root / folder).glob("*.yaml") if (root / folder).is_dir() else ():
            f.unlink()
    write_project(root, models=models(m_kv_heads), hardware=hardware(usable, usd), engines=engines(reserve))


EDITS = {
    "model": dict(m_kv_heads=4),
    "hardware": dict(usable="70 GiB"),
    "engine": dict(reserve="8 GiB"),
    "price": dict(usd=3.0),
    "mixed": dict(m_kv_heads=4, usable="70 GiB"),
}


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("scoped") / "proj"
    write(root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def figures(result, view: str) -> dict[tuple, tuple]:
    """(keys without `at`/`batch` position, figure, where) → (old, new) of one view's reported figures."""
    out = {}
    for f in result.figures:
        if f.view != view:
            continue
        keys = dict(f.keys)
        at = keys.pop("at", None)
        out[(tuple(sorted(keys.items())), f.figure, at)] = (f.old, f.new)
    return out


def close(a, b) -> bool:
    return a == b or (a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b)))


# Each case runs two whole diffs (about a minute of CPU each on a 2-core machine), so the suite runs three:
# "mixed" edits a model and an accelerator together (cut per kind), "engine" and "price" the other kinds; the
# single-kind cut of a model or an accelerator alone is tests/test_diff_cut.py's.  All five: KVREG_ALL_EDITS=1.
RUN = sorted(EDITS) if os.environ.get("KVREG_ALL_EDITS") else ["engine", "mixed", "price"]


@pytest.mark.parametrize("edit", RUN)
def test_scoped_diff_reports_the_exhaustive_figures(base_repo, tmp_path, edit):
    head = tmp_path / "head"
    subprocess.run(["cp", "-r", str(base_repo), str(head)], check=True)
    write(head, **EDITS[edit])
    scoped = diff_projects(str(base_repo), str(head), base_repo)
    full = diff_projects(str(base_repo), str(head), base_repo, all_scenarios=True)
    assert [(e.kind, e.id) for e in scoped.entries] == [(e.kind, e.id) for e in full.entries]
    compared = 0
    # capacity and engine_capacity: the focused key is the exhaustive key (less max_num_batched_tokens)
    for view in ("capacity", "engine_capacity"):
        exhaustive = {}
        for (keys, fig, _), v in figures(full, view).items():
            k = dict(keys)
            k.pop("max_num_batched_tokens", None)
            exhaustive.setdefault((tuple(sorted(k.items())), fig), []).append(v)
        focused = {(k, fig): v for (k, fig, _), v in figures(scoped, view).items()}
        for key, (old, new) in focused.items():
            assert any(close(old, o) and close(new, n) for o, n in exhaustive.get(key, [])), (view, key, old, new)
        for (keys, fig), values in exhaustive.items():
            k = dict(keys)
            length = k.get("context_tokens", k.get("max_model_len"))
            # TP 1 only: the fixture's accelerator states no interconnect, so kvreg plan refuses TP > 1 there and
            # the focus leaves those rows out (focus.LEFT_OUT, counted in left_out, below)
            if fig in ("max_seqs", "naive_max_seqs", "admitted_seqs", "logged_kv_tokens") and k["tp"] == 1 \
                    and k["weights_dtype"] == "bf16" and length <= NATIVE and view == "capacity":
                assert (keys, fig) in focused, (view, keys, fig, values)
        compared += len(focused)
    # roofline and costs: the focus's batch-1 row is the exhaustive row at batch 1
    for view, figs in (("roofline", ("decode_tok_per_s",)),
                       ("costs", ("usd_per_million_output_tokens", "usd_per_concurrent_seq_month"))):
        exhaustive = {}
        for (keys, fig, _), v in figures(full, view).items():
            k = dict(keys)
            if k.pop("batch") == 1 and fig in figs:  # --all-scenarios also compares usd_per_hour
                exhaustive[(tuple(sorted(k.items())), fig)] = v
        focused = {(k, fig): v for (k, fig, at), v in figures(scoped, view).items() if at == "batch 1" and fig in figs}
        for key, (old, new) in focused.items():
            assert key in exhaustive and close(old, exhaustive[key][0]) and close(new, exhaustive[key][1]), \
                (view, key, old, new)
        for (keys, fig), values in exhaustive.items():
            k = dict(keys)
            if k["weights_dtype"] == "bf16" and k["context_tokens"] <= NATIVE and k["tp"] == 1:
                assert (keys, fig) in focused, (view, keys, fig, values)
        compared += len(focused)
    assert compared > 0  # every edit moves some focused figure
    # what was left out is only what kvreg plan refuses: TP > 1 here (no draft head in the fixture), never TP 1
    assert set(scoped.left_out) == {"tp_refused"} and not any(f.keys["tp"] > 1 for f in scoped.figures)
    if edit == "price":  # a price moves the cost figures only
        assert {f.view for f in scoped.figures} == {"costs"}
