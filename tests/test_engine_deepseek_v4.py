"""DeepSeek-V4 in the engine family: vLLM 0.22–0.32's layer-tuple layout and 0.33's block-outermost packing, worked by
hand (docs/engine.md "DeepSeek-V4: layer tuples", "DeepSeek-V4 in 0.33: block-outermost packing"), and the
vllm-project/vllm#51041 startup the first explains.

Flash: 43 layers, compress_ratios 0, 0, then 4 / 128 alternating: 21 ratio-4 layers, 20 ratio-128 layers.
Pages (fp8_ds_mla, 584 B per 512-wide entry, every page rounded up to 576 B; vLLM 0.22.0 sources in the docs):
  sliding window   64 entries × 584 = 37,376 → 37,440      (block 64 tokens, window 128)
  C4 KV           256/4 = 64 × 584 = 37,376 → 37,440      (block 256)
  C4 indexer      64 × (128 + 128/128·4 = 132) = 8,448 → 8,640
  C128 KV         256/128 = 2 × 584 = 1,168 → 1,728
  C4 KV state     4 × 2·2·512 × 4 B = 32,768 → 32,832 → padded to the MLA page 37,440 (block 4, window 8)
  C4 index state  4 × 2·2·128 × 4 B = 8,192 → 8,640       (block 4, window 8)
  C128 state      8 × 2·1·512 × 4 B = 32,768 → 32,832 → 37,440 (block 8, window 128)
"""

from __future__ import annotations

from tests.conftest import one

GIB = 2**30
ENGINE = "vllm-0.22-0.26"
E033 = "vllm-0.33"


def rows(con, sql, params=()):
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def test_flash_first_principles_bytes_per_token(con):
    # fp8, one byte per value, no pages: ratio-4 layers (512 + 132) / 4 = 161 B, ratio-128 layers 512 / 128 = 4 B;
    # 21 × 161 + 20 × 4 = 3,381 + 80 = 3,461 B per token growing with context; the 43 windows hold 128 × 512 B
    # each (2,752 KiB) and the states 21 × (8·2,048 + 8·512) × 4 + 20 × 128·1,024 × 4 = 11.64 MiB, both bounded.
    r = one(con, "SELECT sum(token_bytes * layer_count) FILTER (WHERE kind = 'full') AS grow,"
                 " sum(token_bytes * window_tokens * layer_count) FILTER (WHERE kind = 'sliding') AS window,"
                 " sum(state_bytes * layer_count) AS state FROM kv_layer_costs"
                 " WHERE model_id = 'deepseek-v4-flash' AND kv_dtype = 'fp8' AND tp = 1")
    assert (r["grow"], r["window"], r["state"]) == (3461, 43 * 128 * 512, 21 * 20480 * 4 + 20 * 131072 * 4)


def test_flash_cache_sets_pages_and_groups(con):
    sets = rows(con, "SELECT storage_kind, window_tokens, block_tokens, layers, raw_page_bytes, page_bytes, group_size,"
                     " request_groups FROM engine_kv_buckets WHERE engine_id = ? AND model_id = 'deepseek-v4-flash'"
                     " AND kv_dtype = 'fp8' AND tp = 2 ORDER BY block_tokens", [ENGINE])
    assert [(s["storage_kind"], s["window_tokens"], s["block_tokens"], s["layers"], s["raw_page_bytes"],
             s["request_groups"]) for s in sets] == [
        ("sliding", 8, 4, 42, 21 * 37440 + 21 * 8640, 1),       # both ratio-4 compressor states, one group
        ("sliding", 128, 8, 20, 20 * 37440, 1),                 # ratio-128 state
        ("sliding", 128, 64, 43, 43 * 37440, 2),                # the window: cdiv(43, 22) = 2 groups
        ("mla", None, 256, 62, 21 * 37440 + 21 * 8640 + 20 * 1728, 1)]
    # num_layer_tuples: _approximate_gcd(21, 43, 21, 20) from 21 up: 21 pads 0+20+0+1 = 21, 22 pads 1+1+1+2 = 5
    # (23: 10, …) → 22; the longest per-page list is the window's first group (22 of 43).
    assert {(s["page_bytes"], s["group_size"]) for s in sets} == {(37440 + 8640 + 1728, 22)}
    lay = one(con, "SELECT * FROM engine_kv_layout WHERE engine_id = ? AND model_id = 'deepseek-v4-flash'"
                   " AND kv_dtype = 'fp8' AND tp = 2", [ENGINE])
    assert lay["layout_mode"] == "layer_tuples" and lay["num_groups"] == 5 and lay["block_size_tokens"] == 256
    assert lay["block_bytes"] == 47808 * 22 == 1051776
    assert not lay["k_eq_v_stored_twice"]


def test_pro_block(con):
    # Pro: 61 layers, 30 at ratio 4, 31 at 128 → MLA set 31 tuples, window 61, states 30 and 31:
    # _approximate_gcd from 31: 31 pads 0+1+1+0 = 2 (32: 7) → 31, window in cdiv(61, 31) = 2 groups.
    lay = one(con, "SELECT * FROM engine_kv_layout WHERE engine_id = ? AND model_id = 'deepseek-v4-pro'"
                   " AND kv_dtype = 'fp8' AND tp = 8", [ENGINE])
    assert (lay["num_groups"], lay["group_size"], lay["block_bytes"]) == (5, 31, 47808 * 31)


def test_flash_blocks_per_request_at_two_contexts(con):
    # T = 8,192 in flight.  L = 8,192: MLA cdiv(8192, 256) = 32; window 2 × (cdiv(min(127 + 8192, 8192), 64) + 1)
    # = 2 × 129 = 258; ratio-4 states cdiv(min(7 + 8192, 8192), 4) + 1 = 2,049; ratio-128 cdiv(8192, 8) + 1 = 1,025
    # → 3,364.  L = 131,072: 512 + 2 × (cdiv(8319, 64) + 1 = 131) + (cdiv(8199, 4) + 1 = 2,051)
    # + (cdiv(8319, 8) + 1 = 1,041) = 3,866.
    got = dict(con.execute("SELECT max_model_len, blocks_per_request FROM engine_request_blocks WHERE engine_id = ?"
                           " AND model_id = 'deepseek-v4-flash' AND kv_dtype = 'fp8' AND tp = 2"
                           " AND max_num_batched_tokens = 8192 AND max_model_len IN (8192, 131072)",
                           [ENGINE]).fetchall())
    assert got == {8192: 32 + 258 + 2049 + 1025, 131072: 512 + 262 + 2051 + 1041}


def test_issue_51041_flash_h20_tp2(con):
    # vllm-project/vllm#51041: "KV cache holds only 150K tokens in 7.7 GiB", max_model_len ~121,344, block 256
    # (release and max_num_batched_tokens not given; 0.26's async scheduling holds 2 × 8,192 in flight).
    # num_blocks = 7.7 GiB // 1,051,776 = 7,860.  Blocks at L = 121,344, T = 16,384: MLA 474; window
    # cdiv(16511, 64) + 1 = 259 per group; ratio-4 states cdiv(16391, 4) + 1 = 4,099; ratio-128 cdiv(16511, 8) + 1
    # = 2,065 → 474 + 518 + 4,099 + 2,065 = 7,156 (it starts: 7,860 ≥ 7,156).  The logged concurrency weighs each
    # set's blocks by its pages over the MLA set's 1,002,240: (474·1,002,240 + 259·1,609,920 + 4,099·967,680
    # + 2,065·748,800) / 1,002,240 = 6,390.5 → 6,391; 7,860 / 6,391 × 121,344 = 149,235 tokens: the issue's 150K.
    r = one(con, "SELECT * FROM engine_capacity_for_memory(?, 121344, 16384) WHERE engine_id = ?"
                 " AND model_id = 'deepseek-v4-flash' AND kv_dtype = 'fp8' AND tp = 2", [7.7 * GIB, ENGINE])
    assert (r["num_blocks"], r["blocks_per_request"], r["concurrency_blocks_per_request"]) == (7860, 7156, 6391)
    assert r["starts"] and r["admitted_seqs"] == 1
    assert r["logged_kv_tokens"] == int(7860 / 6391 * 121344) == 149235
    assert abs(r["logged_kv_tokens"] - 150_000) / 150_000 < 0.01
    # At 0.22's T = 8,192 the same pool would log 277,015 tokens: the in-flight allowance is most of a request.
    r = one(con, "SELECT * FROM engine_capacity_for_memory(?, 121344, 8192) WHERE engine_id = ?"
                 " AND model_id = 'deepseek-v4-flash' AND kv_dtype = 'fp8' AND tp = 2", [7.7 * GIB, ENGINE])
    assert r["logged_kv_tokens"] == 277015


def test_no_engine_figure_where_the_layout_is_not_modelled(con):
    # The older releases and SGLang / TRT-LLM have no V4 layout, and 0.22–0.26 and 0.33 are modelled for fp8 KV only:
    # no bucket, so no engine row — never the generic grouping's number.
    got = con.execute("SELECT DISTINCT engine_id, kv_dtype, layout_mode FROM engine_kv_layout"
                      " WHERE model_id LIKE 'deepseek-v4-%'").fetchall()
    assert set(got) == {(ENGINE, "fp8", "layer_tuples"), (E033, "fp8", "block_outermost")}
    # A --block-size other than the backend's 256 leaves vLLM's page match unmet: no row either.
    assert con.execute("SELECT count(*) FROM engine_kv_layout_at(block_size := 64)"
                       " WHERE model_id LIKE 'deepseek-v4-%'").fetchone()[0] == 0


def test_block_size_is_the_layouts_own_256_set_or_not(con):
    # Unset, vLLM takes the sparse SWA backend's preferred 256 for V4 (platforms/interface.py 0.22.0:489-501,
    # sparse_swa.py 0.22.0:105-107), not the release's 16: the settings say 256, and --block-size 256 (which the
    # release's list for other models, 16-128, lacks) gives the same rows; 64 is refused by name, never "no rows".
    import pytest

    from kvreg.plan import UsageError, check_block_size

    q = ("SELECT block_size, block_size_is_default, num_blocks FROM engine_capacity_at([32768], block_size := {})"
         " WHERE engine_id = ? AND model_id = 'deepseek-v4-flash' AND hardware_id = 'h200' AND kv_dtype = 'fp8'"
         " AND tp = 2 AND weights_dtype = 'fp8' ORDER BY ALL")
    unset, at256 = (rows(con, q.format(b), [ENGINE]) for b in ("NULL", "256"))
    assert unset and unset == at256 and {(r["block_size"], r["block_size_is_default"]) for r in unset} == {(256, True)}
    check_block_size(con, [ENGINE], 256, model="deepseek-v4-flash")
    with pytest.raises(UsageError, match="laid out in 256-token blocks"):
        check_block_size(con, [ENGINE], 64, model="deepseek-v4-flash")
    with pytest.raises(UsageError, match="allowed: 16, 32, 64, 128"):
        check_block_size(con, [ENGINE], 256, model="llama-3.1-8b")


def test_fit_says_why_a_release_gives_no_figure(con):
    from kvreg.engine_fit import engine_fit, render_engine

    rows, quirks = engine_fit(con, "deepseek-v4-flash", "h200", "vllm-0.21", "fp8", "fp8", 1, [32768])
    text = render_engine("vllm-0.21", rows, quirks, [])
    assert not rows and "no rows" in text
    assert "vllm-0.21 gives no figure for it at KV fp8" in text
    assert "vllm-0.22-0.26 (KV fp8), vllm-0.33 (KV fp8)" in text
    rows, quirks = engine_fit(con, "deepseek-v4-flash", "h200", E033, "fp8", "bf16", 1, [32768])
    assert not rows and "vllm-0.33 gives no figure for it at KV bf16" in render_engine(E033, rows, quirks, [])
    rows, quirks = engine_fit(con, "deepseek-v4-flash", "h200", ENGINE, "fp8", "fp8", 1, [32768])
    assert rows and not any("compressed attention" in q for q in quirks)


def test_plan_says_why_a_release_gives_no_option(con):
    # `kvreg plan` under vllm-0.33 had only "No configuration serves this workload." (new-user trial): it now carries
    # fit's reason as a warning (text and JSON), and says nothing of the kind where the layout is modelled.
    from kvreg.plan import plan, plan_warnings, render_plan

    r = plan(con, "deepseek-v4-flash", users=100, context_tokens=32768, tpot_s=0.05, engine="vllm-0.21",
             kv_dtypes=["fp8"], hardware=["h200"])
    assert not r.feasible and not r.infeasible
    (w,) = plan_warnings(r)
    assert "vllm-0.21 gives no figure for it at KV fp8" in w and "vllm-0.22-0.26 (KV fp8)" in w
    assert w in render_plan(r)
    for engine in (ENGINE, E033):   # 0.33's block-outermost packing is modelled too: options, no warning
        r = plan(con, "deepseek-v4-flash", users=100, context_tokens=32768, tpot_s=0.05, engine=engine,
                 kv_dtypes=["fp8"], hardware=["h200"])
        assert (r.feasible or r.infeasible) and not r.layout_notes and not plan_warnings(r)


def test_a_compressor_ratio_the_release_does_not_take_gives_no_row(tmp_path):
    # A hand-written V4-like entry whose 128:1 layers compress 16:1 instead: vLLM's state cache takes 4 and 128
    # only (compressor.py 0.22.0:140 asserts), so the layout is not priced at all — no partial set of caches.
    import shutil

    import yaml

    from kvreg.build import memory_connection
    from tests.conftest import ROOT
    from tests.registry_factory import hardware_entry, write_project
    from kvreg.configfill import filled_data  # the entry with the geometry its shipped config gives

    flash = filled_data(ROOT / "registry/models/deepseek-v4-flash.yaml")
    odd = filled_data(ROOT / "registry/models/deepseek-v4-flash.yaml")
    odd["id"], odd["hf_id"] = "v4-odd", "test/v4-odd"
    for g in odd["layer_groups"]:
        if g.get("compress") == 128:
            g["compress"] = 16
            if g["kind"] == "recurrent":
                g["state"] = [{"role": "ssm", "shape": [1, 16, 1024], "dtype": "fp32", "split_axis": 0}]
    write_project(tmp_path, {"deepseek-v4-flash": flash, "v4-odd": odd}, {"hw": hardware_entry("hw")})
    shutil.rmtree(tmp_path / "registry/engines")
    shutil.copytree(ROOT / "registry/engines", tmp_path / "registry/engines")
    c = memory_connection(tmp_path)
    got = c.execute("SELECT DISTINCT model_id FROM engine_kv_layout WHERE engine_id = ?", [ENGINE]).fetchall()
    assert got == [("deepseek-v4-flash",)]


# --- vLLM 0.33: block-outermost packing (v1/core/kv_cache_planning.py 0.33.0:914-1040, :574-605) -------------------


def test_033_flash_buckets_groups_and_block(con):
    # The same specs and pages as 0.22 (none padded to another: pages sit side by side in a block).  Buckets (same
    # block and window): MLA {37,440: 21 C4 KV, 8,640: 21 C4 indexer, 1,728: 20 C128 KV} — 21 ≠ 20, unbalanced, one
    # group; window {37,440: 43} balanced; ratio-4 states {32,832: 21, 8,640: 21} balanced with two page sizes;
    # ratio-128 state {32,832: 20} balanced.  min repeats = 21 (the two-page balanced bucket);
    # _approximate_gcd(43, 21, 20) from 21: 21 pads 20+0+1 = 21, 22 pads 1+1+2 = 4, 23 pads 3+2+3 = 8 → 22
    # (0.22's 22 too, there with the MLA set's 21 in the list).  Groups: window cdiv(43, 22) = 2 (22 + 21 layers),
    # each other bucket 1: 5 groups.  Widest group per bucket: MLA 21·37,440 + 21·8,640 + 20·1,728 = 1,002,240;
    # window 22·37,440 = 823,680; ratio-4 states 21·(32,832 + 8,640) = 870,912; ratio-128 20·32,832 = 656,640 →
    # one block = 1,002,240 B (0.22: 1,051,776), no stride alignment.
    sets = rows(con, "SELECT storage_kind, window_tokens, block_tokens, layers, raw_page_bytes, page_bytes, group_size,"
                     " request_groups FROM engine_kv_buckets WHERE engine_id = ? AND model_id = 'deepseek-v4-flash'"
                     " AND kv_dtype = 'fp8' AND tp = 2 ORDER BY block_tokens", [E033])
    assert [(s["storage_kind"], s["window_tokens"], s["block_tokens"], s["layers"], s["raw_page_bytes"],
             s["request_groups"]) for s in sets] == [
        ("sliding", 8, 4, 42, 21 * 32832 + 21 * 8640, 1),
        ("sliding", 128, 8, 20, 20 * 32832, 1),
        ("sliding", 128, 64, 43, 43 * 37440, 2),
        ("mla", None, 256, 62, 21 * 37440 + 21 * 8640 + 20 * 1728, 1)]
    assert {(s["page_bytes"], s["group_size"]) for s in sets} == {(1002240, 1)}
    lay = one(con, "SELECT * FROM engine_kv_layout WHERE engine_id = ? AND model_id = 'deepseek-v4-flash'"
                   " AND kv_dtype = 'fp8' AND tp = 2", [E033])
    assert (lay["layout_mode"], lay["num_groups"], lay["block_size_tokens"], lay["block_bytes"]) == (
        "block_outermost", 5, 256, 1002240)
    assert (lay["block_size"], lay["block_size_is_default"], lay["k_eq_v_stored_twice"]) == (256, True, False)


def test_033_pro_block(con):
    # Pro: MLA {37,440: 30, 8,640: 30, 1,728: 31} unbalanced; window 61, ratio-4 states 30 + 30, ratio-128 31.
    # _approximate_gcd(61, 30, 31) from 30: 30 pads 29+0+29 = 58, 31 pads 1+1+0 = 2, 32 pads 3+2+1 = 6 → 31; window
    # in cdiv(61, 31) = 2 groups.  Widest: MLA 30·37,440 + 30·8,640 + 31·1,728 = 1,435,968; window 31·37,440 =
    # 1,160,640; states 30·41,472 = 1,244,160; ratio-128 31·32,832 = 1,017,792 → 1,435,968 B.
    lay = one(con, "SELECT * FROM engine_kv_layout WHERE engine_id = ? AND model_id = 'deepseek-v4-pro'"
                   " AND kv_dtype = 'fp8' AND tp = 8", [E033])
    assert (lay["num_groups"], lay["group_size"], lay["block_bytes"]) == (5, 1, 1435968)


def test_033_flash_h200_tp2_by_hand(con):
    # 0.33 holds T = 2 × 8,192 = 16,384 tokens in flight (async scheduling, max_in_flight_tokens, config/vllm.py
    # 0.33.0:600-610).  L = 32,768: MLA cdiv(32768, 256) = 128; window 2 × (cdiv(min(127 + 16384, L), 64) + 1 = 259)
    # = 518; ratio-4 states cdiv(16391, 4) + 1 = 4,099; ratio-128 cdiv(16511, 8) + 1 = 2,065 → 6,810.
    # L = 131,072: 512 + 518 + 4,099 + 2,065 = 7,194.  "Maximum concurrency" = num_blocks / Σ_g blocks_g
    # (v1/core/kv_cache_utils.py 0.33.0:1061-1098; no page weighting, unlike 0.22).
    q = ("SELECT * FROM engine_capacity_at([32768, 131072]) WHERE engine_id = ? AND model_id = 'deepseek-v4-flash'"
         " AND hardware_id = 'h200' AND kv_dtype = 'fp8' AND weights_dtype = 'fp8' AND tp = 2 AND default_batched"
         " ORDER BY max_model_len")
    r32, r128 = rows(con, q, [E033])
    assert (r32["max_num_batched_tokens"], r32["blocks_per_request"], r128["blocks_per_request"]) == (8192, 6810, 7194)
    assert r32["concurrency_blocks_per_request"] == 6810 and r128["concurrency_blocks_per_request"] == 7194
    avail = r32["available_kv_bytes"]
    assert r32["num_blocks"] == r128["num_blocks"] == int(avail // 1002240)
    n = r32["num_blocks"]
    assert r32["logged_kv_tokens"] == int(n / 6810 * 32768) and r128["logged_kv_tokens"] == int(n / 7194 * 131072)
    assert r32["admitted_seqs"] == n // 6810 and r128["admitted_seqs"] == n // 7194 and r32["starts"]
    # The same arithmetic at a given pool, 48 GiB: 51,539,607,552 // 1,002,240 = 51,424 blocks; concurrency
    # 51,424 / 6,810 = 7.55 → int(51,424 × 32,768 / 6,810 = 247,439.3) tokens at 32K; 51,424 / 7,194 = 7.15 →
    # int(936,926.1) at 128K; 7 requests either way.
    got = {L: one(con, "SELECT * FROM engine_capacity_for_memory(?, ?, 8192) WHERE engine_id = ?"
                       " AND model_id = 'deepseek-v4-flash' AND kv_dtype = 'fp8' AND tp = 2", [48 * GIB, L, E033])
           for L in (32768, 131072)}
    assert {L: (g["num_blocks"], g["blocks_per_request"], g["logged_kv_tokens"], g["admitted_seqs"])
            for L, g in got.items()} == {32768: (51424, 6810, 247439, 7), 131072: (51424, 7194, 936926, 7)}


def test_033_the_51041_pool_under_the_new_packing(con):
    # No public 0.33 startup log for V4 was found.  For scale, #51041's 0.26 pool (7.7 GiB, L = 121,344, T = 16,384)
    # under 0.33's packing: 8,267,811,545 // 1,002,240 = 8,249 blocks (0.26: 7,860), the same 7,156 blocks per
    # request, but concurrency no longer weighs the sliding groups by their pages:
    # 8,249 × 121,344 / 7,156 = 139,877.97 → 139,877
    # tokens (0.26: 149,235; logged "150K").
    # (0.33's argument is max_num_batched_tokens 8,192: the release doubles it in flight itself.)
    r = one(con, "SELECT * FROM engine_capacity_for_memory(?, 121344, 8192) WHERE engine_id = ?"
                 " AND model_id = 'deepseek-v4-flash' AND kv_dtype = 'fp8' AND tp = 2", [7.7 * GIB, E033])
    assert (r["num_blocks"], r["blocks_per_request"], r["concurrency_blocks_per_request"]) == (8249, 7156, 7156)
    assert r["logged_kv_tokens"] == int(8249 / 7156 * 121344) == 139877


def test_033_block_size_is_256_set_or_not(con):
    # platforms/interface.py 0.33.0:766-779: unset, the one size every V4 backend takes (the sparse MLA and indexer
    # backends take 256 only); --block-size 256 gives the same rows, another size no row.
    q = ("SELECT block_size, block_size_is_default, num_blocks, blocks_per_request FROM engine_capacity_at([32768],"
         " block_size := {}) WHERE engine_id = ? AND model_id = 'deepseek-v4-flash' AND hardware_id = 'h200'"
         " AND kv_dtype = 'fp8' AND tp = 2 AND weights_dtype = 'fp8' ORDER BY ALL")
    unset, at256 = (rows(con, q.format(b), [E033]) for b in ("NULL", "256"))
    assert unset and unset == at256 and {(r["block_size"], r["block_size_is_default"]) for r in unset} == {(256, True)}
    assert not rows(con, q.format(64), [E033])


def test_033_without_a_two_page_balanced_bucket_gives_no_row(tmp_path):
    # A V4-like entry whose ratio-4 layers have no indexer: its ratio-4 state bucket holds one page size, so no
    # balanced bucket has two (the MLA one, 21 + 20 layers, is unbalanced) and vLLM sizes the state buckets by an
    # anchor block instead (kv_cache_planning.py 0.33.0:995-1021), which kvreg does not model — no row under 0.33
    # rather than a guess; 0.22's layer tuples still lay it out (every sliding page fits the 37,440 MLA page).
    import shutil

    import yaml

    from kvreg.build import memory_connection
    from tests.conftest import ROOT
    from tests.registry_factory import hardware_entry, write_project
    from kvreg.configfill import filled_data  # the entry with the geometry its shipped config gives

    odd = filled_data(ROOT / "registry/models/deepseek-v4-flash.yaml")
    odd["id"], odd["hf_id"] = "v4-noindex", "test/v4-noindex"
    for g in odd["layer_groups"]:
        if g.get("compress") == 4:
            g.pop("index_head_dim", None)
            if g["kind"] == "recurrent":
                g["state"] = g["state"][:1]
    write_project(tmp_path, {"v4-noindex": odd}, {"hw": hardware_entry("hw")})
    shutil.rmtree(tmp_path / "registry/engines")
    shutil.copytree(ROOT / "registry/engines", tmp_path / "registry/engines")
    c = memory_connection(tmp_path)
    got = c.execute("SELECT DISTINCT engine_id FROM engine_kv_layout WHERE model_id = 'v4-noindex'").fetchall()
    assert got == [(ENGINE,)]
