"""Field-level provenance (issue 14 item 2): every number has a source and a confidence, checked."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from kvreg.problems import KvregError
from kvreg.registry import load_registry
from tests.conftest import ROOT
from tests.registry_factory import SOURCE, model_entry, write_project

GEOMETRY = {"fixture": ["layers", "hidden_size", "layer_groups"]}
GROUPS = [{"kind": "full", "count": 2, "kv_heads": 8, "head_dim": 128}]


def _model(**extra):
    e = model_entry("m", 2, GROUPS, field_sources=GEOMETRY,
                    native_context={"value": 131072, "source": "fixture"},
                    params_total={"value": 8e9, "source": "fixture"})
    e.update(extra)
    return e


def _problems(tmp_path, entry):
    write_project(tmp_path, models={"m": entry})
    with pytest.raises(KvregError) as err:
        load_registry(tmp_path)
    return err.value.problems


def test_every_shipped_number_has_a_source_with_a_reference_and_a_confidence(con):
    n, sourced, referenced, conf = con.execute(
        "SELECT count(*), count(source_id), count(coalesce(url, title)), count(confidence) FROM provenance").fetchone()
    assert n >= 1400                     # 1,471 numbers in 135 fact entries when this was written
    assert sourced == referenced == conf == n
    kinds = {r[0] for r in con.execute("SELECT DISTINCT kind FROM provenance").fetchall()}
    assert kinds == {"model", "hardware", "engine", "observation", "throughput"}


def test_model_geometry_names_its_source(con):
    row = con.execute("SELECT value, source_id, basis, url FROM provenance "
                      "WHERE entry_id = 'llama-3.1-8b' AND field = 'layer_groups.0.kv_heads'").fetchone()
    assert row[0] == 8 and row[1] in ("config", "shipped-config") and row[2] in ("default", "shipped-config")
    assert row[3]


def test_fixture_with_sourced_fields_is_valid(tmp_path):
    write_project(tmp_path, models={"m": _model()})
    load_registry(tmp_path)


def test_a_bare_number_outside_field_sources_is_refused(tmp_path):
    probs = _problems(tmp_path, _model(vocab_size=128256))
    assert [(p.code, p.key, p.file) for p in probs] == [("unsourced-number", "vocab_size", "registry/models/m.yaml")]
    assert probs[0].line > 1 and "field_sources" in probs[0].hint


def test_a_measure_without_source_is_refused(tmp_path):
    probs = _problems(tmp_path, _model(native_context={"value": 131072, "confidence": "read"}))
    assert [(p.code, p.key) for p in probs] == [("unsourced-number", "native_context")]


def test_a_misspelt_field_sources_prefix_is_refused(tmp_path):
    probs = _problems(tmp_path, _model(field_sources={"fixture": ["layers", "hidden_size", "layer_group"]}))
    assert [p.code for p in probs] == ["field-source-unused"]
    assert "layer_group" in probs[0].message


def test_field_sources_must_name_a_source(tmp_path):
    probs = _problems(tmp_path, _model(field_sources={"nowhere": ["layers", "hidden_size", "layer_groups"]}))
    assert [p.code for p in probs] == ["unknown-source"]


def test_an_inferred_observation_setting_is_estimated(con):
    # vllm-log-01: max_model_len was read off the 'Maximum concurrency for N tokens' line by a person
    row = con.execute("SELECT confidence, confidence_basis, note FROM provenance "
                      "WHERE entry_id = 'vllm-log-01' AND field = 'settings.max_model_len'").fetchone()
    assert row[:2] == ("estimated", "inferred") and "Maximum concurrency" in row[2]
    row = con.execute("SELECT confidence, source_id FROM provenance "
                      "WHERE entry_id = 'vllm-log-01' AND field = 'logged.num_gpu_blocks'").fetchone()
    assert row == ("measured", "log")


def test_validate_stats_prints_the_provenance_count():
    r = CliRunner().invoke(main, ["validate", "--stats", "--project", str(ROOT)])
    assert r.exit_code == 0, r.output
    assert "with a source: " in r.output and "(100.0 %)" in r.output
    assert "unsourced" in r.output
    assert SOURCE[0]["id"] == "fixture"


def test_validate_stats_in_json_carries_the_counts():
    # trial10: `validate --stats --format json` printed [] and dropped the counts
    import json

    text = CliRunner().invoke(main, ["validate", "--stats", "--project", str(ROOT)]).output
    r = CliRunner().invoke(main, ["validate", "--stats", "--format", "json", "--project", str(ROOT)])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    total = got["provenance"][-1]
    assert got["problems"] == [] and total["kind"] == "total" and total["unsourced"] == 0
    assert f"{got['entries']:,} entries valid." in text and f"total  {total['entries']:,}".split()[1] in text
    assert f"with a source: {total['numbers']:,} of {total['numbers']:,} (100.0 %)" in text


def test_validate_stats_headline_and_table_count_the_same_entries():
    # The headline counts every entry validated (reports included); the table the fact entries whose numbers
    # need sources; the line under it adds the report definitions so the two agree.
    import re

    r = CliRunner().invoke(main, ["validate", "--stats", "--project", str(ROOT)])
    assert r.exit_code == 0, r.output
    headline = int(re.match(r"([\d,]+) entries valid\.", r.output).group(1).replace(",", ""))
    total = int(re.search(r"^total +([\d,]+) ", r.output, re.M).group(1).replace(",", ""))
    reports = len(list((ROOT / "reports").glob("*.yaml")))
    assert reports >= 1 and total + reports == headline
    assert f"entries: {total:,} fact entries above + {reports:,} report (definitions: no facts to source) = " \
           f"{headline:,} validated" in r.output

