"""Validated entries → one pandas frame per entity, each checked by a pandera schema.

The frames are exactly the DuckDB base tables the SQL views read.  Column
names carry their unit (``*_bytes``, ``*_tokens``, ``*_per_s``); every value is
in base units.  ``file``/``line`` columns let SQL checks point back at YAML.
No table's columns are written out here.  The tables in :data:`ENTRY_TABLES`, the checkpoints and
hardware_prices (and the engine and throughput ones built the same way) take their columns from the
entry models' ``Column`` markers (kvreg/entry_tables.py); report_items from the ``Item`` markers; the
computed tables (weight_tensors, field_provenance, the axes) from the marked fields of the record that
produces their rows (kvreg/table_specs.py ``RecordTable``).  Only keys and columns computed from several
fields (file, line, arithmetic) are declared here, as ``Derived``.
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from typing import Annotated, NamedTuple

from kvreg.engine_tables import ENGINE_SPECS, ENGINE_TABLES, engine_rows
from kvreg.entry_tables import Derived, EntryTable, column_checks, columns, rows as entry_rows
from kvreg.provenance import FACT_KINDS, FieldFact, field_facts
from kvreg.table_specs import (ItemTable, KeyedTable, RecordTable, UnionTable, keyed_checks, keyed_columns, keyed_rows,
                               keyed_tables)
from kvreg.throughput_tables import MEASUREMENTS, THROUGHPUT_TABLES, throughput_rows
from kvreg.registry import Registry
from kvreg.schema.columns import Column
from kvreg.schema.common import Dtype, Entry
from kvreg.schema.engine import EngineEntry
from kvreg.schema.hardware import HardwareEntry, Price
from kvreg.schema.model import Checkpoint, ModelEntry, Quantization
from kvreg.schema.report import ReportEntry
from kvreg.units import KIB, MIB
from kvreg.weights import TensorGroup, tensor_groups

class Precision(NamedTuple):
    """One row of the ``precisions`` table (the fields are its columns)."""

    dtype: Annotated[Dtype, Column()]
    bytes_per_element: Annotated[float, Column()]
    for_weights: Annotated[bool, Column()]
    """usable for weights"""
    for_kv: Annotated[bool, Column()]
    """usable for the KV cache"""
    note: Annotated[str, Column()]


# Bytes per element of each precision.  mxfp4: 32 fp4 values share one 8-bit
# scale (OCP MX spec v1.0) → (32·4+8)/(32·8) = 0.53125; nvfp4: 16 fp4 values
# share one fp8 scale (NVIDIA Blackwell docs) → (16·4+8)/(16·8) = 0.5625.
PRECISIONS = [Precision(*p) for p in [
    # dtype, bytes/element, usable for weights, for KV cache, note
    ("fp32", 4.0, True, False, "IEEE single"),
    ("bf16", 2.0, True, True, "bfloat16"),
    ("fp16", 2.0, True, False, "IEEE half; a KV cache in fp16 costs the same as bf16"),
    ("fp8", 1.0, True, True, "e4m3/e5m2, per-tensor scales outside the page (vLLM)"),
    ("int8", 1.0, True, False, "8-bit integer weights"),
    ("int4", 0.5, True, False, "4-bit weights, group scales not counted"),
    ("mxfp4", 0.53125, True, False, "OCP MX fp4: 32 values + one 8-bit scale"),
    ("nvfp4", 0.5625, True, False, "NVIDIA fp4: 16 values + one fp8 scale"),
]]

# The generic checkpoint of a quantized precision an entry lists no checkpoint for (how its
# quantized tensors are stored), as the Quantization block an entry would write: fp8/int8: llm-compressor
# FP8_DYNAMIC / W8A8 schemes (per-channel fp32 scales as vLLM's CompressedTensorsW8A8Fp8/Int8 create them);
# int4: GPTQ symmetric group 128 with fp16 scales; nvfp4: ModelOpt NVFP4 (16 values per fp8 e4m3 scale);
# mxfp4: OCP MX (32 values per e8m0 scale, one byte).  Quantized groups: the block's default, QUANTIZED_DEFAULT.
QUANT_DEFAULTS: dict[str, Quantization] = {
    "fp8": Quantization(method="fp8-per-channel", weight_bits=8, scale_dtype="fp32"),
    "int8": Quantization(method="int8-per-channel", weight_bits=8, scale_dtype="fp32"),
    "int4": Quantization(method="gptq-g128", weight_bits=4, group_size=128, scale_dtype="fp16"),
    "nvfp4": Quantization(method="nvfp4", weight_bits=4, group_size=16, scale_dtype="fp8"),
    "mxfp4": Quantization(method="mxfp4", weight_bits=4, group_size=32, scale_dtype="fp8"),
}


GENERIC_CHECKPOINTS = [Checkpoint(weights_dtype=p.dtype, quantization=QUANT_DEFAULTS.get(p.dtype))
                       for p in PRECISIONS if p.for_weights]
"""The generic checkpoint of each weight precision, in :data:`PRECISIONS` order: quantized as
:data:`QUANT_DEFAULTS` says, a 16/32-bit one unquantized."""


def all_checkpoints(m: ModelEntry) -> list[Checkpoint]:
    """The model's listed checkpoints, then the generic one (:data:`GENERIC_CHECKPOINTS`) of each weight
    precision it lists none for."""
    listed = {c.weights_dtype for c in m.checkpoints}
    return [*m.checkpoints, *(c for c in GENERIC_CHECKPOINTS if c.weights_dtype not in listed)]


# Standard context ladder 1Ki … 1Mi tokens (powers of two), plus each model's native context.
CONTEXT_LADDER = [2**k for k in range(10, 21)]
TP_SIZES = [1, 2, 4, 8, 16]
# Concurrent sequences per replica for the roofline grid: 1, 2, 4, …, 1024.  A scenario's own
# capacity limit (max_seqs) is a column of the roofline view, not a row here.
BATCH_SIZES = [2**k for k in range(0, 11)]

I, S, B = "Int64", "string", "boolean"


def _entry_line(r):
    return r.item.doc.where(("id",))[0]


_FILE = Derived(S, False, lambda r: r.item.doc.file)


def _line_if_given(*path: str) -> Derived:
    """The YAML line of the field at ``path`` of the entry, NULL when the field is not given."""
    def line(r):
        obj = r.item.entry
        for name in path:
            obj = getattr(obj, name)
        return None if obj is None else r.item.doc.where(path)[0]
    return Derived(I, True, line)

# Tables whose columns follow from the entry models' Column markers (kvreg/entry_tables.py); only the
# keys and the columns computed here (file, line, arithmetic) are written out.
ENTRY_TABLES: dict[str, EntryTable] = {t.name: t for t in [
    EntryTable("models", "model", ModelEntry, ("model_id",),
               derived={"file": _FILE, "line": Derived(I, False, _entry_line)}),
    # a group filled from the shipped config is located in it (kvreg/configfill.py)
    EntryTable("layer_groups", "model", ModelEntry, ("model_id", "group_idx"), ("layer_groups",), derived={
        "file": Derived(S, False, lambda r: r.item.doc.file_of(("layer_groups", r.idx[0]))),
        "line": Derived(I, False, lambda r: r.item.doc.where(("layer_groups", r.idx[0]))[0])}),
    EntryTable("state_tensors", "model", ModelEntry, ("model_id", "group_idx", "tensor_idx"),
               ("layer_groups", "state"), derived={
                   "elements": Derived(I, False, lambda r: r.obj.elements),
                   # the extent of the axis tensor parallelism divides (heads or channels)
                   "split_dim": Derived(I, False, lambda r: r.obj.shape[r.obj.axis])}),
    EntryTable("hardware", "hardware", HardwareEntry, ("hardware_id",),
               derived={"file": _FILE, "line": Derived(I, False, _entry_line)}),
    EntryTable("residents", "hardware", HardwareEntry, ("hardware_id", "resident_idx"), ("residents",), derived={
        "file": _FILE, "line": Derived(I, False, lambda r: r.item.doc.where(("residents", r.idx[0]))[0])}),
    EntryTable("hardware_efficiency", "hardware", HardwareEntry, ("hardware_id",), ("efficiency",)),
    EntryTable("engines", "engine", EngineEntry, ("engine_id",), exclude=("confidence",),
               derived={"file": _FILE, "line": Derived(I, False, _entry_line)}),
    # every entry's sources, of every kind
    EntryTable("sources", None, Entry, ("kind", "entry_id", "source_idx"), ("sources",)),
    EntryTable("report_workloads", "report", ReportEntry, ("report_id",), exclude=("name", "confidence"), derived={
        # where request_rate_per_s / engine_settings.block_size are written (NULL when not given): the checks
        # that a rate is convertible and that every listed release accepts the block size point there
        "request_rate_line": _line_if_given("workload", "request_rate_per_s"),
        "file": Derived(S, True, lambda r: r.item.doc.file),
        "block_size_line": _line_if_given("engine_settings", "block_size")}),
]}

# Tables of one dict or list field each (a Rows marker): entry id, key, value.
KEYED_TABLES: dict[str, KeyedTable] = {t.name: t for t in keyed_tables(HardwareEntry, "hardware", "hardware_id")}


def _checkpoint_id(r) -> str:
    """A listed checkpoint's hf_id (else model:dtype:position); a generic one's model:dtype:generic."""
    mid, c, i = r.item.entry.id, r.chain[1], r.idx[0]
    if i >= len(r.item.entry.checkpoints):
        return f"{mid}:{c.weights_dtype}:generic"
    return c.hf_id or f"{mid}:{c.weights_dtype}:{i}"


def _is_default(r) -> bool:
    """Generic: the only one of its precision.  Listed: marked default, or the first of its precision when
    none of that precision is marked."""
    m, c, i = r.item.entry, r.obj, r.idx[0]
    if i >= len(m.checkpoints) or c.default:
        return True
    same = [j for j, o in enumerate(m.checkpoints) if o.weights_dtype == c.weights_dtype]
    return same[0] == i and not any(m.checkpoints[j].default for j in same)


_CHECKPOINT_ID = Derived(S, False, _checkpoint_id, first=True)
# One row per checkpoint a model entry lists (listed = true), plus one generic checkpoint per weight precision
# the entry lists none for (listed = false, quantized as QUANT_DEFAULTS): kvreg/schema/model.py Checkpoint and
# Quantization markers; checkpoint_bytes the measured size, bytes_source its source.
CHECKPOINTS = EntryTable(
    "checkpoints", "model", ModelEntry, ("model_id", "checkpoint_idx"), ("checkpoints",), exclude=("checkpoint_idx",),
    items={"checkpoints": all_checkpoints}, derived={
        "checkpoint_id": _CHECKPOINT_ID,
        "listed": Derived(B, False, lambda r: r.idx[0] < len(r.item.entry.checkpoints), after="weights_dtype"),
        "is_default": Derived(B, False, _is_default, after="listed"),
        "bytes_source": Derived(S, True, lambda r: r.obj.bytes.source if r.obj.bytes else None)})
# Which tensor groups a checkpoint stores quantized (the others in the model's 16-bit dtype): Quantization.quantized.
CHECKPOINT_QUANTIZED = EntryTable(
    "checkpoint_quantized", "model", ModelEntry, ("model_id", "checkpoint_idx", "group_idx"),
    ("checkpoints", "quantization", "quantized"), exclude=("checkpoint_idx", "group_idx"),
    items={"checkpoints": all_checkpoints}, derived={"checkpoint_id": _CHECKPOINT_ID})

_PRICE_LINE = {"file": _FILE, "line": Derived(I, False, lambda r: r.item.doc.where(("price",))[0])}
# Prices as read (hardware `price:` blocks): one row per rental quote (USD per device-hour; Price.quotes: the
# one-quote form, then rental) and one per purchase price (USD per device), columns from the RentalQuote and
# Purchase markers (kvreg/schema/hardware.py); the rate bases are SQL (kvreg/sql/115_hardware_rates.sql).
HARDWARE_PRICES = UnionTable("hardware_prices", (
    EntryTable("hardware_prices", "hardware", HardwareEntry, ("hardware_id", "price_idx"), ("price", "rental"),
               items={"rental": Price.quotes}, derived={
                   "price_kind": Derived(S, False, lambda r: "rental", first=True),
                   "source_id": Derived(S, True, lambda r: r.obj.usd_per_hour.source), **_PRICE_LINE}),
    EntryTable("hardware_prices", "hardware", HardwareEntry, ("hardware_id",), ("price", "purchase"), derived={
        "price_idx": Derived(I, False, lambda r: len(r.chain[1].quotes()), first=True),
        "price_kind": Derived(S, False, lambda r: "purchase", first=True),
        "source_id": Derived(S, True, lambda r: r.obj.usd.source), **_PRICE_LINE}),
))

# Report definitions (reports/*.yaml): one row per item a report lists (kvreg/schema/report.py Item markers), for
# the reference check and for the report queries; item_value holds numeric items (context tokens, TP size).
REPORT_ITEMS = ItemTable("report_items", "report", ReportEntry, "report_id")


def _model_tensors(registry):
    for mid, item in sorted(registry.entries.get("model", {}).items()):
        for t in tensor_groups(item.entry):
            yield mid, t


def _facts(registry):
    for kind, loaded in registry.entries.items():
        if kind in FACT_KINDS:
            for eid, item in sorted(loaded.items()):
                checked = registry.config_checked.get(eid, {}) if kind == "model" else {}
                for f in field_facts(item.entry, checked):
                    # a number filled from the shipped config is located there (kvreg/configfill.py)
                    yield (kind, eid, item.doc.file_of(f.path), item.doc.where(f.path)), f


class Context(NamedTuple):
    """A context length of the axis every scenario view crosses: the ladder, each model's native context,
    each report's contexts and workload context."""

    context_tokens: Annotated[int, Column()]
    label: Annotated[str, Column()]
    """``32Ki`` (:func:`context_label`)"""


class TpSize(NamedTuple):
    tp: Annotated[int, Column()]


class BatchSize(NamedTuple):
    batch: Annotated[int, Column()]


def _contexts(registry):
    natives = {int(i.entry.native_context.value) for i in registry.entries.get("model", {}).values()}
    reports = [i.entry for i in registry.entries.get("report", {}).values()]
    asked = {c for r in reports for c in r.contexts} | {r.workload.context for r in reports}
    return [(None, Context(c, context_label(c))) for c in sorted(set(CONTEXT_LADDER) | natives | asked)]


def _tps(registry):
    asked = {t for i in registry.entries.get("report", {}).values() for t in i.entry.tp}
    return [(None, TpSize(t)) for t in sorted(set(TP_SIZES) | asked)]


# Tables computed throughout (their columns the records' marked fields, kvreg/table_specs.py RecordTable).
RECORD_TABLES: dict[str, RecordTable] = {t.name: t for t in [
    # The model's weight tensors by group (kvreg/weights.py TensorGroup): elements and how TP splits them.
    RecordTable("weight_tensors", TensorGroup, _model_tensors,
                {"model_id": Derived(S, False, lambda mid: mid, first=True)}),
    # One row per number a fact entry states (kvreg/provenance.py FieldFact); the `provenance` view adds the
    # source's url and title (kvreg/sql/005_provenance.sql).
    RecordTable("field_provenance", FieldFact, _facts, {
        "kind": Derived(S, False, lambda c: c[0], first=True), "entry_id": Derived(S, False, lambda c: c[1], first=True),
        "file": Derived(S, False, lambda c: c[2]), "line": Derived(I, False, lambda c: c[3][0]),
        "col": Derived(I, False, lambda c: c[3][1])}),
    RecordTable("precisions", Precision, lambda registry: [(None, p) for p in PRECISIONS]),
    RecordTable("contexts", Context, _contexts),
    RecordTable("tp_sizes", TpSize, _tps),
    RecordTable("batch_sizes", BatchSize, lambda registry: [(None, BatchSize(b)) for b in BATCH_SIZES]),
]}

_SPECS = {"hardware_prices": HARDWARE_PRICES, "report_items": REPORT_ITEMS, **RECORD_TABLES}
"""The tables of kvreg/table_specs.py specs, by name."""

# table -> {column: (pandas dtype, nullable)}, in the database's table order
TABLES: dict[str, dict[str, tuple[str, bool]]] = {
    "models": columns(ENTRY_TABLES["models"]),
    "layer_groups": columns(ENTRY_TABLES["layer_groups"]),
    "state_tensors": columns(ENTRY_TABLES["state_tensors"]),
    "checkpoints": columns(CHECKPOINTS),
    "checkpoint_quantized": columns(CHECKPOINT_QUANTIZED),
    "weight_tensors": RECORD_TABLES["weight_tensors"].columns(),
    "hardware": columns(ENTRY_TABLES["hardware"]),
    "hardware_prices": HARDWARE_PRICES.columns(),
    # peak_flops and native_precisions (kvreg/schema/hardware.py Rows markers): one row per dtype
    **{t.name: keyed_columns(t) for t in KEYED_TABLES.values()},
    "residents": columns(ENTRY_TABLES["residents"]),
    "engines": columns(ENTRY_TABLES["engines"]),
    "sources": columns(ENTRY_TABLES["sources"]),
    "field_provenance": RECORD_TABLES["field_provenance"].columns(),
    **{n: RECORD_TABLES[n].columns() for n in ("precisions", "contexts", "tp_sizes", "batch_sizes")},
    "hardware_efficiency": columns(ENTRY_TABLES["hardware_efficiency"]),
    "report_items": REPORT_ITEMS.columns(),
    # One row per report: its workload, engine_settings (NULL = each release's default, passed to the macros'
    # knob parameters) and cost_basis, flattened (kvreg/schema/report.py markers); tpot_ms in seconds.
    "report_workloads": columns(ENTRY_TABLES["report_workloads"]),
    **ENGINE_TABLES,
    **THROUGHPUT_TABLES,
}

# The pydantic constraints of the marked fields (entry_tables.column_checks): the frames are checked
# against the same bounds, enum values and patterns validation enforces, declared once on the field.
MARKED_TABLES: dict[str, EntryTable] = {s.name: s for s in [*ENTRY_TABLES.values(), *ENGINE_SPECS, MEASUREMENTS,
                                                             CHECKPOINTS, CHECKPOINT_QUANTIZED]}
CHECKS: dict[str, dict[str, tuple]] = {name: column_checks(spec) for name, spec in MARKED_TABLES.items()}
CHECKS |= {name: keyed_checks(t) for name, t in KEYED_TABLES.items()}
CHECKS |= {t.name: t.checks() for t in [HARDWARE_PRICES, *RECORD_TABLES.values()]}
_PANDERA = {"gt": pa.Check.gt, "ge": pa.Check.ge, "lt": pa.Check.lt, "le": pa.Check.le,
            "isin": lambda v: pa.Check.isin(list(v)), "pattern": pa.Check.str_contains}


def schema(cols: dict[str, tuple[str, bool]], checks: dict[str, tuple] | None = None) -> pa.DataFrameSchema:
    """The pandera schema of a table: ``{column: (pandas dtype, nullable)}`` (:data:`TABLES`) and the
    columns' ``(op, value)`` constraints (:data:`CHECKS`; gt/ge/lt/le, isin, pattern); strict, coercing."""
    checks = checks or {}
    return pa.DataFrameSchema({c: pa.Column(t, nullable=n, checks=[_PANDERA[op](v) for op, v in checks.get(c, ())])
                               for c, (t, n) in cols.items()}, strict=True, coerce=True)


SCHEMAS = {name: schema(cols, CHECKS.get(name)) for name, cols in TABLES.items()}


def context_label(tokens: int) -> str:
    """``32Ki`` for 32,768; ``1Mi`` for 1,048,576; plain digits otherwise."""
    if tokens % MIB == 0:
        return f"{tokens // MIB}Mi"
    if tokens % KIB == 0:
        return f"{tokens // KIB}Ki"
    return f"{tokens:,}"


def _rows(registry: Registry) -> dict[str, list[dict]]:
    rows = {spec.name: entry_rows(spec, registry) for spec in [*ENTRY_TABLES.values(), CHECKPOINTS, CHECKPOINT_QUANTIZED]}
    rows |= {name: keyed_rows(keyed, registry) for name, keyed in KEYED_TABLES.items()}
    rows |= {name: spec.rows(registry) for name, spec in _SPECS.items()}
    rows.update(engine_rows(registry))
    rows.update(throughput_rows(registry))
    return rows


def frames(registry: Registry) -> dict[str, pd.DataFrame]:
    """One validated DataFrame per base table (see :data:`TABLES`).

    Built once per loaded registry and kept on it (``registry.frames``): the cross-entry checks
    build them during validation and the database build reuses them.

    Raises:
        pandera.errors.SchemaError: a loader bug produced a column of the wrong
            type or a null where none is allowed (entries were already validated).
    """
    if registry.frames is not None:
        return registry.frames
    out = {}
    rows = _rows(registry)
    for name, cols in TABLES.items():
        out[name] = SCHEMAS[name].validate(pd.DataFrame(rows[name], columns=list(cols)))
    registry.frames = out
    return out
