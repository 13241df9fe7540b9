"""kvreg diff reads each side as the code of its revision did: a revision from before the geometry fill
(kvreg/configfill.py) left unknown geometry out, so its entries are not filled from the shipped configs
(kvreg/diff/revisions.py ``fills_geometry``); a side from after the fill is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from kvreg.diff import diff_projects
from kvreg.configfill import filled_data
from kvreg.diff.revisions import fills_geometry
from kvreg.problems import KvregError
from kvreg.registry import load_registry
from kvreg.validate_cache import ValidateCache

ROOT = Path(__file__).resolve().parents[1]
MODEL = "registry/models/llama-3.1-8b"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=kvreg test", "-c", "user.email=test@kvreg",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def write_entry(root: Path, data: dict) -> None:
    (root / f"{MODEL}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_revision_before_the_fill_is_read_unfilled(tmp_path):
    root = tmp_path / "proj"
    for rel in ("hardware/h100-sxm-80gb.yaml", "registry/engines/first-principles.yaml", f"{MODEL}.config.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    (root / "kvreg").mkdir()
    (root / "kvreg/__init__.py").write_text("")   # the repository holds kvreg's code, not yet the fill
    # Written before the fill: every geometry key stated but the unknown vocabulary, omitted
    full = filled_data(ROOT / f"{MODEL}.yaml")
    before = {k: v for k, v in full.items() if k != "vocab_size"}
    before["field_sources"] = {s: [k for k in keys if k != "vocab_size"] for s, keys in full["field_sources"].items()}
    write_entry(root, before)
    base_bytes = (root / f"{MODEL}.yaml").read_bytes()
    git(root, "init", "-q")
    commit(root, "before the fill")
    (root / "kvreg/configfill.py").write_text("")  # the fill arrives; the entry states its unknown vocabulary
    write_entry(root, {**before, "vocab_size": None})
    commit(root, "the fill, vocab_size: null")

    assert not fills_geometry("HEAD~1", root) and fills_geometry("HEAD", root) and fills_geometry(None, root)
    assert load_registry(root).of("model")["llama-3.1-8b"].vocab_size is None
    # What the entry meant did not change: no entry change (today's fill would read BASE's 128,256 from the config)
    r = diff_projects("HEAD~1", "HEAD", root, compare_figures=False)
    assert [(e.kind, e.id) for e in r.entries] == []
    # The same bytes under the fill are another reading, keyed apart in the validate cache that diff filled: read
    # filled, BASE's entry takes the config's vocabulary, which it names no source for (a cached unfilled reading
    # would pass).
    (root / f"{MODEL}.yaml").write_bytes(base_bytes)
    with pytest.raises(KvregError) as err:
        load_registry(root, ValidateCache.for_project(root))
    assert [(p.code, p.key) for p in err.value.problems] == [("unsourced-number", "vocab_size")]
    # The shipped form (vocab_size omitted, its source named) in the working tree is filled: 128,256 from the
    # config, a change against the revision before the fill.
    write_entry(root, {k: v for k, v in full.items() if k != "vocab_size"})
    r = diff_projects("HEAD~1", None, root, compare_figures=False)
    [change] = r.entries
    assert (change.kind, change.id, change.status) == ("model", "llama-3.1-8b", "changed")
    assert ("vocab_size", None, 128256) in [(f.path, f.old, f.new) for f in change.fields]
    # and a repository without kvreg's code (a registry of its own) is always filled
    shutil.rmtree(root / "kvreg")
    assert fills_geometry(str(root), root)
