"""A speculative-decoding draft head (models.draft_for) is refused by plan and fit, naming its target.

trial7 finding F: ``kvreg plan --model eagle-llama3.1-instruct-8b`` sized the one-layer EAGLE head alone
(capacity 2,327 on one H100), a model nobody serves without its target.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import kvreg
from kvreg.cli import main

ROOT = Path(__file__).resolve().parents[1]
DRAFT, TARGET = "eagle-llama3.1-instruct-8b", "llama-3.1-8b"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("draft")
    # the target's entry states only what its shipped config cannot say: the config comes with it (configfill.py)
    for rel in (f"registry/models/{TARGET}.yaml", f"registry/models/{TARGET}.config.json",
                f"registry/models/{DRAFT}.yaml", "hardware/h100-sxm-80gb.yaml", "registry/engines/first-principles.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    return root


def test_the_registry_marks_its_draft_heads(con):
    rows = con.execute("SELECT model_id, draft_for FROM models WHERE draft_for IS NOT NULL ORDER BY 1").fetchall()
    assert rows == [(DRAFT, TARGET), ("qwen3.6-27b-mtp", "qwen3.6-27b")]
    # each is the draft of an observed served set (vllm-log-12, vllm-log-26): the same pairing
    pairs = con.execute("SELECT t.model_id, d.model_id FROM served_models t JOIN served_models d USING (served_id)"
                        " WHERE t.role = 'target' AND d.role = 'draft' ORDER BY 2").fetchall()
    assert sorted({(d, t) for t, d in pairs}) == rows


def test_fit_refuses_a_draft_head_and_names_its_target(project):
    with pytest.raises(kvreg.UsageError) as exc:
        kvreg.fit(DRAFT, "h100-sxm-80gb", context="8Ki", project=project)
    msg = str(exc.value)
    assert f"{DRAFT} is a speculative-decoding draft head for {TARGET}" in msg
    assert f"kvreg fit {TARGET} HARDWARE --num-speculative-tokens N" in msg


def test_plan_refuses_a_draft_head_and_the_target_still_plans(project):
    with pytest.raises(kvreg.UsageError, match=f"draft head for {TARGET}.*kvreg plan --model {TARGET}"):
        kvreg.plan(DRAFT, users=100, context="8Ki", tpot_ms=50, project=project)
    r = kvreg.plan(TARGET, users=100, context="8Ki", tpot_ms=50, project=project)
    assert r.feasible and r.feasible[0]["model_id"] == TARGET


def test_the_cli_refusal_is_a_usage_error_without_a_traceback(project):
    r = CliRunner().invoke(main, ["plan", "--project", str(project), "--model", DRAFT, "--users", "100",
                                  "--context", "8Ki", "--tpot-ms", "50", "--hardware", "h100-sxm-80gb"])
    assert r.exit_code == 2, r.output
    assert f"draft head for {TARGET}" in r.output and "Traceback" not in r.output


def test_a_report_listing_a_draft_head_is_refused_by_name_at_its_line(project, tmp_path):
    import yaml

    root = tmp_path / "proj"
    shutil.copytree(project, root)
    doc = {"id": "drafts", "title": "Drafts", "period": "test", "models": [TARGET, DRAFT],
           "hardware": ["h100-sxm-80gb"], "engines": ["first-principles"], "weights_dtypes": ["bf16"],
           "kv_dtypes": ["bf16"], "tp": [1], "contexts": ["8Ki"],
           "workload": {"users": 100, "context": "8Ki", "tpot_ms": 50}}
    (root / "reports").mkdir()
    (root / "reports" / "drafts.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    r = CliRunner().invoke(main, ["validate", "--project", str(root)])
    assert r.exit_code == 1, r.output
    (line,) = [ln for ln in r.output.splitlines() if "report-draft-head" in ln]
    lineno = int(line.split(":")[1])
    assert (root / "reports" / "drafts.yaml").read_text().splitlines()[lineno - 1] == f"- {DRAFT}"
    assert (f"report lists model '{DRAFT}', a speculative-decoding draft head for '{TARGET}' (draft_for)" in line
            and f"list the target '{TARGET}' instead" in r.output)
    # the target alone is a valid report
    doc["models"] = [TARGET]
    (root / "reports" / "drafts.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    r = CliRunner().invoke(main, ["validate", "--project", str(root)])
    assert r.exit_code == 0, r.output
