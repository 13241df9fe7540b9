"""The report's sections driven by the engine_capacity, roofline and plans views, on the real views.

The shipped example compares first principles with vLLM 0.22–0.26 (reports/example.yaml), so every
number here comes from kvreg/sql/260_roofline.sql, 145_plans.sql and 220_engine_capacity.sql over the
shipped registry; the expected values are cross-checked against the views queried directly, and the
seed-derived ones are worked in the comments.  The last tests drop a view from the database and
check the section is left out with a note.
"""

from __future__ import annotations

import math

import pytest

from tests.report_tools import ROOT

ENGINE = "vllm-0.22-0.26"


def _render(drop: list[str] | None = None, extra: list[str] | None = None):
    import duckdb

    from kvreg.build import populate
    from kvreg.registry import load_registry
    from kvreg.report.context import build_context
    from kvreg.report.render import render_html

    reg = load_registry(ROOT)
    con = duckdb.connect(":memory:")
    populate(con, reg)
    for sql in (drop or []) + (extra or []):
        con.execute(sql)
    ctx = build_context(con, reg, "example", charts=False)
    html = render_html(ctx, None)
    return ctx, html, con


@pytest.fixture(scope="module")
def full():
    ctx, html, con = _render()
    yield ctx, html, con
    con.close()


def test_all_views_detected(full):
    ctx, html, _ = full
    assert (ctx.available.engine, ctx.available.roofline, ctx.available.plans) == (True, True, True)
    assert ctx.available.notes == () and "is not in this database" not in html


def _cell(ctx, model, hw, wd, kd, tp, engine, context):
    m = next(m for m in ctx.models if m.model_id == model)
    row = next(r for r in m.capacity.rows if (r.config.hardware_id, r.config.weights_dtype, r.config.kv_dtype,
                                             r.config.tp, r.config.engine_id) == (hw, wd, kd, tp, engine))
    return next(c for c in row.cells if c.context_tokens == context)


def test_engine_column_is_engine_capacity_at_the_default_batched_tokens(full):
    ctx, html, con = full
    cell = _cell(ctx, "gemma-4-31b", "h100-sxm-80gb", "fp8", "fp8", 1, ENGINE, 32768)
    (admitted, starts, fp_seqs), = con.execute(
        "SELECT admitted_seqs, starts, first_principles_seqs FROM engine_capacity WHERE model_id = 'gemma-4-31b'"
        " AND engine_id = ?"
        " AND hardware_id = 'h100-sxm-80gb' AND weights_dtype = 'fp8' AND kv_dtype = 'fp8' AND tp = 1"
        " AND max_model_len = 32768 AND default_batched", [ENGINE]).fetchall()
    # vLLM's start-up figure charges each of the 5 sliding-window groups a whole prefill chunk, cdiv(1,023 + 8,192, 16)
    # + 1 = 577 blocks, beside the full group's 1,024: 3,909 a request, 31,565 blocks (38.53 GiB after the 5.20 GiB
    # reserve of 204_engine_reserve.sql: its CUDA-graph estimate for 1,024 max_num_seqs on Hopper is 1.18 GiB) ÷ 3,909
    # = 8.07 logged.  Its scheduler frees the blocks behind the window, so a decoding request holds 1,024 + 5 × 65 =
    # 1,349 and only the one in prefill the 3,909: (31,565 − 3,909 + 1,349) ÷ 1,349 = 21.5 → 21 admitted, still fewer
    # than the first-principles pool holds (the sliding_prefill_reserve quirk).
    assert (cell.engine_seqs, cell.engine_starts) == (admitted, starts) == (21, True)
    # One memory model per engine id: the first-principles cell of an engine row is the per-kind arithmetic on
    # the release's own available KV memory: 41,373,270,062 B ÷ 1,090,519,040 B per 32Ki sequence = 37.9 → 37
    # (not the simple 1 GiB budget's 42).
    assert cell.max_seqs == fp_seqs == 37 and cell.engine_ratio == pytest.approx(37 / 21)
    assert "<th class=\"num\">Engine</th>" in html and "1.76×" in html     # 1.762, printed to 2 places
    # first principles rows have no engine figure
    assert _cell(ctx, "gemma-4-31b", "h100-sxm-80gb", "fp8", "fp8", 1, "first-principles", 32768).engine_seqs is None


def test_quirk_names_the_cause_of_the_gap(full):
    ctx, html, con = full
    gemma = next(m for m in ctx.models if m.model_id == "gemma-4-31b")
    triggers = [q.trigger for q in gemma.quirks]
    assert "sliding_prefill_reserve" in triggers and all(q.engine_id == ENGINE for q in gemma.quirks)
    (text,) = con.execute("SELECT text FROM engine_quirks WHERE engine_id = ? AND trigger = 'sliding_prefill_reserve'",
                          [ENGINE]).fetchone()
    assert "Why the engine admits a different number" in html and text.split(" (")[0] in html
    # Llama 3.1 8B is all full attention: no sliding-window reserve applies to it
    llama = next(m for m in ctx.models if m.model_id == "llama-3.1-8b")
    assert "sliding_prefill_reserve" not in [q.trigger for q in llama.quirks]


def test_quirk_sentence_is_said_of_the_models_own_configuration(full):
    """The release's quirk text is followed by where it holds for this model (n of the listed configurations) and, for
    the refusal, the engine's own blocks at the first such configuration, read back from engine_capacity."""
    import html as htmllib
    import re

    ctx, html, con = full
    gemma = next(m for m in ctx.models if m.model_id == "gemma-4-31b")
    q = next(q for q in gemma.quirks if q.trigger == "does_not_start")
    assert 0 < q.n_flagged < q.n_listed
    text = htmllib.unescape(re.sub(r"<[^>]+>", "", html))
    m = re.search(rf"In {q.n_flagged:,} of the {q.n_listed:,} listed configurations, first (\S+) (\S+) / (\S+) at TP "
                  r"(\d+) and max_model_len ([\d,]+): one request needs ([\d,]+) blocks, the pool holds ([\d,]+)\.", text)
    assert m, "no per-configuration sentence"
    hw, w, k, tp, lens, need, pool = m.groups()
    (bpr, nb, starts), = con.execute(
        "SELECT blocks_per_request, num_blocks, starts FROM engine_capacity WHERE model_id = 'gemma-4-31b' AND "
        "engine_id = ? AND hardware_id = ? AND weights_dtype = ? AND kv_dtype = ? AND tp = ? AND max_model_len = ? "
        "AND default_batched", [ENGINE, hw, w, k, int(tp), int(lens.replace(",", ""))]).fetchall()
    assert (int(need.replace(",", "")), int(pool.replace(",", "")), starts) == (bpr, nb, False)
    assert 0 < nb < bpr   # the quirk's own case: a pool, too small for one request (not weights that leave none)


def test_engine_refusal_is_a_warning(full):
    ctx, html, _ = full
    refusals = [w for w in ctx.warnings if w.kind == "engine-refuses-to-start"]
    # Gemma 4 31B with bf16 weights on an H100: vLLM's pool after its 5.20 GiB reserve (9.66 GiB,
    # 3,957 blocks) holds one request of 32Ki (3,909 blocks) but not one of 128Ki (6,981 blocks),
    # so the engine refuses to start at 128Ki where first principles still fit sequences.
    gemma = next(w for w in refusals if w.subject == f"gemma-4-31b on h100-sxm-80gb under {ENGINE}")
    assert "bf16 weights / bf16 KV, TP 1 at 128Ki" in gemma.detail
    assert ">refuses<" in html
    # configurations whose weights do not fit are reported once, as weights-do-not-fit, not as refusals
    assert not any("deepseek-v3" in w.subject and "h100" in w.subject for w in refusals)


def test_recommendation_comes_from_plans(full):
    ctx, html, con = full
    rec = {o.model_id: o for o in ctx.recommended}
    g = rec["gemma-4-31b"]
    plan = con.execute(
        "SELECT max_seqs_per_replica, rate_max_batch, replicas, gpus, usd_per_hour, binding_constraint"
        " FROM plans(200, 32768, 0.05, ttft_s := 2.0) WHERE model_id = 'gemma-4-31b' AND hardware_id = 'h100-sxm-80gb'"
        " AND engine_id = 'first-principles' AND weights_dtype = 'fp8' AND kv_dtype = 'fp8' AND tp = 1").fetchone()
    # Worked by hand: the TPOT rate is floor((tpot − W/BW) / (s/BW)) for a dense model (275_plans.sql), with
    # W = 31.0e9 B (fp8 weights), s = 1,090,519,040 B read per sequence per step at 32Ki (30 sliding layers at
    # W = 1,024 plus the full layers' 20,480 B/token: kv_read_bytes) and BW = 3.35e12 B/s × the bandwidth
    # efficiency the plan used (speed_efficiency: no first-principles measurements, so the all-hardware fit,
    # "derived"; 0.4096 today → floor((0.05 − 0.02259) / 7.947e-4) = 34; it was 33 at 0.40, before the second
    # session's rule-priced checkpoints moved the fit; 0.595 since the kernel classes, H100 × TensorRT-LLM's figure
    # through hardware_any → floor((0.05 − 0.015542) / 5.4675e-4) = 63).  43 fit, so above 43 the capacity binds:
    # ⌈200 / min(43, rate)⌉ H100s at the lowest quote (5 at 0.595; 6 at 0.4096, TPOT-bound).
    (eff,) = con.execute("SELECT bandwidth_efficiency FROM speed_efficiency WHERE hardware_id = 'h100-sxm-80gb'"
                         " AND engine_family = 'first-principles'").fetchone()
    bw = 3.35e12 * eff
    rate = math.floor((0.05 - 31.0e9 / bw) / (1_090_519_040 / bw))
    n = -(-200 // min(43, rate))
    assert plan == (43, rate, n, n, pytest.approx(n * 2.99), "tpot" if rate < 43 else "capacity")
    # The report plans on the engine's number (seed rule 3): the recommendation is the cheapest option vLLM admits —
    # on one B300 with fp8 weights and fp8 KV, 174,313 blocks; a request of 32Ki is charged 3,909 blocks at start-up
    # (1,024 full + 5 sliding groups × 577) but holds 1,349 while it decodes (5 × 65 window blocks), only one prefill
    # chunk in flight: (174,313 − 3,909 + 1,349) ÷ 1,349 = 127.3 → 127 sequences per replica → ⌈200 ÷ 127⌉ = 2 devices.
    # bf16 weights need the same 2 B300s (150,662 blocks: 109 admitted) at the same $14.80: of equal cost and devices
    # the more headroom ranks first (ranked_plans, issue 12).  (Until the scheduler's freeing of the blocks behind
    # the window was modelled: 140 per TP-8 A100 replica, 16 A100s.)
    rows = {w: r for w, *r in con.execute(
        "SELECT weights_dtype, admitted_seqs, num_blocks, blocks_per_request, running_blocks_per_request"
        " FROM engine_capacity WHERE model_id = 'gemma-4-31b' AND hardware_id = 'b300' AND engine_id = ?"
        " AND kv_dtype = 'fp8' AND tp = 1 AND max_model_len = 32768 AND default_batched"
        " AND weights_dtype IN ('fp8', 'bf16')", [ENGINE]).fetchall()}
    assert rows["fp8"] == [(174313 - 3909 + 1349) // 1349, 174313, 1024 + 5 * 577, 1024 + 5 * 65] == [127, 174313,
                                                                                                     3909, 1349]
    assert rows["bf16"][0] == (150662 - 3909 + 1349) // 1349 == 109
    admitted = rows["fp8"][0]
    assert (g.hardware_id, g.engine_id, g.weights_dtype, g.tp, g.planned_seqs, g.devices, g.binding) == (
        "b300", ENGINE, "fp8", 1, admitted, -(-200 // admitted), "KV memory at engine admission")
    # 2 B300 × $7.40 (Hyperstack on-demand, the lowest listed quote) = $14.80 per hour
    assert g.usd_per_hour == pytest.approx(g.devices * 7.40) == pytest.approx(14.80)
    assert "sized by the plans view for memory and speed together" in html
    summary = html[html.index('id="summary"'):html.index('class="model"')]
    assert (f"<strong>Gemma 4 31B:</strong> b300, {g.devices} replicas × TP 1 = {g.devices} devices"
            f" (fp8 weights / fp8 KV, {ENGINE})") in summary
    assert (f"The {g.devices} devices hold {g.devices * admitted} sequences at 32Ki, the memory limit:"
            f" {g.devices} replicas × {admitted} that the engine admits") in summary
    # the binding constraint is the engine's admission, with the margin to the next limit
    assert f"Binding: KV memory at engine admission. It allows {admitted} sequences per replica; the next limit" in summary
    # plans.max_context_tokens is capped at Gemma 4's native 262,144 tokens in the text
    assert ("One sequence alone fits and meets the TPOT target on the recommended configuration up to 262,144 tokens"
            " of context (the model's native context") in summary
    # first principles stay as the comparison, their own cheapest plan: since the kernel classes the A100's fitted
    # efficiency lets one TP-8 replica (321 fit, the TPOT allows 248 ≥ 200 users at Ampere's 0.682 since speed10;
    # 233 at 0.630) serve everyone: 8 × $1.60 = $12.80, below the H100 TP 1 row above (5 × $2.99 = $14.95)
    assert ("Under first-principles, with no engine accounting (what the hardware can hold): a100-sxm-80gb,"
            " bf16 / fp8, TP 8, 248 per replica: 8 devices, $12.80 per hour (binding: decode speed (TPOT); one replica"
            " holds every user)") in summary


def test_engine_admission_resizes_the_engine_option(full):
    ctx, _, _ = full
    gemma = next(m for m in ctx.models if m.model_id == "gemma-4-31b")
    o = next(o for o in gemma.options if (o.hardware_id, o.engine_id, o.weights_dtype, o.kv_dtype, o.tp)
             == ("h100-sxm-80gb", ENGINE, "fp8", "fp8", 1))
    # plans puts 40 per replica; the engine admits 21 (test above) → ⌈200 / 21⌉ = 10 devices
    assert (o.planned_seqs, o.devices, o.binding, o.engine_limited) == (21, 10, "KV memory at engine admission", True)
    assert o.rank_in_model > 1


def test_infeasible_options_carry_the_plans_reason(full):
    ctx, _, _ = full
    gemma = next(m for m in ctx.models if m.model_id == "gemma-4-31b")
    a100 = next(o for o in gemma.options if (o.hardware_id, o.engine_id, o.weights_dtype, o.kv_dtype, o.tp)
                == ("a100-sxm-80gb", "first-principles", "fp8", "fp8", 1))
    assert not a100.meets and a100.reason == "ttft: the prefill floor exceeds the TTFT target"


def test_roofline_rows_are_the_view_for_batches_that_fit(full):
    ctx, _, con = full
    from kvreg.report.context import rows

    roof = rows(con, "chart_roofline", {"report": "example"})
    h100 = [r for r in roof if (r.model_id, r.hardware_id) == ("gemma-4-31b", "h100-sxm-80gb")]
    # the chart's configuration is the recommendation's precisions and engine (Gemma 4: fp8 weights / fp8 KV under
    # vllm-0.22-0.26) at the smallest TP whose weights fit (1 on the H100); batches stop at what the KV pool holds
    rec = next(o for o in ctx.recommended if o.model_id == "gemma-4-31b")
    view = con.execute("SELECT batch, decode_tok_per_s, max_seqs FROM roofline WHERE model_id = 'gemma-4-31b'"
                       " AND hardware_id = 'h100-sxm-80gb' AND engine_id = ? AND tp = 1"
                       " AND weights_dtype = ? AND kv_dtype = ? AND context_tokens = 32768"
                       " AND batch_fits ORDER BY batch", [rec.engine_id, rec.weights_dtype, rec.kv_dtype]).fetchall()
    assert (rec.weights_dtype, rec.kv_dtype) == ("fp8", "fp8")
    # the batch axis (powers of two) up to what the KV pool holds at that configuration (the view's max_seqs)
    assert [b for b, _, _ in view] == [2**k for k in range(12) if 2**k <= view[0][2]]
    assert [r.batch for r in h100] == [b for b, _, _ in view] and len(view) > 2
    assert [r.decode_tok_per_s for r in h100] == pytest.approx([v for _, v, _ in view])
    assert h100[0].decode_tok_per_s < h100[-1].decode_tok_per_s  # batching raises throughput


def test_roofline_chart_drawn():
    from kvreg.report import charts as ch

    ctx, _, con = _render()
    from kvreg.report.context import rows

    roof = [r for r in rows(con, "chart_roofline", {"report": "example"}) if r.model_id == "llama-3.1-8b"]
    svg = ch.roofline(roof, "32Ki")
    assert svg.startswith("<svg") and "h100-sxm-80gb" in svg
    con.close()


@pytest.mark.parametrize(("view", "what", "note"), [
    ("engine_capacity", "VIEW", "The engine_capacity view is not in this database"),
    ("roofline", "VIEW", "The roofline view is not in this database"),
    ("plans", "MACRO TABLE", "The plans macro is not in this database"),
])
def test_view_absent_leaves_its_section_out_with_a_note(view, what, note):
    ctx, html, con = _render(drop=[f"DROP {what} {view}"])
    con.close()
    assert note in html
    avail = {"engine_capacity": ctx.available.engine, "roofline": ctx.available.roofline,
             "plans": ctx.available.plans}
    assert [k for k, v in avail.items() if not v] == [view]
    if view == "engine_capacity":
        assert "<th class=\"num\">Engine</th>" not in html and all(not m.quirks for m in ctx.models)
    if view == "roofline":
        assert "Decode throughput ceiling" not in html
    if view == "plans":
        assert "sized from memory capacity alone" in html


def test_view_missing_a_column_is_left_out_with_a_note():
    ctx, html, con = _render(drop=["ALTER VIEW engine_capacity RENAME TO engine_capacity_full"],
                             extra=["CREATE VIEW engine_capacity AS SELECT * EXCLUDE (starts) FROM engine_capacity_full"])
    con.close()
    assert not ctx.available.engine
    assert "The engine_capacity view lacks columns starts" in html


def test_a_release_that_caps_the_request_length_is_warned_in_its_own_words():
    """Under SGLang (accounting.long_request cap_request_len) a context whose one request does not fit the pool is
    not a refusal to start: the warning says the engine starts with the request length capped, and each
    configuration it lists is one engine_capacity flags request_len_capped (starts, admits 0)."""
    import re

    import dataclasses

    import duckdb

    from kvreg.build import populate
    from kvreg.registry import load_registry
    from kvreg.report.context import build_context

    reg = load_registry(ROOT)
    con = duckdb.connect(":memory:")
    populate(con, reg)
    # the example report under SGLang 0.5 instead of vLLM 0.22-0.26: its definition and its items
    held = reg.entries["report"]["example"]
    entry = held.entry.model_copy(update={"engines": ["first-principles", "sglang-0.5"]})
    reg.entries["report"]["example"] = (dataclasses.replace(held, entry=entry) if dataclasses.is_dataclass(held)
                                        else held.model_copy(update={"entry": entry}))
    con.execute("UPDATE report_items SET item_id = 'sglang-0.5' WHERE report_id = 'example' AND item_kind = 'engine'"
                " AND item_id = 'vllm-0.22-0.26'")
    ctx = build_context(con, reg, "example", charts=False)
    assert not [w for w in ctx.warnings if w.kind == "engine-refuses-to-start"]
    capped = [w for w in ctx.warnings if w.kind == "engine-caps-request-length"]
    assert capped and all(w.subject.endswith("under sglang-0.5") for w in capped)
    for w in capped:
        model, hw = re.match(r"(\S+) on (\S+) under", w.subject).groups()
        assert "starts with a request length capped below this context" in w.detail
        for wd, kd, tp, label in re.findall(r"(\w+) weights / (\w+) KV, TP (\d+) at (\w+)", w.detail):
            lens = int(label[:-2]) * 1024
            (starts, flag, admitted), = con.execute(
                "SELECT bool_and(starts), bool_or(request_len_capped), max(admitted_seqs) FROM engine_capacity"
                " WHERE engine_id = 'sglang-0.5' AND model_id = ? AND hardware_id = ? AND weights_dtype = ?"
                " AND kv_dtype = ? AND tp = ? AND max_model_len = ? AND default_batched",
                [model, hw, wd, kd, int(tp), lens]).fetchall()
            assert (starts, flag, admitted) == (True, True, 0)
