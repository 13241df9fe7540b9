"""kvreg diff: reordering an entry's sources is not a change; editing one source still is and moves no view; a price
change moves the cost figures and no other."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from kvreg.diff import diff_projects
from kvreg.diff.model import UNMOVED

ROOT = Path(__file__).resolve().parents[1]
HW = "hardware/h100-sxm-80gb.yaml"


def project(root: Path) -> Path:
    for rel in ("registry/models/llama-3.1-8b.yaml", "registry/models/llama-3.1-8b.config.json", HW, "registry/engines/first-principles.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    return root


def test_reordered_sources_are_no_change_and_an_edited_one_is(tmp_path):
    base, head = project(tmp_path / "base"), project(tmp_path / "head")
    data = yaml.safe_load((head / HW).read_text())
    assert len(data["sources"]) >= 2
    data["sources"] = list(reversed(data["sources"]))
    (head / HW).write_text(yaml.safe_dump(data, sort_keys=False))
    r = diff_projects(str(base), str(head), base)
    assert (r.entries, r.figures) == ([], [])

    data["sources"] = list(reversed(data["sources"]))  # back in order, one note edited
    data["sources"][0]["note"] = "edited note"
    (head / HW).write_text(yaml.safe_dump(data, sort_keys=False))
    r = diff_projects(str(base), str(head), base)
    assert [(e.id, [f.path for f in e.fields]) for e in r.entries] == [("h100-sxm-80gb", ["sources.0.note"])]
    assert r.figures == []
    # capacity and the admission rows read no source, and the rewritten file's line numbers are no value
    # (kvreg/diff/depends.py): not compared
    assert {v.view: v.skipped for v in r.views} == {"capacity": UNMOVED, "engine_capacity": UNMOVED,
                                                    "roofline": None, "costs": None}


def test_a_price_change_moves_the_cost_figures_and_nothing_else(tmp_path):
    """Every rental quote of the H100 doubled: the rental price (the lowest on-demand quote, 115) doubles, so
    each focused cost figure (270: price × tp ÷ (rate × 3,600) × 10^6, price × tp × 730 ÷ batch) is +100 %,
    and no capacity, admission or decode figure moves."""
    import re

    base, head = project(tmp_path / "base"), project(tmp_path / "head")
    text = (head / HW).read_text()
    doubled, n = re.subn(r"(usd_per_hour: \{value: )([0-9.]+)",
                         lambda m: f"{m.group(1)}{float(m.group(2)) * 2:g}", text)
    assert n >= 2
    (head / HW).write_text(doubled)
    r = diff_projects(str(base), str(head), base)
    assert [e.id for e in r.entries] == ["h100-sxm-80gb"]
    # hardware_prices is read by roofline (hardware_peaks) and costs, not by capacity or the admission rows
    assert {v.view: v.skipped for v in r.views} == {"capacity": UNMOVED, "engine_capacity": UNMOVED,
                                                    "roofline": None, "costs": None}
    moved = {(v.view, f) for v in r.views for f in v.figures}
    assert {(f.view, f.figure) for f in r.figures} == {("costs", "usd_per_million_output_tokens"),
                                                      ("costs", "usd_per_concurrent_seq_month")}
    assert ("costs", "usd_per_million_output_tokens") in moved
    assert r.figures and all(abs(f.pct - 100.0) < 1e-9 for f in r.figures)
    # every focused scenario with a rate moves: as many per-million figures as costs rows at batch 1
    costs = next(v for v in r.views if v.view == "costs")
    per_million = [f for f in r.figures if f.figure == "usd_per_million_output_tokens"]
    assert len({tuple(f.keys.values()) for f in per_million if f.keys["at"] == "batch 1"}) == costs.head_rows // 2
