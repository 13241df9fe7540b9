"""The report states the efficiencies its plans used (speed_efficiency), and flags a call resting on a guess.

Before, the assumptions table printed the hardware entries' stated figure (0.45 on every GPU) while the plans
divided by the fitted speed_efficiency (e.g. MI300X × vLLM 0.23, measured): the reader saw the wrong factor.
"""

from __future__ import annotations

import html as htmllib
import re

import duckdb
import pytest
import yaml

from tests.report_tools import copy_project

REPORT = {
    "id": "eff", "title": "efficiency evidence", "period": "test",
    "models": ["llama-3.1-8b"], "hardware": ["mi300x", "mi355x"], "engines": ["vllm-0.33"],
    "weights_dtypes": ["bf16"], "kv_dtypes": ["fp8"], "tp": [1], "contexts": ["32Ki"],
    # 200 users at 32Ki and 50 ms TPOT: decode speed binds on both devices (the Q4 workload)
    "workload": {"users": 200, "context": "32Ki", "tpot_ms": 50, "hours_per_month": 730},
}


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment)))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    from kvreg.report.make import render

    project = copy_project(tmp_path_factory.mktemp("proj"))
    (project / "reports" / "eff.yaml").write_text(yaml.safe_dump(REPORT, sort_keys=False))
    html = render(project, "eff", ["html"])["html"].decode()
    db = next((project / ".kvreg").glob("*.duckdb"), None)
    return html, project, db


def _efficiencies(project):
    from kvreg.api import connect

    con = connect(project)
    return {r[0]: r[1:] for r in con.execute(
        "SELECT hardware_id, bandwidth_efficiency, bandwidth_level, evidence FROM speed_efficiency "
        "WHERE engine_family = 'vllm' AND hardware_id IN ('mi300x', 'mi355x')").fetchall()}


def test_assumptions_show_the_fitted_efficiency_the_plans_used(rendered):
    html, project, _ = rendered
    eff = _efficiencies(project)
    start = html.index("<h3>Efficiency and speed</h3>")
    section = _text(html[start:html.index("</section>", start)])
    for hw, (bw, level, evidence) in eff.items():
        assert evidence in section
        assert f"{round(bw * 100)} %" in section or f"{bw * 100:.1f} %" in section
    # the MI300X is measured under vLLM, the MI355X rests on its entry's stated figure
    assert eff["mi300x"][1] == "hardware" and eff["mi355x"][1] == "stated"
    # and the stated one names the same vendor's measured device beside it
    assert f"mi300x {eff['mi300x'][0]:.2f} (n=" in section


def test_a_tpot_bound_call_on_a_stated_efficiency_is_flagged(rendered):
    html, project, _ = rendered
    eff = _efficiencies(project)
    summary = html[html.index('<section id="summary">'):]
    row = _text(re.search(r"<tr><td>Llama 3.1 8B</td>.*?</tr>", summary, re.S).group(0))
    assert "decode speed (TPOT)" in row
    if "mi355x" in row:      # recommended on the guess: the dagger and the footnote say so, with the evidence
        assert "†" in row
        note = _text(summary[summary.index("† Sized on decode speed"):summary.index("</p>", summary.index("† Sized"))])
        assert eff["mi355x"][2] in note and f"mi300x {eff['mi300x'][0]:.2f}" in note
    else:                    # recommended on the measured device: no flag
        assert "†" not in row
    decision = _text(re.search(r'<li id="decision-llama-3.1-8b">.*?</li>', summary, re.S).group(0))
    picked = "mi355x" if "mi355x" in row else "mi300x"
    assert f"Decode speed is sized at {eff[picked][2]}" in decision
