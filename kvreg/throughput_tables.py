"""Throughput base table: one row per published measurement (registry/throughput/*.yaml).

Merged into :data:`kvreg.tables.TABLES` (validated by pandera, loaded like every
other base table).  Units in the column names: tokens, tokens per second, seconds.
``source_id`` is the entry id: the unit left out in leave-one-source-out.
"""

from __future__ import annotations

from kvreg.entry_tables import Derived, EntryTable, columns, rows
from kvreg.schema.throughput import ThroughputEntry

I, S = "Int64", "string"

# Columns from the marked fields of ThroughputEntry (shared by its measurements) and Measurement
# (kvreg/schema/throughput.py, kvreg/entry_tables.py); computed here: the source's first URL and the line.
MEASUREMENTS = EntryTable(
    "throughput_measurements", "throughput", ThroughputEntry, ("source_id", "measurement_idx"), ("measurements",),
    derived={
        "source_url": Derived(S, True, lambda r: next((s.url for s in r.item.entry.sources if s.url), None)),
        "file": Derived(S, False, lambda r: r.item.doc.file),
        "line": Derived(I, False, lambda r: r.item.doc.where(("measurements", r.idx[0]))[0]),
    })

THROUGHPUT_TABLES: dict[str, dict[str, tuple[str, bool]]] = {"throughput_measurements": columns(MEASUREMENTS)}


def throughput_rows(registry) -> dict[str, list[dict]]:
    """Rows of :data:`THROUGHPUT_TABLES` from validated throughput entries (kvreg/schema/throughput.py)."""
    return {"throughput_measurements": rows(MEASUREMENTS, registry)}
