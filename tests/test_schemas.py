"""JSON Schemas for editors: committed files are current, shipped entries carry headers and pass them."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from kvreg import jsonschemas as js
from kvreg.cli import main
from kvreg.registry import KINDS, discover, load_registry
from kvreg.units import UnitError, parse_quantity, unit_pattern
from tests.conftest import ROOT
from tests.registry_factory import engine_entry, hardware_entry, write_project

KIND = {k.name: k for k in KINDS}


def validator(kind: str):
    schema = json.loads((ROOT / "kvreg/schemas" / f"{kind}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def as_editor_sees(data):
    """YAML as a language server sees it: dates are strings (PyYAML turns them into date objects)."""
    return json.loads(json.dumps(data, default=str))


def test_committed_schemas_are_current():
    assert js.stale_schemas() == [], "run: python -m kvreg schema --write"


def test_every_shipped_entry_has_its_schema_header():
    assert js.missing_headers(ROOT) == [], "run: python -m kvreg schema --write"
    first = (ROOT / "registry/models/gemma-4-31b.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../kvreg/schemas/model.schema.json"
    assert (ROOT / "hardware/h100-sxm-80gb.yaml").read_text().splitlines()[0] == \
        "# yaml-language-server: $schema=../kvreg/schemas/hardware.schema.json"


@pytest.mark.parametrize("kind,path", [(k.name, p) for k, p in discover(ROOT)], ids=lambda x: getattr(x, "name", x))
def test_shipped_entries_pass_their_schema(kind, path):
    errors = list(validator(kind).iter_errors(as_editor_sees(yaml.safe_load(path.read_text()))))
    assert errors == []


@pytest.mark.parametrize("value,ok", [("80 GB", True), ("79.6 GiB", True), (80_000_000_000, True),
                                      ({"value": "80 GB", "source": "x"}, True), ("80G", False),
                                      ("80 gb", False), (-5, False), ({"value": "80 GB", "sauce": "x"}, False)])
def test_measure_with_units_as_editors_check_it(value, ok):
    entry = as_editor_sees(hardware_entry("hw", memory_marketed=value))
    assert validator("hardware").is_valid(entry) is ok


def test_unknown_key_and_bad_choice_are_flagged_by_the_schema():
    entry = hardware_entry("hw", memroy_usable="80 GB")
    assert not validator("hardware").is_valid(entry)
    assert not validator("hardware").is_valid(hardware_entry("hw", memory_basis="guess"))


SAMPLES = {
    "bytes": ["80 GB", "79.6 GiB", "512 MiB", "80G", "80 gb", "80", "1,024 KiB", "80 GB/s", "3e9 B", "80GB"],
    "bandwidth": ["3.35 TB/s", "819 GB/s", "3.35 TB", "3 TiB/s", "100"],
    "flops": ["989 TFLOP/s", "989 TFLOPS", "989 TB/s", "1e15 FLOP/s"],
    "tokens": ["8K", "32Ki", "131072", "128 tokens", "8 GB", "1Mi", "8k tok", "8 KiB"],
    "count": ["70.6e9", "70.6 G", "70.6B", "1,000"],
}


@pytest.mark.parametrize("kind,text", [(k, s) for k, ss in SAMPLES.items() for s in ss])
def test_unit_pattern_agrees_with_the_parser(kind, text):
    try:
        parse_quantity(text, kind)
        parsed = True
    except UnitError:
        parsed = False
    assert bool(re.search(unit_pattern(kind), text)) is parsed


def test_write_then_check_in_a_fresh_folder(tmp_path):
    written = js.write_schemas(tmp_path)
    assert sorted(p.name for p in written) == sorted(f"{k.name}.schema.json" for k in KINDS)
    assert js.stale_schemas(tmp_path) == []
    (tmp_path / "model.schema.json").write_text("{}\n")
    assert js.stale_schemas(tmp_path) == [tmp_path / "model.schema.json"]


def test_headers_are_added_once_and_keep_entries_valid(tmp_path):
    root = write_project(tmp_path, models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 2,
                                                                            "head_dim": 64}]}},
                         hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    assert len(js.missing_headers(root)) == 3
    assert len(js.write_headers(root)) == 3
    assert js.missing_headers(root) == [] and js.write_headers(root) == []
    assert (root / "hardware/hw.yaml").read_text().startswith(
        "# yaml-language-server: $schema=../kvreg/schemas/hardware.schema.json\nid: hw\n")
    assert set(load_registry(root).of("model")) == {"m"}


def test_schema_cli():
    r = CliRunner().invoke(main, ["schema", "model"])
    assert r.exit_code == 0 and r.output == (ROOT / "kvreg/schemas/model.schema.json").read_text()
    r = CliRunner().invoke(main, ["schema", "--check", "--project", str(ROOT)])
    assert (r.exit_code, r.output) == (0, f"{len(KINDS)} schemas up to date: {', '.join(KIND)}.\n")
    assert CliRunner().invoke(main, ["schema", "nope"]).exit_code == 2


def test_schema_check_fails_on_missing_header(tmp_path):
    root = write_project(tmp_path, hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    r = CliRunner().invoke(main, ["schema", "--check", "--project", str(root)])
    assert r.exit_code == 1
    assert "missing header:" in r.output and "hardware/hw.yaml" in r.output
