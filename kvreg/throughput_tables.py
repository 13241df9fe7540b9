"""Throughput base table: one row per published measurement (registry/throughput/*.yaml).

Merged into :data:`kvreg.tables.TABLES` (validated by pandera, loaded like every
other base table).  Units in the column names: tokens, tokens per second, seconds.
``source_id`` is the entry id: the unit left out in leave-one-source-out.
"""

from __future__ import annotations

I, F, S = "Int64", "Float64", "string"

THROUGHPUT_TABLES: dict[str, dict[str, tuple[str, bool]]] = {
    "throughput_measurements": {
        "source_id": (S, False), "measurement_idx": (I, False), "engine_id": (S, False),
        "engine_version": (S, False), "in_fit": ("boolean", False), "scenario": (S, False), "source_date": (S, False),
        "hardware_id": (S, False), "model_id": (S, False), "weights_dtype": (S, False), "kv_dtype": (S, False),
        "tp": (I, False), "input_tokens": (I, False), "output_tokens": (I, False), "concurrency": (I, True),
        "request_rate_per_s": (F, True), "max_batch": (I, True), "output_tok_per_s": (F, False),
        "ttft_p50_s": (F, True), "ttft_p99_s": (F, True), "tpot_p50_s": (F, True), "tpot_p99_s": (F, True),
        "source_url": (S, True), "file": (S, False), "line": (I, False),
    },
}


def throughput_rows(registry) -> dict[str, list[dict]]:
    """Rows of :data:`THROUGHPUT_TABLES` from validated throughput entries (kvreg/schema/throughput.py)."""
    rows: list[dict] = []
    for sid, item in sorted(registry.entries.get("throughput", {}).items()):
        t, doc = item.entry, item.doc
        url = next((s.url for s in t.sources if s.url), None)
        for i, m in enumerate(t.measurements):
            rows.append(dict(
                source_id=sid, measurement_idx=i, engine_id=t.engine, engine_version=t.engine_version,
                in_fit=t.in_fit, scenario=m.scenario or t.scenario, source_date=str(t.date), hardware_id=m.hardware,
                model_id=m.model, weights_dtype=m.weights_dtype, kv_dtype=m.kv_dtype, tp=m.tp,
                input_tokens=m.input_tokens, output_tokens=m.output_tokens, concurrency=m.concurrency,
                request_rate_per_s=m.request_rate_per_s, max_batch=m.max_batch,
                output_tok_per_s=m.output_tok_per_s, ttft_p50_s=m.ttft_p50_s, ttft_p99_s=m.ttft_p99_s,
                tpot_p50_s=m.tpot_p50_s, tpot_p99_s=m.tpot_p99_s, source_url=url, file=doc.file,
                line=doc.where(("measurements", i))[0]))
    return {"throughput_measurements": rows}
