"""What changed since the previous report (issue 12 item 5): a report naming `previous:` opens with the
recommendations that flipped and why, new devices and engine releases, price changes and registry
corrections, all from `kvreg diff`'s comparison (kvreg/report/changes.py)."""

from __future__ import annotations

import html as htmllib
import re
import subprocess

import pytest
import yaml

from kvreg.problems import KvregError
from tests.report_tools import copy_project

# Llama 4 Scout at 200 users × 32Ki on vLLM 0.33, fp8, at the MI300X × vLLM efficiency fitted to AMD's pages
# (MI325X derived from it): one TP-8 MI300X replica (the TPOT allows 240) = 8 × $1.50 = $12.00/h beats the
# MI325X's 8 devices (2 TP-4 replicas of 112 within the TPOT) = 8 × $1.95 = $15.60/h.  At $1.40 per MI325X-hour
# the MI325X option costs 8 × $1.40 = $11.20/h < $12.00 and the recommendation flips.
REPORT = {"id": "changes", "title": "changes", "period": "test", "models": ["llama-4-scout-17b-16e"],
          "hardware": ["mi300x", "mi325x"], "engines": ["vllm-0.33"], "weights_dtypes": ["fp8"],
          "kv_dtypes": ["fp8"], "tp": [4, 8], "contexts": ["32Ki"],
          "workload": {"users": 200, "context": "32Ki", "tpot_ms": 50}}
OLD_PRICE = "{usd_per_hour: {value: 1.95, source: cliff_amd}"
NEW_PRICE = "{usd_per_hour: {value: 1.4, source: cliff_amd}"


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A git repository: commit 1 (tag q3) the shipped registry; the working tree lowers the MI325X price."""
    root = copy_project(tmp_path_factory.mktemp("changes") / "proj")
    (root / "reports" / "changes.yaml").write_text(yaml.safe_dump(REPORT, sort_keys=False))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "q3")
    _git(root, "tag", "q3")
    hw = root / "hardware" / "mi325x.yaml"
    assert OLD_PRICE in hw.read_text()
    hw.write_text(hw.read_text().replace(OLD_PRICE, NEW_PRICE))
    return root


def _render(root, previous):
    from kvreg.report.make import render

    (root / "reports" / "changes.yaml").write_text(yaml.safe_dump(dict(REPORT, previous=previous), sort_keys=False))
    return render(root, "changes", ["html"], charts=False)["html"].decode()


@pytest.fixture(scope="module")
def section(project):
    page = _render(project, "q3")
    body = page[page.index('<section id="changes">'):]
    return page, body[:body.index("</section>")]


def test_the_section_opens_the_body(section):
    page, _ = section
    assert page.index('<section id="changes">') < page.index('<section id="summary">')
    assert '<a href="#changes">What changed since q3</a>' in page


def test_the_price_change_and_the_flip_with_its_reason(section):
    _, sec = section
    flips = [_text(li) for li in re.findall(r'<li class="flip">(.*?)</li>', sec, re.S)]
    assert len(flips) == 1
    # Both picks are 8 devices, 8 × $1.50 = $12.00 before, 8 × $1.40 = $11.20 on the MI325X after the cut; of the
    # equal-cost 8-device options (2 × TP 4 or 1 × TP 8) the more headroom ranks first (ranked_plans, issue 12):
    # 1 × TP 8, one replica holding every user
    assert flips[0].startswith("Llama 4 Scout 17B-16E Instruct: 8 × mi300x (TP 8, fp8 / fp8, vllm-0.33)"
                               " → 8 × mi325x (TP 8, fp8 / fp8, vllm-0.33).")
    # the reason is the diff's key-level change, with where it is written
    assert re.search(r"Because hardware mi325x: price\.rental\.0\.usd_per_hour(\.value)? 1\.95 → 1\.4"
                     r" \(hardware/mi325x\.yaml:\d+\)\.", flips[0]), flips[0]
    prices = _text(sec[sec.index("Price changes"):sec.index("Registry corrections")])
    assert re.search(r"hardware mi325x: price\.rental\.0\.usd_per_hour(\.value)? 1\.95 → 1\.4", prices), prices
    assert "None to the listed models, hardware and engines." in _text(sec[sec.index("Registry corrections"):])
    assert "None among the listed hardware and engines." in _text(sec)


def test_the_summary_is_the_new_recommendation(section):
    page, _ = section
    summary = page[page.index('<section id="summary">'):]
    # "R replicas × TP t = G devices", the words of `kvreg plan`'s Best line
    assert "<strong>Llama 4 Scout 17B-16E Instruct:</strong> mi325x, 1 replica × TP 8 = 8 devices (" in summary


def test_a_stamp_with_dirty_names_the_same_commit(project):
    sha = _git(project, "rev-parse", "q3")
    page = _render(project, f"{sha}-dirty")
    assert f"What changed since {sha}-dirty" in page
    assert 'class="flip"' in page


def test_a_bad_previous_is_a_problem_naming_the_key(project):
    with pytest.raises(KvregError) as exc:
        _render(project, "no-such-revision")
    (p,) = exc.value.problems
    assert (p.code, p.key) == ("bad-previous", "previous")
    assert p.file.endswith("changes.yaml") and p.line > 0
