"""kvreg diff: reordering an entry's sources is not a change; editing one source still is."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from kvreg.diff import diff_projects

ROOT = Path(__file__).resolve().parents[1]
HW = "hardware/h100-sxm-80gb.yaml"


def project(root: Path) -> Path:
    for rel in ("registry/models/llama-3.1-8b.yaml", HW, "registry/engines/first-principles.yaml"):
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
