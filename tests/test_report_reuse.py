"""`kvreg report` reuses the project's up-to-date database (.kvreg/kvreg.duckdb) instead of validating and
building again (issue 12 item 7: the Q4 2026 HTML 1.4 s CPU less), and rebuilds — validating — once an input changed."""

from __future__ import annotations

import os

import pytest
import yaml

from tests.report_tools import copy_project

SMALL = dict(id="small", title="small", period="test", models=["llama-3.1-8b"], hardware=["h100-sxm-80gb"],
             contexts=["8Ki"], workload={"users": 10, "context": "8Ki"})


def test_second_report_reuses_the_database_and_a_change_rebuilds_it(tmp_path, monkeypatch):
    from kvreg.problems import KvregError
    from kvreg.report.make import render

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")   # the generated-at minute, fixed for the comparison

    root = copy_project(tmp_path / "proj")
    (root / "reports" / "small.yaml").write_text(yaml.safe_dump(SMALL, sort_keys=False))
    said: list[str] = []
    first = render(root, "small", ["html"], charts=False, progress=said.append)["html"]
    db = root / ".kvreg" / "kvreg.duckdb"
    assert db.is_file() and any(m.startswith("validating") for m in said)
    built = db.stat().st_mtime_ns
    said.clear()
    assert render(root, "small", ["html"], charts=False, progress=said.append)["html"] == first
    assert db.stat().st_mtime_ns == built and not any(m.startswith("validating") for m in said)
    # an entry changed after the build: validated again, its problem reported, nothing reused
    bad = root / "hardware" / "h100-sxm-80gb.yaml"
    bad.write_text(bad.read_text().replace("hbm_bytes:", "hbm_bytez:", 1) if "hbm_bytes:" in bad.read_text()
                   else bad.read_text() + "\nnot_a_key: 1\n")
    os.utime(bad, ns=(built + 10**9, built + 10**9))
    with pytest.raises(KvregError) as err:
        render(root, "small", ["html"], charts=False)
    assert any(p.file == "hardware/h100-sxm-80gb.yaml" for p in err.value.problems)


def test_unknown_report_with_a_reused_database_names_the_known_ones(tmp_path):
    from kvreg.problems import KvregError
    from kvreg.report.make import render

    root = copy_project(tmp_path / "proj")
    (root / "reports" / "small.yaml").write_text(yaml.safe_dump(SMALL, sort_keys=False))
    render(root, "small", ["html"], charts=False)
    with pytest.raises(KvregError) as err:
        render(root, "smal", ["html"], charts=False)
    (p,) = err.value.problems
    assert p.code == "unknown-report" and "small" in p.hint


def test_a_project_whose_database_cannot_be_written_is_built_in_memory(tmp_path):
    from kvreg.report.make import render

    root = copy_project(tmp_path / "proj")
    (root / "reports" / "small.yaml").write_text(yaml.safe_dump(SMALL, sort_keys=False))
    (root / ".kvreg").write_text("not a folder")   # connect_path: cannot-write-db
    said: list[str] = []
    page = render(root, "small", ["html"], charts=False, progress=said.append)["html"].decode()
    assert "Llama 3.1 8B" in page and any("in memory" in m for m in said)
    assert (root / ".kvreg").read_text() == "not a folder"
