"""The report's quirk sentence for an engine row at a TP whose KV heads do not split (engine_capacity's refusal
'tp_heads'): issue 12 asked for no generic sentence; this one had none at all.

Phi-4 has 40 query heads and 10 KV heads (registry/models/phi-4.yaml): at TP 4 the KV heads are divided,
10 ÷ 4 = 2.5 is not whole, so every engine stops at load (kvreg/sql/037_tp_sharding.sql, vLLM's QKVParallelLinear
`divide`); of the axis' TP sizes 1, 2, 4, 8, 16 only 1 and 2 split them (10 ÷ 8 = 1.25, 16 ÷ 10 = 1.6).
"""

from __future__ import annotations

REPORT = "tidy-tp-heads"
ENGINE = "vllm-0.22-0.26"
ITEMS = [("model", 0, "phi-4", None), ("hardware", 0, "h100-sxm-80gb", None), ("engine", 0, ENGINE, None),
         ("weights_dtype", 0, "bf16", None), ("kv_dtype", 0, "bf16", None), ("tp", 0, "1", 1), ("tp", 1, "4", 4),
         ("context", 0, "8192", 8192)]


def test_tp_heads_refusal_has_a_quirk_sentence_from_the_numbers(con):
    from kvreg.engine_fit import tp_heads_quirk
    from kvreg.report.context import rows

    con.execute("CREATE OR REPLACE TEMP TABLE report_engine_capacity AS SELECT * FROM engine_capacity_at([8192],"
                " only_models := ['phi-4'], only_hardware := ['h100-sxm-80gb'], only_engines := [?])"
                " WHERE weights_dtype = 'bf16' AND kv_dtype = 'bf16' AND tp IN (1, 4)", [ENGINE])
    try:
        con.executemany("INSERT INTO report_items (report_id, item_kind, item_idx, item_id, item_value)"
                        " VALUES (?, ?, ?, ?, ?)", [(REPORT, *i) for i in ITEMS])
        got = [tp_heads_quirk(con, q) for q in rows(con, "engine_quirks", {"report": REPORT})]
        refusals = con.execute("SELECT tp, refusal FROM report_engine_capacity WHERE default_batched ORDER BY tp"
                               ).fetchall()
    finally:
        con.execute("DELETE FROM report_items WHERE report_id = ?", [REPORT])
        con.execute("DROP TABLE IF EXISTS temp.report_engine_capacity")
    assert refusals == [(1, None), (4, "tp_heads")]
    (q,) = [q for q in got if q.trigger == "tp_heads"]
    assert (q.engine_id, q.quirk_id, q.n_flagged, q.n_listed, q.at_tp, q.at_hardware_id) == \
        (ENGINE, "tp-heads", 1, 2, 4, "h100-sxm-80gb")
    assert q.text.startswith("the engine refuses to load phi-4 at TP 4 (it stops while building the model, before"
                             " any KV pool): tensor parallelism cannot split phi-4's 10 KV heads evenly at this TP")
    assert "10 KV heads ÷ TP 4 = 2.5, not a whole number (vLLM QKVParallelLinear, model_executor/layers/linear.py" \
           " 0.19.0:1010-1017" in q.text
    assert q.text.endswith("; the heads split at TP 1, 2")
    # the release's own quirks keep their text and come first
    assert all(r.text for r in got) and got[-1] is q
