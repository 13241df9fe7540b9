"""Cross-entry checks of throughput entries the new-user trial found missing (kvreg/checks/203_, 204_)."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kvreg.cli import main
from tests.registry_factory import engine_entry, hardware_entry, write_project

RUN = {"hardware": "hw", "model": "m", "weights_dtype": "bf16", "tp": 1, "input_tokens": 1024, "output_tokens": 128,
       "concurrency": 32, "output_tok_per_s": 1000}


def _entry(eid: str, measurements: list[dict], engine: str = "first-principles", url: str = "https://example.org/a",
           **extra) -> dict:
    e = {"id": eid, "engine": engine, "engine_version": "1", "scenario": "offline", "date": dt.date(2025, 1, 1),
         "sources": [{"id": "page", "title": "a benchmark page", "url": url}],
         "field_sources": {"page": ["measurements"]}, "measurements": measurements}
    return e | extra


def _validate(tmp_path: Path, *entries: dict, engines: dict | None = None) -> list[dict]:
    write_project(tmp_path, models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 8,
                                                                    "head_dim": 128}]}},
                  hardware={"hw": hardware_entry("hw")}, engines=engines or {"first-principles": engine_entry()})
    (tmp_path / "registry/throughput").mkdir(parents=True)
    for e in entries:
        (tmp_path / f"registry/throughput/{e['id']}.yaml").write_text(yaml.safe_dump(e, sort_keys=False))
    r = CliRunner().invoke(main, ["validate", "--project", str(tmp_path), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def test_one_run_written_in_two_entries_names_both_places(tmp_path):
    # b.yaml copies a.yaml's run from the same page (another figure typed: 1010 tok/s); a.yaml's measurement 0 is
    # written on line 17 of a.yaml (yaml.safe_dump's layout: 16 lines of entry fields before the list).
    a = _entry("a", [RUN])
    b = _entry("b", [dict(RUN, concurrency=64), dict(RUN, output_tok_per_s=1010)])
    problems = _validate(tmp_path, a, b)
    (p,) = [p for p in problems if p["code"] == "duplicate-throughput-measurement"]
    assert (p["file"], p["key"]) == ("registry/throughput/b.yaml", "measurements.1")
    first = (tmp_path / "registry/throughput/a.yaml").read_text().splitlines().index("measurements:") + 2
    assert f"registry/throughput/a.yaml:{first} (measurements.0 of a)" in p["message"]
    assert "cite each run's own log" in p["hint"]
    assert len(problems) == 1


def test_a_run_written_twice_in_one_entry_is_a_problem_and_other_runs_are_not(tmp_path):
    twice = _entry("a", [RUN, dict(RUN, tp=2), dict(RUN, request_rate_per_s=4.0), copy.deepcopy(RUN)])
    problems = _validate(tmp_path, twice)
    assert [(p["code"], p["key"]) for p in problems] == [("duplicate-throughput-measurement", "measurements.3")]
    assert "(measurements.0 of a)" in problems[0]["message"]


def test_the_same_settings_from_two_sources_are_two_runs(tmp_path):
    # registry/throughput/llm-ie-sglang-0.4.5-h200-deepseek-r1-30k.yaml: the 50- and 200-prompt runs share every
    # setting kvreg records; each cites its own log (field_sources by measurement), so neither repeats the other.
    e = _entry("a", [RUN, dict(RUN, output_tok_per_s=990)])
    e["sources"] = [{"id": "run50", "title": "50 prompts", "url": "https://example.org/50.log"},
                    {"id": "run200", "title": "200 prompts", "url": "https://example.org/200.log"}]
    e["field_sources"] = {"run50": ["measurements.0"], "run200": ["measurements.1"]}
    assert _validate(tmp_path, e) == []
    # and two entries citing different pages are different runs
    assert _validate(tmp_path / "two", _entry("a", [RUN]), _entry("b", [RUN], url="https://example.org/b")) == []


def test_whole_request_admission_on_a_vllm_release_is_refused_with_the_scheduler_cited(tmp_path):
    vllm = engine_entry("vllm-x", engine="vllm", gpu_memory_utilization=0.9)
    trt = engine_entry("trt-x", engine="trtllm", gpu_memory_utilization=0.9)
    engines = {"first-principles": engine_entry(), "vllm-x": vllm, "trt-x": trt}
    problems = _validate(tmp_path, _entry("v", [RUN], engine="vllm-x", kv_admission="whole_request"),
                         _entry("t", [RUN], engine="trt-x", kv_admission="whole_request", url="https://example.org/t"),
                         _entry("o", [RUN], engine="vllm-x", url="https://example.org/o"), engines=engines)
    (p,) = problems
    assert (p["code"], p["file"], p["key"]) == ("vllm-whole-request-admission", "registry/throughput/v.yaml",
                                                "kv_admission")
    text = (tmp_path / "registry/throughput/v.yaml").read_text().splitlines()
    assert text[p["line"] - 1].startswith("kv_admission:")
    assert "vllm/v1/core/sched/scheduler.py 0.19.0:665" in p["message"] and "on_demand" in p["hint"]
