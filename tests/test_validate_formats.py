"""kvreg validate --format github / json: exact output for a registry with known problems."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kvreg.cli import main
from tests.registry_factory import engine_entry, hardware_entry, write_project


def bad_project(root):
    write_project(root, models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": -1,
                                                                 "head_dim": 64}]}},
                  hardware={"hw": hardware_entry("hw", memory_usable="80G")},
                  engines={"first-principles": engine_entry()})
    return root


def line_of(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def validate(root, fmt):
    return CliRunner().invoke(main, ["validate", "--project", str(root), "--format", fmt])


def test_github_annotations_exact(tmp_path):
    root = bad_project(tmp_path)
    hw, m = line_of(root / "hardware/hw.yaml", "memory_usable"), line_of(root / "registry/models/m.yaml", "kv_heads")
    r = validate(root, "github")
    assert r.exit_code == 1
    assert r.stdout == (
        f"::error file=hardware/hw.yaml,line={hw},col=1,title=kvreg bad-unit::bad-unit: memory_usable.value: cannot read '80G' as a "
        "bytes quantity (hint: '80G' is ambiguous: write 80 GB (10^n bytes) or 80 GiB (2^n bytes))\n"
        f"::error file=registry/models/m.yaml,line={m},col=3,title=kvreg not-positive::not-positive: layer_groups.0.kv_heads: "
        "Input should be greater than 0 (got -1)\n")


def test_github_annotation_keeps_a_multiline_hint_on_one_line(tmp_path):
    root = write_project(tmp_path, hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    (root / "registry/models/broken.yaml").write_text("id: broken\nlayers: [1, 2\n")
    r = validate(root, "github")
    assert r.exit_code == 1
    [line] = r.stdout.splitlines()
    assert line.startswith("::error file=registry/models/broken.yaml,line=")
    assert "::yaml-syntax: : malformed YAML" in line and "%0A" in line and "\n" not in line.strip()


def test_json_problems_exact(tmp_path):
    root = bad_project(tmp_path)
    r = validate(root, "json")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == [
        {"file": "hardware/hw.yaml", "line": line_of(root / "hardware/hw.yaml", "memory_usable"), "col": 1,
         "key": "memory_usable.value", "code": "bad-unit", "message": "cannot read '80G' as a bytes quantity",
         "hint": "'80G' is ambiguous: write 80 GB (10^n bytes) or 80 GiB (2^n bytes)", "related": ""},
        {"file": "registry/models/m.yaml", "line": line_of(root / "registry/models/m.yaml", "kv_heads"), "col": 3,
         "key": "layer_groups.0.kv_heads", "code": "not-positive",
         "message": "Input should be greater than 0 (got -1)", "hint": "", "related": ""},
    ]


def test_clean_registry_formats(tmp_path):
    root = write_project(tmp_path, hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    assert validate(root, "json").stdout == "[]\n"
    r = validate(root, "github")
    assert (r.exit_code, r.stdout) == (0, "")
