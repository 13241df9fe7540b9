"""The small-team report (TCO basis, devices that drop out named with the reason) and the unpriced list."""

from __future__ import annotations

import datetime as dt

import html as htmllib
import re

import pytest
import yaml

from tests.registry_factory import SOURCE, engine_entry, hardware_entry, write_project
from tests.report_tools import ROOT


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", "", fragment)))


@pytest.fixture(scope="module")
def small_team():
    from kvreg.report.make import render

    return render(ROOT, "2026-q4-small-team", ["html"])["html"].decode()


def test_tco_basis_is_stated_and_used(small_team):
    text = _text(small_team)
    assert "total cost of ownership: purchase over 4.0 years + power at $0.17/kWh, PUE 1.2" in text
    # Mac Studio: $3,999 ÷ (4 × 8,760 h) + 0.480 kW × 1.2 × $0.17/kWh = $0.1141 + $0.0979 = $0.2121 per hour
    assert "$0.21/h" in text and "$0.11/h purchase + $0.10/h power" in text


def test_every_device_that_drops_out_says_why(small_team):
    drops = [_text(m) for m in re.findall(r"Devices that drop out:(.*?)</li>", small_team, re.S)]
    assert len(drops) == 2                                    # both models lose the RTX 5090
    gemma, qwen = drops
    assert "rtx-5090: the weights alone do not fit the device memory at this TP" in gemma
    # sized on the engine's pool: the bf16 rows (54.7 GB of weights) cannot fit the 32 GB card at all (4
    # configurations: two KV dtypes × two engines).  The engine prices the served FP8 checkpoint by the per-tensor
    # rule: 25.29 GB of fp8 tensors + 5.09 GB of bf16 embeddings and lm_head (248,320 × 5,120 × 2 B × 2) = 30.41 GB,
    # which fits vLLM 0.33's claim (0.92 × the card's CUDA-visible 31.40 GiB, as vLLM logs it on an RTX 5090) but not
    # with its reserve (activation and sampler peak, CUDA graphs, non-torch): no KV pool is left (−1.81 GiB) for the
    # 2 fp8 engine rows.  Under first principles neither: 31.40 GiB − 6.00 GiB reserve − 25.48 GiB of fp8 weights =
    # −0.08 GiB (with the nvidia-smi 32,607 MiB the entry had before, 0.36 GiB was left and one 128Ki sequence did not
    # fit it), so 4 configurations have no pool.
    assert "rtx-5090: the weights alone do not fit the device memory at this TP (4 configurations)" in qwen
    assert ("the weights fit, but with the runtime reserve (activations, CUDA graphs, sampler) no KV pool is left"
            " at this TP (4 configurations") in qwen
    assert "does not fit the KV pool" not in qwen
    # the Mac serves both under first principles, but vLLM runs it only on its CPU backend (no Metal backend), whose
    # KV cache is not the GPU memory model: every vllm-0.33 configuration there drops out, with the code's reason
    for text in (gemma, qwen):
        assert ("m3-ultra-96gb: platform: vllm-0.33 runs m3-ultra-96gb only on its CPU backend (platforms/__init__.py"
                " 0.33.0:193") in text
        assert "vLLM has no Metal backend" in text


def test_the_mac_is_not_recommended_vllm(small_team):
    summary = _text(small_team[small_team.index('id="summary"'):small_team.index('class="model"')])
    # before engine_support the Mac was recommended under vllm-0.33 with fp8 weights, which vLLM cannot run there
    assert not re.search(r"m3-ultra-96gb, [\d,]+ replicas? × TP \d+ = [\d,]+ devices? \([a-z0-9]+ weights /"
                         r" [a-z0-9]+ KV, vllm", summary)
    assert "Under first-principles, with no engine accounting (what the hardware can hold): m3-ultra-96gb" in summary


def test_recommendations_on_the_mac(small_team):
    summary = _text(small_team[small_team.index('id="summary"'):small_team.index('class="model"')])
    # both models get a priced decision on the TCO basis (every listed device has a purchase price and a TDP)
    # (a precision no published checkpoint has reads "derived fp8 weights‡", issue 12)
    for name in ("Gemma 4 31B", "Qwen3.6-27B"):
        assert re.search(rf"{re.escape(name)}: [a-z0-9-]+, [\d,]+ replicas? × TP 1 = [\d,]+ devices? \((derived )?"
                         r"[a-z0-9]+ weights‡? / [a-z0-9]+ KV, [a-z0-9.-]+\): \$[\d,.]+ per hour", summary), name


def test_an_unpriced_device_that_needs_fewer_devices_has_its_own_list(tmp_path):
    """A 192 GB device without a price needs fewer devices than the priced 80 GB one: it is not ranked after it
    as if it cost more; the priced list and the unpriced list are shown apart, each in its order."""
    from kvreg.report.make import render

    src = SOURCE + [{"id": "p", "title": "price list"}]
    price = {"rental": [{"usd_per_hour": {"value": 2.0, "source": "p"}, "provider": "A", "date": dt.date(2026, 5, 1)}]}
    write_project(tmp_path, models={"m": {"layers": 32, "groups": [
                      {"kind": "full", "count": 32, "kv_heads": 8, "head_dim": 128}]}},
                  hardware={"priced-80": hardware_entry("priced-80", price=price, sources=src),
                            "priced-80b": hardware_entry("priced-80b", sources=src, price={"rental": [
                                {"usd_per_hour": {"value": 2.5, "source": "p"}, "provider": "B",
                                 "date": dt.date(2026, 5, 1)}]}),
                            "big-unpriced": hardware_entry("big-unpriced", memory_marketed="192 GB",
                                                           memory_usable="180 GiB")},
                  engines={"first-principles": engine_entry()})
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "r.yaml").write_text(yaml.safe_dump({
        "id": "r", "title": "r", "period": "test", "models": ["m"],
        "hardware": ["big-unpriced", "priced-80b", "priced-80"], "contexts": ["32Ki"],
        "workload": {"users": 100, "context": "32Ki", "tpot_ms": 1000}}, sort_keys=False))
    page = render(tmp_path, "r", ["html"])["html"].decode()
    section = page[page.index("<h3>Options for the workload</h3>"):]
    priced = section[:section.index("</table>")]
    unpriced = section[section.index('id="unpriced-m"'):]
    unpriced = unpriced[:unpriced.index("</table>")]
    def table(fragment):   # rows of cells: [#, hardware, weights / KV, TP, max seqs per replica, devices, ...]
        return [[_text(c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
                for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", fragment, re.S) if "<td" in tr]
    priced_rows, unpriced_rows = table(priced), table(unpriced)
    assert [r[1] for r in priced_rows] == ["priced-80", "priced-80b"]          # cheaper first
    assert [r[1] for r in unpriced_rows] == ["big-unpriced"]
    devices = {r[1]: int(r[5].replace(",", "")) for r in priced_rows + unpriced_rows}
    assert devices["big-unpriced"] < devices["priced-80"] == devices["priced-80b"]
    summary = _text(page[page.index('id="summary"'):page.index('class="model"')])
    n = devices["priced-80"]   # the recommendation is priced: TP 1, so replicas = devices
    assert f"priced-80, {n} replica{'s' if n != 1 else ''} × TP 1 = {n} device{'s' if n != 1 else ''} (" in summary
    assert (f"Without a price on this basis (ranked apart, on device count): {devices['big-unpriced']} × big-unpriced"
            " (TP 1, bf16 / bf16), fewer devices than the recommendation.") in summary


def test_device_style_comes_from_the_id_and_is_unique_in_a_report():
    from kvreg.report.charts import PALETTE, device_style, report_styles

    q4 = ["h100-sxm-80gb", "h200", "b200", "b300", "mi300x", "mi325x", "mi355x", "rtx-pro-6000"]
    styles = report_styles(q4)
    assert len({s["color"] for s in styles.values()}) == len(q4)            # no two devices share a colour
    assert report_styles(list(reversed(q4))) == styles                       # report order does not matter
    assert styles["b200"] == device_style("b200")                            # its hashed colour was free
    assert all(s["color"] in PALETTE for s in styles.values())
    # the same device keeps its style in another report whose hashed colours are free
    assert report_styles(["b200", "rtx-5090"])["b200"] == styles["b200"]


def test_log_axes_have_no_zero_tick_and_name_their_units(small_team):
    svgs = [re.findall(r"<text[^>]*>([^<]*)</text>", svg) for svg in re.findall(r"<svg.*?</svg>", small_team, re.S)]
    log_charts = [[t.strip() for t in labels] for labels in svgs if any("log" in t for t in labels)]
    assert len(log_charts) >= 3                       # capacity (log-log), roofline, cost per million
    for labels in log_charts:
        assert "0" not in labels, labels              # a log axis has no zero
    cost = small_team[small_team.index('id="cost-chart"'):]
    assert "US dollars per million output tokens (log scale)" in cost[:cost.index("</svg>")]


def test_dropouts_agree_with_the_plans_reasons(small_team):
    """Each device that drops out of the small-team report gives the reasons ``kvreg plan`` gives ("Cannot serve it",
    the same ``plans`` reason column through ranked_plans), and no device drops out that the plans serve."""
    from kvreg.api import connect

    report = yaml.safe_load((ROOT / "reports" / "2026-q4-small-team.yaml").read_text())
    con = connect(ROOT)
    rows = con.execute(
        "SELECT model_id, hardware_id, engine_id, feasible, reason FROM ranked_plans(30, 131072, 0.1, models := ?,"
        " hardware := ?, engines := ?, weights_dtypes := ?, kv_dtypes := ?, tps := [1])",
        [report["models"], report["hardware"], report["engines"], report["weights_dtypes"],
         report["kv_dtypes"]]).fetchall()
    drops = dict(zip(report["models"], (_text(m) for m in re.findall(r"Devices that drop out:(.*?)</li>",
                                                                      small_team, re.S))))
    for model in report["models"]:
        text = drops.get(model, "")
        for hw in report["hardware"]:
            mine = [r for r in rows if r[0] == model and r[1] == hw]
            served = {r[2] for r in mine if r[3]}
            # gone everywhere: every reason; gone under one release that does not run there: its platform reason
            why = ({r[4] for r in mine} if not served else
                   {r[4] for r in mine if r[2] not in served and r[4].startswith("platform:")})
            if not why:
                assert f"{hw}:" not in text, (model, hw)
            for reason in why:
                assert f"{hw}: " in text and reason in text, (model, hw, reason)
