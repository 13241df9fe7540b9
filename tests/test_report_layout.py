"""Report layout: the HTML's contents links and collapsible appendix work in Chromium; the PDF has a short
body, no blank page and no text outside the page."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.report_tools import ROOT, ink_fraction, need_tool, pdf_pages

PROBE = """<script>
// Runs in Chromium after load: every contents link must land on an element, and the first appendix
// block must open when its summary is clicked (and show its grid table).
window.addEventListener('load', () => {
  const links = [...document.querySelectorAll('nav#contents a')];
  const missing = links.map(a => a.getAttribute('href').slice(1)).filter(id => !document.getElementById(id));
  const d = document.querySelector('details.appendix-model');
  const wasOpen = d.open;
  d.querySelector('summary').click();
  const table = d.querySelector('table.capacity');
  const visible = table !== null && table.getBoundingClientRect().height > 0;
  const target = document.getElementById(links[1].getAttribute('href').slice(1));
  links[1].click();
  const out = {links: links.length, missing, wasOpen, open: d.open, visible,
               hash: location.hash, targetTop: Math.round(target.getBoundingClientRect().top)};
  document.body.setAttribute('data-probe', JSON.stringify(out));
});
</script>"""


@pytest.fixture(scope="module")
def q4_rendered():
    """The Q4 2026 report's HTML and PDF from one render (one query context, as ``kvreg report`` makes both)."""
    from kvreg.report.make import render

    return render(ROOT, "2026-q4", ["html", "pdf"])


@pytest.fixture(scope="module")
def q4_html(q4_rendered):
    return q4_rendered["html"].decode()


def test_contents_links_and_collapsible_appendix_in_chromium(q4_html, tmp_path):
    exe = need_tool("chromium")
    page = tmp_path / "probe.html"
    page.write_text(q4_html.replace("</body>", PROBE + "</body>"))
    dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'p'}",
                          "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    probe = json.loads(re.search(r"data-probe=\"([^\"]*)\"", dom).group(1).replace("&quot;", '"'))
    assert probe["links"] == 1 + 10 + 3 + 1 + 10          # summary, 10 models, 3 sections, appendix + 10 entries
    assert probe["missing"] == []
    assert (probe["wasOpen"], probe["open"], probe["visible"]) == (False, True, True)
    assert probe["hash"] == "#model-llama-3.1-8b" and abs(probe["targetTop"]) < 5   # scrolled to the section


@pytest.fixture(scope="module")
def q4_pdf(q4_rendered, tmp_path_factory):
    path = tmp_path_factory.mktemp("q4pdf") / "q4.pdf"
    path.write_bytes(q4_rendered["pdf"])
    return path


def _page_texts(pdf):
    text = subprocess.run([need_tool("pdftotext"), "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True, timeout=120).stdout
    return text.split("\f")[:-1]


def test_pdf_body_is_short_and_the_grids_are_in_the_appendix(q4_pdf):
    pages = _page_texts(q4_pdf)
    appendix = next(i for i, t in enumerate(pages) if "Appendix: grids and memory budgets" in t
                    and "Contents" not in t)
    assert appendix <= 25, f"the body runs to {appendix} pages (issue: about 25; 23 on 2026-12-01)"
    assert not any("Concurrency by hardware and precision" in t for t in pages[:appendix])
    assert sum("Concurrency by hardware and precision" in t for t in pages[appendix:]) >= 10   # every model's grid


def test_pdf_page_1_decides(q4_pdf):
    # The capacity lead signs on page 1: the cover, then the summary table (the recommended configuration per
    # model with its devices, $/hour, $/M output tokens, output rate and binding constraint); contents after.
    first = _page_texts(q4_pdf)[0]
    assert "Summary and recommendation" in first and "Contents" not in first
    words = set(first.split())
    assert {"output", "tokens", "tok/s", "(total)", "Binding", "constraint", "Devices"} <= words
    # every one of the ten models' rows on page 1 (the first words of each name: long names wrap in the cell)
    for name in ("Llama 3.1 8B", "Qwen3 8B", "Llama 3.3", "Qwen3 235B", "gpt-oss-120b", "DeepSeek-V3",
                 "Gemma 3", "Gemma 4", "Qwen3.6-27B", "Llama 4"):
        assert name in first, name


def test_pdf_contents_give_each_sections_page(q4_pdf):
    """The printed contents end each entry with the page its section starts on (target-counter, _print.css): 25
    entries (summary, 10 models, assumptions, appendix with warnings, sources and the 10 models' grids), pages in
    order, and each section's heading on the page given."""
    pages = _page_texts(q4_pdf)
    contents = next(t for t in pages if "\nContents\n" in t)
    entries = re.findall(r"(?m)^\s*\d+\.\s+(.+?)\s*\.{3,}\s*(\d+)$", contents)
    assert len(entries) == 25, entries
    numbers = [int(n) for _, n in entries]
    assert numbers == sorted(numbers) and numbers[0] == 1 and numbers[-1] <= len(pages)
    appendix = numbers[[t for t, _ in entries].index("Appendix: grids and memory budgets")]
    for title, n in entries:
        page = pages[int(n) - 1]
        assert title in page, (title, n)
        if int(n) > appendix and title not in ("Warnings", "Sources"):
            assert f"{title} (" in page and "grid and memory budget" in page, (title, n)


def test_pdf_has_no_blank_page(q4_pdf, tmp_path):
    pngs = pdf_pages(q4_pdf, tmp_path, dpi=20)
    blank = [i + 1 for i, p in enumerate(pngs) if ink_fraction(p) < 0.004]
    assert blank == []


def test_no_table_runs_off_the_page(q4_pdf):
    """Every word box (pdftotext -bbox) lies inside its page: a table wider than the page would push its right
    columns past the edge."""
    xml = subprocess.run([need_tool("pdftotext"), "-bbox", str(q4_pdf), "-"], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    outside = []
    for page in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', xml, re.S):
        w, h = float(page.group(1)), float(page.group(2))
        for m in re.finditer(r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)',
                             page.group(3)):
            x0, y0, x1, y1 = map(float, m.groups()[:4])
            if x0 < 0 or y0 < 0 or x1 > w + 0.5 or y1 > h + 0.5:
                outside.append(m.group(5))
    assert outside == []


@pytest.fixture(scope="module")
def q4_context(shipped_registry):
    import duckdb

    from kvreg.build import populate
    from kvreg.report.context import build_context

    reg = shipped_registry
    con = duckdb.connect(":memory:")
    try:
        populate(con, reg)
        return build_context(con, reg, "2026-q4", charts=False)
    finally:
        con.close()


# an appendix grid line: hardware, "weights / KV dtype(s)", TP, engine(s) (the Q4 report lists two engines)
GRID_LINE = re.compile(r'<tr[^>]*><td class="id">([^<]+)</td><td>([^<]+) / ([^<]+)</td><td class="num">(\d+)</td>'
                       r'\s*<td>([^<]+)</td>')
# a printed grid line: hardware, TP (the weights / KV dtypes and the engine are the printed family's, in its "Printed:"
# line), then the KV pool per device
PRINT_LINE = re.compile(r'<tr[^>]*><td class="id">([^<]+)</td><td class="num">(\d+)</td>\s*<td class="num">')
# a memory budget line: hardware, then TP (printed: no weights or engine column)
BUDGET_LINE = re.compile(r'<tr[^>]*><td class="id">([^<]+)</td><td class="num">(\d+)</td><td class="num">')


def _block(html: str, model_id: str) -> str:
    a = html.index(f'id="appendix-{model_id}"')
    return html[a:html.index("</details>", a)]


def _table(block: str, start: str) -> str:
    table = block[block.index(start):]
    return table[:table.index("</table>")]


def _grid_lines(html: str, model_id: str, line=GRID_LINE) -> list[tuple]:
    return line.findall(_table(_block(html, model_id), '<table class="data capacity">'))


def test_pdf_appendix_prints_the_shown_configurations_the_html_every_one(q4_context):
    """The PDF's appendix grid holds each model's shown family (the recommendation's precisions and engine) on
    every listed device and TP size; the HTML's holds every listed configuration."""
    from kvreg.report.render import render_html

    ctx = q4_context
    screen, printed = render_html(ctx, None), render_html(ctx, None, for_print=True)
    for m in ctx.models:
        sp, rec = m.shown, m.recommended
        assert sp.recommended == (rec is not None)
        if rec is not None:
            assert (sp.weights_dtype, sp.kv_dtype, sp.engine_id) == (rec.weights_dtype, rec.kv_dtype, rec.engine_id)
        shown_rows = [r for r in m.capacity.rows if r.config.printed]
        assert len(shown_rows) == 8 * 4                       # 8 devices × TP 1/2/4/8, one precision pair, one engine
        assert {(r.config.weights_dtype, r.config.kv_dtype, r.config.engine_id) for r in shown_rows} == {
            (sp.weights_dtype, sp.kv_dtype, sp.engine_id)}
        # the printed family is named once, above the grid (its weights / KV and engine columns would be constant)
        assert (f"Printed: the {sp.weights_dtype} weights / {sp.kv_dtype} KV cache configurations under "
                f"{sp.engine_id}") in _block(printed, m.model_id)
        lines = _grid_lines(printed, m.model_id, PRINT_LINE)
        assert len(lines) == len(m.capacity.print_lines) and 0 < len(lines) <= 32
        assert [(h, int(t)) for h, t in lines] == [(x.config.hardware_id, x.config.tp) for x in m.capacity.print_lines]
        if rec is not None:                                   # the recommended configuration is printed
            assert (rec.hardware_id, str(rec.tp)) in set(lines)
        every = _grid_lines(screen, m.model_id)
        assert len(every) == len(m.capacity.lines) > len(lines)
        # the listed bf16/fp8, plus gpt-oss-120b's own checkpoint precision (it ships only as mxfp4, report_weights)
        own = {"mxfp4"} if m.model_id == "gpt-oss-120b" else set()
        assert {w for _, w, _, _, _ in every} == {"bf16", "fp8"} | own
        assert {e for *_, e in every} >= {"first-principles", "vllm-0.33"}
    assert "Printed: the fp8 weights / fp8 KV cache configurations under vllm-0.33" in printed
    assert "Printed: the" not in screen


def test_pdf_appendix_prints_each_devices_budget_at_its_smallest_fitting_tp(q4_context):
    """The PDF's memory budget table has one row per listed device: the smallest TP size whose weights fit (the
    largest listed where none fits); the HTML's has every TP size of every listed configuration."""
    from kvreg.report.render import render_html

    ctx = q4_context
    screen, printed = render_html(ctx, None), render_html(ctx, None, for_print=True)
    hardware = list(ctx.report.hardware)
    for m in ctx.models:
        shown = [r for r in m.pools if r.weights_printed]
        want = []
        for hw in hardware:
            tps = sorted((r.tp, r.weights_fit) for r in shown if r.hardware_id == hw)
            want.append((hw, str(min((t for t, fit in tps if fit), default=tps[-1][0]))))
        got = BUDGET_LINE.findall(_table(_block(printed, m.model_id), "<h4>Weights and KV pool per device</h4>"))
        assert got == want
        # the rule is SQL's (pools.sql budget_printed, scope_memory_pools.sql budget_tp); the template only prints it
        assert [(r.hardware_id, str(r.tp)) for r in m.pools if r.budget_printed] == want
        # the HTML table: one row per listed weights dtype × TP × engine on every device (weights and engine columns)
        html_rows = re.findall(r'<tr[^>]*><td class="id">[^<]+</td><td>',
                               _table(_block(screen, m.model_id), "<h4>Weights and KV pool per device</h4>"))
        n_weights = 3 if m.model_id == "gpt-oss-120b" else 2   # bf16, fp8 (+ gpt-oss-120b's own mxfp4)
        assert len(html_rows) == len(m.pools) == 8 * 4 * n_weights * 2
    # Llama 3.1 8B (16 GB of bf16 weights) fits one device of every kind; DeepSeek-V3 (fp8) needs 4 or 8 of them,
    # and none of the 8 H100s holds it (its budget row says so)
    assert {t for _, t in BUDGET_LINE.findall(_table(_block(printed, "llama-3.1-8b"),
                                                     "<h4>Weights and KV pool per device</h4>"))} == {"1"}
    ds = dict(BUDGET_LINE.findall(_table(_block(printed, "deepseek-v3"), "<h4>Weights and KV pool per device</h4>")))
    assert ds["h100-sxm-80gb"] == "8" and ds["mi355x"] == "4"
    assert "(does not fit)" in _table(_block(printed, "deepseek-v3"), "<h4>Weights and KV pool per device</h4>")
