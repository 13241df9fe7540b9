"""The sources appendix is generated from the provenance view (issue 12 leftovers, view 005): every source a
number of a shown model, hardware or engine entry cites appears beside that entry, and a source an entry
lists but no number cites does not."""

from __future__ import annotations

import html as htmllib
import re

import pytest
import yaml

from tests.report_tools import copy_project

REPORT = dict(id="sources", title="sources", period="test", models=["gpt-oss-120b", "gemma-4-31b"],
              hardware=["mi300x", "mi325x"], engines=["first-principles", "vllm-0.33"], weights_dtypes=["fp8"],
              kv_dtypes=["fp8"], tp=[1, 2], contexts=["32Ki"],
              workload={"users": 200, "context": "32Ki", "tpot_ms": 50})
UNCITED = {"id": "uncited_note", "title": "a page listed in the entry that backs none of its numbers"}


def _cited(node) -> set[str]:
    """Every `source:` value written anywhere in an entry's YAML, and every `field_sources` key."""
    out: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "source" and isinstance(v, str):
                out.add(v)
            elif k == "field_sources" and isinstance(v, dict):
                out |= set(v)
            elif k != "sources":
                out |= _cited(v)
    elif isinstance(node, list):
        for v in node:
            out |= _cited(v)
    return out


@pytest.fixture(scope="module")
def appendix(tmp_path_factory):
    from kvreg.registry import load_registry
    from kvreg.report.make import render

    root = copy_project(tmp_path_factory.mktemp("sources") / "proj")
    (root / "reports" / "sources.yaml").write_text(yaml.safe_dump(REPORT, sort_keys=False))
    hw = root / "hardware" / "mi325x.yaml"
    data = yaml.safe_load(hw.read_text())
    data["sources"].append(UNCITED)
    hw.write_text(yaml.safe_dump(data, sort_keys=False))
    page = render(root, "sources", ["html"], charts=False)["html"].decode()
    sec = page[page.index('<section id="sources">'):]
    sec = sec[:sec.index("</section>")]
    shown = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", sec, re.S):
        cells = re.findall(r"<td>(.*?)</td>", tr, re.S)
        if not cells:
            continue  # the header row
        kind, entry_id = re.sub(r"<[^>]+>", "", cells[0]).split()
        shown[(kind, entry_id)] = (set(re.findall(r"\[([^\]]+)\]", htmllib.unescape(cells[2]))),
                                   re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", "", cells[2]))))
    reg = load_registry(root)
    files = {(kind, i): root / reg.entries[kind][i].doc.file
             for kind, ids in (("model", REPORT["models"]), ("hardware", REPORT["hardware"]),
                               ("engine", REPORT["engines"])) for i in ids}
    return shown, files


def test_every_source_a_shown_entry_cites_appears(appendix):
    shown, files = appendix
    assert set(shown) == set(files)
    for key, path in files.items():
        cited = _cited(yaml.safe_load(path.read_text()))
        if key[0] == "model" and path.with_name(path.stem + ".config.json").exists():
            cited.add("shipped-config")
        missing = cited - shown[key][0]
        assert not missing, (key, missing)   # (a source only a peak the report never computes in cites: below)


def test_a_listed_source_no_number_cites_is_left_out(appendix):
    shown, _ = appendix
    ids, text = shown[("hardware", "mi325x")]
    assert UNCITED["id"] not in ids
    # each source names the fields that cite it
    assert "[cliff_amd]" in text and "price.rental.0.usd_per_hour" in text
    assert re.search(r"\[mle_accel\].*memory_marketed, bandwidth", text)


def test_shipped_config_numbers_name_their_file(appendix):
    shown, _ = appendix
    ids, text = shown[("model", "gpt-oss-120b")]
    assert "shipped-config" in ids
    assert "config.json shipped beside the entry" in text and "(shipped-config)" in text


def test_a_peak_at_a_precision_the_report_never_computes_in_is_no_row(con):
    """The orphan row of the Q4 2026 appendix: rtx-pro-6000 states one peak, nvfp4 (source topcpu), while the report
    sizes bf16 and fp8 weights, which compute in bf16 there (hardware_peaks: no fp8 peak stated, so no fp8 math;
    kvreg/sql/120) — no figure read it.  A peak the listed precisions do compute in stays (b200: bf16, fp8)."""
    from kvreg.report.context import rows

    got = {(r.entry_id, r.source_id): r.fields for r in rows(con, "sources", {"report": "2026-q4"})
           if r.kind == "hardware"}
    peaks = dict(con.execute("SELECT weights_dtype, compute_dtype FROM hardware_peaks WHERE hardware_id = 'rtx-pro-6000'"
                             " AND weights_dtype IN ('bf16', 'fp8')").fetchall())
    assert peaks == {"bf16": "bf16", "fp8": "bf16"}
    assert ("rtx-pro-6000", "topcpu") not in got
    assert ("rtx-pro-6000", "gpuname") in got       # its other sources stay, with their fields
    assert got[("b200", "mle_accel")] == ["memory_marketed", "peak_flops.bf16", "peak_flops.fp8"]
