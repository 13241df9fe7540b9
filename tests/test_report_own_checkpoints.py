"""A report sizes each model on its own checkpoint too, and marks rows sized on derived weights (issue 12).

Worked by hand from the entries: gpt-oss-120b ships only as MXFP4 (registry/models/gpt-oss-120b.yaml `dtype: mxfp4`,
one checkpoint of 65.9651 GiB = 70,829,486,794 B, vLLM's logged load); at bf16 or fp8 no checkpoint exists and the
weights are derived, params_total × bytes per element = 116.8e9 × 1 B at fp8.  A definition listing [bf16, fp8]
therefore also sizes gpt-oss-120b at mxfp4 (a per-model addition: Llama 3.1 8B, which ships as bf16, gets no mxfp4
row, nor its third-party int4/int8 checkpoints), unless it sets ``own_checkpoints: false``.  Llama 3.1 8B's bf16
is a listed checkpoint (published), its fp8 is not (derived).
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.report_tools import copy_project

LISTS = dict(models=["gpt-oss-120b", "llama-3.1-8b"], hardware=["mi355x", "h100-sxm-80gb"], engines=["vllm-0.33"],
             weights_dtypes=["bf16", "fp8"], kv_dtypes=["fp8"], tp=[1, 2], contexts=["32Ki"],
             workload={"users": 200, "context": "32Ki", "tpot_ms": 50})
MXFP4_BYTES = round(65.9651 * 2**30)   # 70,829,486,794
FP8_DERIVED = 116.8e9 * 1


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("ownckpt") / "proj")
    for rid, extra in (("own", {}), ("listed", {"own_checkpoints": False})):
        (root / "reports" / f"{rid}.yaml").write_text(yaml.safe_dump(
            {"id": rid, "title": rid, "period": "test", **LISTS, **extra}, sort_keys=False))
    return root


@pytest.fixture(scope="module")
def con(project):
    import duckdb

    from kvreg.build import populate
    from kvreg.registry import load_registry

    c = duckdb.connect(":memory:")
    populate(c, load_registry(project))
    return c


def _weights(con, rid):
    return {(m, w): (listed, published) for m, w, listed, published in con.execute(
        "SELECT model_id, weights_dtype, listed, published FROM report_weights WHERE report_id = ?", [rid]).fetchall()}


def test_each_model_gets_its_own_checkpoint_precision_only(con):
    assert _weights(con, "own") == {
        ("gpt-oss-120b", "bf16"): (True, False), ("gpt-oss-120b", "fp8"): (True, False),
        ("gpt-oss-120b", "mxfp4"): (False, True),     # its own dtype, not in the list: added
        ("llama-3.1-8b", "bf16"): (True, True), ("llama-3.1-8b", "fp8"): (True, False)}
    # own_checkpoints: false — the list alone, the published flags unchanged
    assert _weights(con, "listed") == {k: v for k, v in _weights(con, "own").items() if v[0]}


def _recommended(con, rid):
    from kvreg.report.context import rank_options, scope_from_items

    rank_options(con, rid, scope_from_items(con, rid))
    cur = con.execute("SELECT o.*, c.weights_bytes_per_rank, c.weights_basis FROM report_options o"
                      " JOIN report_capacity c USING (model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp,"
                      " context_tokens) WHERE o.rank_in_model = 1 AND o.meets")
    cols = [d[0] for d in cur.description]
    return {r[0]: dict(zip(cols, r)) for r in cur.fetchall()}, con.execute(
        "SELECT DISTINCT model_id, weights_dtype FROM report_plans").fetchall()


def test_gpt_oss_is_sized_on_its_mxfp4_checkpoint(con):
    rec, planned = _recommended(con, "own")
    g = rec["gpt-oss-120b"]
    assert g["weights_dtype"] == "mxfp4" and g["weights_published"] and g["weights_basis"] == "checkpoint"
    assert g["weights_bytes_per_rank"] * g["tp"] == pytest.approx(MXFP4_BYTES, rel=0.02)   # replicated parts aside
    assert ("llama-3.1-8b", "mxfp4") not in planned and ("gpt-oss-120b", "mxfp4") in planned
    rec_l, planned_l = _recommended(con, "listed")
    g = rec_l["gpt-oss-120b"]
    assert g["weights_dtype"] == "fp8" and not g["weights_published"] and g["weights_basis"] == "derived"
    assert g["weights_bytes_per_rank"] * g["tp"] == pytest.approx(FP8_DERIVED, rel=0.02)
    assert all(w != "mxfp4" for _, w in planned_l)
    # the checkpoint needs fewer or as many devices as the derived fp8 weights (65.97 GiB against 108.78 GiB)
    assert rec["gpt-oss-120b"]["devices"] <= g["devices"]


def _summary_rows(html: str) -> dict[str, str]:
    i = html.index('<table class="data summary">')
    table = html[i:html.index("</table>", i)]
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        out[re.sub(r"<[^>]+>", "", cells[0]).strip()] = cells[2]
    return out


@pytest.mark.parametrize("rid", ["own", "listed"])
def test_summary_marks_derived_weights(project, con, rid):
    from kvreg.report.make import render

    rec, _ = _recommended(con, rid)
    html = render(project, rid, ["html"], charts=False)["html"].decode()
    cells = _summary_rows(html)
    names = {r["model_name"]: r for r in rec.values()}
    assert set(cells) == set(names)
    for name, cell in cells.items():
        assert ("‡" in cell) == (not names[name]["weights_published"]), (name, cell)
    # gpt-oss: unmarked on its own mxfp4, marked on the derived fp8 when the definition turns its checkpoint off
    assert ("‡" in cells["gpt-oss-120b"]) == (rid == "listed")
    assert ('id="derived-weights"' in html) == any(not r["weights_published"] for r in rec.values())
