"""`kvreg validate` on bad input: every case reports exit 1, a stable code, the file and the line.

Each test writes a small project (tests/registry_factory.py) and, where the exact line
matters, the YAML text itself, then runs the command through click's CliRunner.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from tests.registry_factory import engine_entry, hardware_entry, write_project

MODEL = """\
id: m
layers: 2
hidden_size: 4096
native_context: 131072
params_total: 8e9
layer_groups:
  - kind: full
    count: 2
    kv_heads: 8
    head_dim: 128
sources:
  - title: test fixture
    id: fixture
field_sources: {fixture: ["*"]}
"""

HARDWARE = """\
id: hw
vendor: test
memory_marketed: 80 GB
memory_usable: 79.6 GiB
memory_basis: runtime
bandwidth: 3.35 TB/s
sources:
  - title: test fixture
    id: fixture
field_sources: {fixture: ["*"]}
"""


def project(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    """A valid project (one model ``m``, hardware ``hw``, the engine) with ``files`` written over it."""
    write_project(tmp_path, hardware={"hw": hardware_entry("hw")}, engines={"first-principles": engine_entry()})
    (tmp_path / "registry/models/m.yaml").write_text(MODEL)
    for rel, text in (files or {}).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    return tmp_path


def validate(root: Path, *args: str):
    return CliRunner().invoke(main, ["validate", "--project", str(root), *args])


def problems(root: Path) -> list[dict]:
    """The problems of ``root`` as dicts (``--format json``); asserts exit code 1."""
    r = validate(root, "--format", "json")
    assert r.exit_code == 1, r.output
    return json.loads(r.stdout)


def only(root: Path) -> dict:
    """The single problem of ``root``."""
    found = problems(root)
    assert len(found) == 1, found
    return found[0]


def model(tmp_path, old: str, new: str) -> Path:
    """A project whose model file has ``old`` replaced by ``new``."""
    assert old in MODEL
    return project(tmp_path, {"registry/models/m.yaml": MODEL.replace(old, new, 1)})


def where(p: dict) -> tuple:
    return p["code"], p["file"], p["line"]


# --- the valid baseline ---------------------------------------------------------------------------

def test_valid_project_passes(tmp_path):
    r = validate(project(tmp_path))
    assert r.exit_code == 0, r.output
    assert r.output == "3 entries valid.\n"


def test_shipped_registry_is_valid():
    r = validate(Path(__file__).resolve().parents[1])
    assert r.exit_code == 0, r.output


# --- one test per kind of bad input -----------------------------------------------------------------

def test_malformed_yaml_shows_the_line(tmp_path):
    root = model(tmp_path, "layers: 2\n", "layers: [2\n")
    p = only(root)
    assert where(p) == ("yaml-syntax", "registry/models/m.yaml", 3)
    r = validate(root)
    assert r.exit_code == 1
    # dbt style: "near line N" and the numbered source lines up to it.
    assert "registry/models/m.yaml:3:12: yaml-syntax: malformed YAML" in r.output
    assert "   2 | layers: [2\n   3 | hidden_size: 4096" in r.output


def test_unknown_key_suggests_the_nearest_known_one(tmp_path):
    p = only(model(tmp_path, "    kv_heads: 8", "    kv_head: 8"))
    assert where(p) == ("unknown-key", "registry/models/m.yaml", 9)
    assert p["key"] == "layer_groups.0.kv_head"
    assert p["col"] == 5
    assert p["hint"].startswith("did you mean 'kv_heads'?")


def test_unknown_top_level_key_is_one_problem_not_two(tmp_path):
    # pydantic also reports hidden_size as missing; kvreg folds that into the typo's hint.
    p = only(model(tmp_path, "hidden_size:", "hiden_size:"))
    assert where(p) == ("unknown-key", "registry/models/m.yaml", 3)
    assert p["hint"] == "did you mean 'hidden_size'? it is required and missing here"


def test_unknown_optional_key_is_never_ignored(tmp_path):
    p = only(model(tmp_path, "sources:", "vocab: 32000\nsources:"))
    assert where(p) == ("unknown-key", "registry/models/m.yaml", 11)
    assert "did you mean 'vocab_size'?" in p["hint"]


def test_typo_inside_a_measure_is_an_unknown_key(tmp_path):
    p = only(model(tmp_path, "params_total: 8e9", "params_total: {valeu: 8e9}"))
    assert where(p) == ("unknown-key", "registry/models/m.yaml", 5)
    assert (p["key"], p["col"]) == ("params_total.valeu", 16)
    assert p["hint"].startswith("did you mean 'value'?")


def test_typo_inside_a_hardware_measure(tmp_path):
    hw = HARDWARE.replace("bandwidth: 3.35 TB/s", "bandwidth:\n  vlaue: 3.35 TB/s\n  source: x")
    p = only(project(tmp_path, {"hardware/hw.yaml": hw}))
    assert where(p) == ("unknown-key", "hardware/hw.yaml", 7)
    assert p["key"] == "bandwidth.vlaue"


def test_wrong_type(tmp_path):
    p = only(model(tmp_path, "layers: 2", "layers: two"))
    assert where(p) == ("wrong-type", "registry/models/m.yaml", 2)
    assert p["key"] == "layers"
    assert "(got 'two')" in p["message"]


def test_wrong_type_of_a_nested_flag(tmp_path):
    p = only(model(tmp_path, "    head_dim: 128", "    head_dim: 128\n    k_eq_v: perhaps"))
    assert where(p) == ("wrong-type", "registry/models/m.yaml", 11)
    assert p["key"] == "layer_groups.0.k_eq_v"


@pytest.mark.parametrize("count", ["-2", "0"])
def test_negative_or_zero_count(tmp_path, count):
    p = only(model(tmp_path, "    count: 2", f"    count: {count}"))
    assert where(p) == ("not-positive", "registry/models/m.yaml", 8)
    assert p["key"] == "layer_groups.0.count"


def test_layer_counts_that_do_not_sum(tmp_path):
    p = only(model(tmp_path, "layers: 2", "layers: 3"))
    assert where(p) == ("layer-count-mismatch", "registry/models/m.yaml", 6)
    assert p["message"] == "layer groups sum to 2 layers but layers is 3"


def test_window_larger_than_native_context(tmp_path):
    text = MODEL.replace("kind: full", "kind: sliding").replace("    head_dim: 128", "    head_dim: 128\n    window: 200K")
    p = only(project(tmp_path, {"registry/models/m.yaml": text}))
    assert where(p) == ("window-exceeds-context", "registry/models/m.yaml", 11)
    assert (p["key"], p["col"]) == ("layer_groups.0.window", 5)
    assert p["message"] == "window of 200000 tokens exceeds the native context of 131072 tokens"


def test_field_that_does_not_apply_to_the_kind(tmp_path):
    p = only(model(tmp_path, "    head_dim: 128", "    head_dim: 128\n    window: 4096"))
    assert where(p) == ("field-not-for-kind", "registry/models/m.yaml", 11)
    assert p["key"] == "layer_groups.0.window"
    assert p["message"] == "'window' does not apply to a 'full' layer group"


def test_kind_without_its_required_field(tmp_path):
    p = only(model(tmp_path, "kind: full", "kind: sliding"))
    assert where(p) == ("missing-key", "registry/models/m.yaml", 7)
    assert p["key"] == "layer_groups.0.window"
    assert p["message"] == "a 'sliding' layer group needs 'window'"


def test_duplicate_id_yaml_and_yml(tmp_path):
    root = project(tmp_path, {"registry/models/m.yml": MODEL})
    p = only(root)
    assert where(p) == ("duplicate-id", "registry/models/m.yml", 1)
    assert p["message"] == "model id 'm' is already used by registry/models/m.yaml"


def test_malformed_id(tmp_path):
    p = only(model(tmp_path, "id: m", "id: M_1"))
    assert where(p) == ("bad-id", "registry/models/m.yaml", 1)
    assert p["message"] == "id 'M_1' is not a valid entry id"


def test_unknown_choice(tmp_path):
    p = only(model(tmp_path, "kind: full", "kind: fancy"))
    assert where(p) == ("bad-choice", "registry/models/m.yaml", 7)
    assert p["message"].endswith("(got 'fancy')")


def test_empty_layer_groups(tmp_path):
    text = MODEL[:MODEL.index("layer_groups")] + "layer_groups: []\nsources:\n  - title: t\n"
    p = only(project(tmp_path, {"registry/models/m.yaml": text}))
    assert where(p) == ("too-few-items", "registry/models/m.yaml", 6)


def test_utilization_above_one_is_out_of_range(tmp_path):
    engine = ("id: first-principles\nengine: first-principles\ngpu_memory_utilization: 1.5\n"
              "runtime_reserve: 6 GiB\nsources:\n  - title: t\n")
    p = only(project(tmp_path, {"registry/engines/first-principles.yaml": engine}))
    assert where(p) == ("out-of-range", "registry/engines/first-principles.yaml", 3)


def test_resident_needs_bytes_or_model(tmp_path):
    p = only(project(tmp_path, {"hardware/hw.yaml": HARDWARE + "residents:\n  - name: os\n"}))
    assert where(p) == ("resident-size", "hardware/hw.yaml", 12)


def test_two_models_with_one_hf_id(tmp_path):
    root = project(tmp_path, {"registry/models/m.yaml": MODEL.replace("id: m", "id: m\nhf_id: org/m"),
                              "registry/models/n.yaml": MODEL.replace("id: m", "id: n\nhf_id: org/m")})
    p = only(root)
    assert where(p) == ("duplicate-hf-id", "registry/models/n.yaml", 2)


def test_entry_that_is_not_a_mapping(tmp_path):
    p = only(project(tmp_path, {"registry/models/m.yaml": "- id: m\n"}))
    assert where(p) == ("wrong-type", "registry/models/m.yaml", 1)


def test_id_differing_from_file_stem(tmp_path):
    p = only(model(tmp_path, "id: m", "id: mm"))
    assert where(p) == ("id-file-mismatch", "registry/models/m.yaml", 1)
    assert p["hint"] == "rename the file to mm.yaml or set id: m"


def test_reference_to_a_missing_entry(tmp_path):
    hw = HARDWARE + "residents:\n  - name: other model\n    model: no-such-model\n"
    p = only(project(tmp_path, {"hardware/hw.yaml": hw}))
    assert where(p) == ("missing-reference", "hardware/hw.yaml", 13)
    assert p["key"] == "residents.0.model"


def test_a_draft_head_naming_a_missing_target(tmp_path):
    p = only(model(tmp_path, "layers: 2", "draft_for: mm\nlayers: 2"))
    assert where(p) == ("missing-reference", "registry/models/m.yaml", 2)   # the draft_for line
    assert p["key"] == "draft_for"
    assert "'mm'" in p["message"] and "did you mean m" in p["hint"]


def test_reference_to_an_invalid_entry_is_not_reported_twice(tmp_path):
    hw = HARDWARE + "residents:\n  - name: other model\n    model: m\n"
    root = project(tmp_path, {"hardware/hw.yaml": hw, "registry/models/m.yaml": MODEL.replace("layers: 2", "layers: 3")})
    assert [where(p) for p in problems(root)] == [("layer-count-mismatch", "registry/models/m.yaml", 6)]


def test_duplicate_id_is_reported_even_when_the_first_file_is_invalid(tmp_path):
    root = project(tmp_path, {"registry/models/m.yaml": MODEL.replace("layers: 2", "layers: 3"),
                              "registry/models/m.yml": MODEL})
    assert [where(p) for p in problems(root)] == [("layer-count-mismatch", "registry/models/m.yaml", 6),
                                                  ("duplicate-id", "registry/models/m.yml", 1)]


def test_reference_to_an_existing_entry_is_fine(tmp_path):
    hw = HARDWARE + "residents:\n  - name: other model\n    model: m\n    weights_dtype: int8\n"
    assert validate(project(tmp_path, {"hardware/hw.yaml": hw})).exit_code == 0


def test_bad_unit_string_80G_is_ambiguous(tmp_path):
    p = only(project(tmp_path, {"hardware/hw.yaml": HARDWARE.replace("80 GB", "80G")}))
    assert where(p) == ("bad-unit", "hardware/hw.yaml", 3)
    assert p["key"] == "memory_marketed.value"
    assert p["hint"] == "'80G' is ambiguous: write 80 GB (10^n bytes) or 80 GiB (2^n bytes)"


def test_bytes_unit_where_tokens_are_expected(tmp_path):
    p = only(model(tmp_path, "native_context: 131072", "native_context: 128 GB"))
    assert where(p) == ("bad-unit", "registry/models/m.yaml", 4)
    assert p["hint"].startswith("'GB' is a bytes unit but this field takes tokens")


def test_missing_sources_key(tmp_path):
    p = only(model(tmp_path, "sources:\n  - title: test fixture\n    id: fixture\nfield_sources: {fixture: [\"*\"]}\n", ""))
    assert where(p) == ("missing-source", "registry/models/m.yaml", 1)


def test_empty_sources_list(tmp_path):
    p = only(model(tmp_path, "sources:\n  - title: test fixture\n    id: fixture\nfield_sources: {fixture: [\"*\"]}\n", "sources: []\n"))
    assert where(p) == ("missing-source", "registry/models/m.yaml", 11)


def test_source_without_url_or_title(tmp_path):
    p = only(model(tmp_path, "  - title: test fixture", "  - note: from memory"))
    assert where(p) == ("source-empty", "registry/models/m.yaml", 12)


def test_field_citing_an_unknown_source(tmp_path):
    p = only(model(tmp_path, "params_total: 8e9", "params_total: {value: 8e9, source: nowhere}"))
    assert where(p) == ("unknown-source", "registry/models/m.yaml", 5)
    assert p["key"] == "params_total.source"
    assert p["message"] == "source 'nowhere' is not one of this entry's sources"


def test_two_sources_with_one_id(tmp_path):
    p = only(model(tmp_path, "  - title: test fixture\n    id: fixture",
                   "  - {id: cfg, title: test fixture}\n  - {id: cfg, title: another}"))
    assert where(p) == ("duplicate-source-id", "registry/models/m.yaml", 13)
    assert p["key"] == "sources.1.id"


def test_duplicate_yaml_key(tmp_path):
    p = only(model(tmp_path, "hidden_size: 4096", "hidden_size: 4096\nhidden_size: 8192"))
    assert where(p) == ("duplicate-key", "registry/models/m.yaml", 4)
    assert p["hint"].startswith("first at line 3;")


def test_empty_file(tmp_path):
    p = only(project(tmp_path, {"registry/models/m.yaml": "# nothing yet\n"}))
    assert where(p) == ("empty-file", "registry/models/m.yaml", 1)


def test_file_that_is_not_utf8(tmp_path):
    root = project(tmp_path)
    (root / "registry/models/m.yaml").write_bytes(MODEL.encode() + b"notes: caf\xe9\n")
    p = only(root)
    assert where(p) == ("bad-encoding", "registry/models/m.yaml", 15)


def test_usable_memory_above_the_label_is_a_unit_slip(tmp_path):
    p = only(project(tmp_path, {"hardware/hw.yaml": HARDWARE.replace("79.6 GiB", "96 GiB")}))
    assert where(p) == ("usable-gt-marketed", "hardware/hw.yaml", 4)



def test_a_bare_memory_number_is_bytes_and_below_1_gib_is_a_dropped_unit(tmp_path):
    # trial7 finding B: the MiB dropped from nvidia-smi's 32607 MiB reads as 32,607 bytes (fit: 0.00 GiB)
    p = only(project(tmp_path, {"hardware/hw.yaml": HARDWARE.replace("79.6 GiB", "{value: 32607}")}))
    assert where(p) == ("implausible-memory", "hardware/hw.yaml", 4)
    assert "32,607 bytes" in p["message"]
    assert p["hint"].endswith("did you mean 32607 MiB (31.84 GiB)?")   # 32607 × 2^20 / 2^30 = 31.843
    p = only(project(tmp_path, {"hardware/hw.yaml": HARDWARE.replace("80 GB", "80")}))
    assert where(p) == ("implausible-memory", "hardware/hw.yaml", 3)
    assert p["hint"].endswith("did you mean 80 GiB or 80 GB?")
    # the bound is 1 GiB exactly: 1024 MiB passes, 1023 MiB does not (a 1 GiB device at 100 GB/s: 3.35 TB/s would
    # sweep 1 GiB 3,120 times a second, a hardware-implausible problem of its own)
    r = validate(project(tmp_path, {"hardware/hw.yaml": HARDWARE.replace("79.6 GiB", "1024 MiB")
                                    .replace("3.35 TB/s", "100 GB/s")}))
    assert r.exit_code == 0, r.output
    assert where(only(project(tmp_path, {"hardware/hw.yaml": HARDWARE.replace("79.6 GiB", "1023 MiB")}))) == \
        ("implausible-memory", "hardware/hw.yaml", 4)


# --- reporting ----------------------------------------------------------------------------------

def broken(tmp_path) -> Path:
    """Four problems in three files, written out of order."""
    return project(tmp_path, {
        "registry/models/m.yaml": MODEL.replace("layers: 2", "layers: 3").replace("    kv_heads: 8", "    kv_head: 8"),
        "registry/models/b.yaml": MODEL.replace("id: m", "id: b").replace("count: 2", "count: 0"),
        "hardware/hw.yaml": HARDWARE.replace("79.6 GiB", "79.6 Gb"),
    })


def test_all_problems_reported_at_once_and_sorted(tmp_path):
    found = problems(broken(tmp_path))
    # The layer-sum check needs valid groups, so m.yaml reports the typo; b.yaml its zero count.
    assert [where(p) for p in found] == [
        ("bad-unit", "hardware/hw.yaml", 4),
        ("not-positive", "registry/models/b.yaml", 8),
        ("unknown-key", "registry/models/m.yaml", 9),
    ]


def test_text_format_one_block_per_problem_and_a_count(tmp_path):
    r = validate(broken(tmp_path))
    assert r.exit_code == 1
    assert r.stdout == ""  # problems go to stderr in text form
    lines = r.stderr.splitlines()
    assert lines[0] == "hardware/hw.yaml:4:1: bad-unit: memory_usable.value: cannot read '79.6 Gb' as a bytes quantity"
    assert lines[1] == "    hint: units are case-sensitive: write 79.6 GB"
    assert lines[-1] == "3 problems found."


def test_json_format(tmp_path):
    r = validate(broken(tmp_path), "--format", "json")
    assert r.exit_code == 1
    found = json.loads(r.stdout)
    assert set(found[0]) == {"file", "line", "col", "key", "code", "message", "hint", "related"}
    assert found[1] == {"file": "registry/models/b.yaml", "line": 8, "col": 5, "key": "layer_groups.0.count",
                        "code": "not-positive", "message": "Input should be greater than 0 (got 0)", "hint": "", "related": ""}


def test_json_format_when_valid_is_an_empty_list(tmp_path):
    r = validate(project(tmp_path), "--format", "json")
    assert (r.exit_code, json.loads(r.stdout)) == (0, [])


def test_github_format(tmp_path):
    r = validate(broken(tmp_path), "--format", "github")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    assert lines[1] == ("::error file=registry/models/b.yaml,line=8,col=5,title=kvreg not-positive::"
                        "not-positive: layer_groups.0.count: Input should be greater than 0 (got 0)")


def test_github_format_keeps_a_multiline_hint_on_one_line(tmp_path):
    r = validate(model(tmp_path, "layers: 2\n", "layers: [2\n"), "--format", "github")
    (line,) = r.stdout.splitlines()
    assert line.startswith("::error file=registry/models/m.yaml,line=3,col=12,title=kvreg yaml-syntax::")
    assert "near line 3:%0A   1 | id: m%0A" in line


def test_missing_project_folder_is_a_usage_error(tmp_path):
    # A mistyped --project must not validate an empty registry and report success.
    r = CliRunner().invoke(main, ["validate", "--project", str(tmp_path / "nope")])
    assert r.exit_code == 2
    assert "does not exist" in r.output


def test_unknown_format_is_a_usage_error(tmp_path):
    r = validate(project(tmp_path), "--format", "yaml")
    assert r.exit_code == 2
