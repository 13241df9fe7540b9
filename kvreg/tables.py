"""Validated entries → one pandas frame per entity, each checked by a pandera schema.

The frames are exactly the DuckDB base tables the SQL views read.  Column
names carry their unit (``*_bytes``, ``*_tokens``, ``*_per_s``); every value is
in base units.  ``file``/``line`` columns let SQL checks point back at YAML.
The tables in :data:`ENTRY_TABLES` (and the engine and throughput ones built the same way) take
their columns from the entry models' ``Column`` markers (kvreg/entry_tables.py); the others are
written out here because every column is computed (checkpoints, prices, provenance, axes).
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from kvreg.engine_tables import ENGINE_SPECS, ENGINE_TABLES, engine_rows
from kvreg.entry_tables import (Derived, EntryTable, KeyedTable, column_checks, columns, keyed_checks, keyed_columns,
                                keyed_rows, keyed_tables, rows as entry_rows)
from kvreg.provenance import FACT_KINDS, field_facts
from kvreg.throughput_tables import MEASUREMENTS, THROUGHPUT_TABLES, throughput_rows
from kvreg.registry import Registry
from kvreg.schema.common import Entry
from kvreg.schema.engine import EngineEntry
from kvreg.schema.hardware import HardwareEntry
from kvreg.schema.model import ModelEntry
from kvreg.schema.report import ReportEntry
from kvreg.units import KIB, MIB

# Bytes per element of each precision.  mxfp4: 32 fp4 values share one 8-bit
# scale (OCP MX spec v1.0) → (32·4+8)/(32·8) = 0.53125; nvfp4: 16 fp4 values
# share one fp8 scale (NVIDIA Blackwell docs) → (16·4+8)/(16·8) = 0.5625.
PRECISIONS = [
    # dtype, bytes/element, usable for weights, for KV cache, note
    ("fp32", 4.0, True, False, "IEEE single"),
    ("bf16", 2.0, True, True, "bfloat16"),
    ("fp16", 2.0, True, False, "IEEE half; a KV cache in fp16 costs the same as bf16"),
    ("fp8", 1.0, True, True, "e4m3/e5m2, per-tensor scales outside the page (vLLM)"),
    ("int8", 1.0, True, False, "8-bit integer weights"),
    ("int4", 0.5, True, False, "4-bit weights, group scales not counted"),
    ("mxfp4", 0.53125, True, False, "OCP MX fp4: 32 values + one 8-bit scale"),
    ("nvfp4", 0.5625, True, False, "NVIDIA fp4: 16 values + one fp8 scale"),
]

# The generic checkpoint of a quantized precision an entry lists no checkpoint for (how its
# quantized tensors are stored): precision -> (method, weight bits, values per scale (None = one per
# output channel), scale dtype, zero points).  fp8/int8: llm-compressor FP8_DYNAMIC / W8A8 schemes
# (per-channel fp32 scales as vLLM's CompressedTensorsW8A8Fp8/Int8 create them); int4: GPTQ
# symmetric group 128 with fp16 scales; nvfp4: ModelOpt NVFP4 (16 values per fp8 e4m3 scale);
# mxfp4: OCP MX (32 values per e8m0 scale, one byte).  Quantized groups: QUANTIZED_DEFAULT.
QUANT_DEFAULTS: dict[str, tuple[str, int, int | None, str, bool]] = {
    "fp8": ("fp8-per-channel", 8, None, "fp32", False),
    "int8": ("int8-per-channel", 8, None, "fp32", False),
    "int4": ("gptq-g128", 4, 128, "fp16", False),
    "nvfp4": ("nvfp4", 4, 16, "fp8", False),
    "mxfp4": ("mxfp4", 4, 32, "fp8", False),
}

# Standard context ladder 1Ki … 1Mi tokens (powers of two), plus each model's native context.
CONTEXT_LADDER = [2**k for k in range(10, 21)]
TP_SIZES = [1, 2, 4, 8, 16]
# Concurrent sequences per replica for the roofline grid: 1, 2, 4, …, 1024.  A scenario's own
# capacity limit (max_seqs) is a column of the roofline view, not a row here.
BATCH_SIZES = [2**k for k in range(0, 11)]

I, F, S, B = "Int64", "Float64", "string", "boolean"


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
    EntryTable("layer_groups", "model", ModelEntry, ("model_id", "group_idx"), ("layer_groups",), derived={
        "file": _FILE, "line": Derived(I, False, lambda r: r.item.doc.where(("layer_groups", r.idx[0]))[0])}),
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

# table -> {column: (pandas dtype, nullable)}
TABLES: dict[str, dict[str, tuple[str, bool]]] = {
    "models": columns(ENTRY_TABLES["models"]),
    "layer_groups": columns(ENTRY_TABLES["layer_groups"]),
    "state_tensors": columns(ENTRY_TABLES["state_tensors"]),
    # One row per checkpoint a model entry lists (listed = true), plus one generic checkpoint per
    # weight precision the entry lists none for (listed = false, priced by QUANT_DEFAULTS).
    "checkpoints": {
        "model_id": (S, False), "checkpoint_id": (S, False), "hf_id": (S, True), "weights_dtype": (S, False),
        "listed": (B, False), "is_default": (B, False), "method": (S, True), "weight_bits": (I, True),
        "group_size": (I, True), "scale_dtype": (S, True), "zero_points": (B, False),
        "checkpoint_bytes": (I, True), "bytes_source": (S, True),
    },
    # Which tensor groups a checkpoint stores quantized (the others in the model's 16-bit dtype).
    "checkpoint_quantized": {"model_id": (S, False), "checkpoint_id": (S, False), "tensor_group": (S, False)},
    # The model's weight tensors by group (kvreg/weights.py): elements and how TP splits them.
    "weight_tensors": {
        "model_id": (S, False), "tensor_group": (S, False), "part": (S, False), "elements": (I, False),
        "shard": (S, False), "shard_parts": (I, True), "dtype": (S, True),
    },
    "hardware": columns(ENTRY_TABLES["hardware"]),
    # Prices as read (hardware `price:` blocks): one row per rental quote (USD per device-hour) and one
    # per purchase price (USD per device); the rate bases are SQL (kvreg/sql/115_hardware_rates.sql).
    "hardware_prices": {
        "hardware_id": (S, False), "price_idx": (I, False), "price_kind": (S, False), "usd": (F, False),
        "provider": (S, False), "date": (S, True), "source_id": (S, True),
        "file": (S, False), "line": (I, False),
    },
    # peak_flops and native_precisions (kvreg/schema/hardware.py Rows markers): one row per dtype
    **{t.name: keyed_columns(t) for t in KEYED_TABLES.values()},
    "residents": columns(ENTRY_TABLES["residents"]),
    "engines": columns(ENTRY_TABLES["engines"]),
    "sources": columns(ENTRY_TABLES["sources"]),
    # One row per number a fact entry states (kvreg/provenance.py); the `provenance` view adds the
    # source's url and title (kvreg/sql/005_provenance.sql).
    "field_provenance": {
        "kind": (S, False), "entry_id": (S, False), "field": (S, False), "value": (F, False),
        "source_id": (S, True), "basis": (S, False), "confidence": (S, False),
        "confidence_basis": (S, False), "note": (S, True), "file": (S, False), "line": (I, False),
        "col": (I, False),
    },
    "precisions": {
        "dtype": (S, False), "bytes_per_element": (F, False), "for_weights": (B, False),
        "for_kv": (B, False), "note": (S, False),
    },
    "contexts": {"context_tokens": (I, False), "label": (S, False)},
    "tp_sizes": {"tp": (I, False)},
    "batch_sizes": {"batch": (I, False)},
    "hardware_efficiency": columns(ENTRY_TABLES["hardware_efficiency"]),
    # Report definitions (reports/*.yaml): one row per item a report lists, for the reference check
    # and for the report queries; item_value holds numeric items (context tokens, TP size).
    "report_items": {
        "report_id": (S, False), "item_kind": (S, False), "item_idx": (I, False), "item_id": (S, False),
        "item_value": (I, True), "key": (S, False), "file": (S, False), "line": (I, False),
    },
    # One row per report: its workload, engine_settings (NULL = each release's default, passed to the macros'
    # knob parameters) and cost_basis, flattened (kvreg/schema/report.py markers); tpot_ms in seconds.
    "report_workloads": columns(ENTRY_TABLES["report_workloads"]),
    **ENGINE_TABLES,
    **THROUGHPUT_TABLES,
}

# The pydantic constraints of the marked fields (entry_tables.column_checks): the frames are checked
# against the same bounds, enum values and patterns validation enforces, declared once on the field.
MARKED_TABLES: dict[str, EntryTable] = {s.name: s for s in [*ENTRY_TABLES.values(), *ENGINE_SPECS, MEASUREMENTS]}
CHECKS: dict[str, dict[str, tuple]] = {name: column_checks(spec) for name, spec in MARKED_TABLES.items()}
CHECKS |= {name: keyed_checks(t) for name, t in KEYED_TABLES.items()}
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


def _checkpoint_rows(rows: dict[str, list[dict]], mid: str, m) -> None:
    """The model's checkpoints (listed + one generic per unlisted weight precision) and tensor groups."""
    from kvreg.schema.model import QUANTIZED_DEFAULT
    from kvreg.weights import tensor_groups

    for t in tensor_groups(m):
        rows["weight_tensors"].append(dict(model_id=mid, tensor_group=t.name, part=t.part, elements=t.elements,
                                           shard=t.shard, shard_parts=t.parts, dtype=t.dtype))
    first: dict[str, int] = {}
    for i, c in enumerate(m.checkpoints):
        first.setdefault(c.weights_dtype, i)
    for i, c in enumerate(m.checkpoints):
        cid = c.hf_id or f"{mid}:{c.weights_dtype}:{i}"
        q = c.quantization
        default = c.default or (first[c.weights_dtype] == i
                                and not any(o.default for o in m.checkpoints if o.weights_dtype == c.weights_dtype))
        rows["checkpoints"].append(dict(
            model_id=mid, checkpoint_id=cid, hf_id=c.hf_id, weights_dtype=c.weights_dtype, listed=True,
            is_default=default, method=q.method if q else None, weight_bits=q.weight_bits if q else None,
            group_size=q.group_size if q else None, scale_dtype=q.scale_dtype if q else None,
            zero_points=bool(q and q.zero_points), checkpoint_bytes=round(c.bytes.value) if c.bytes else None,
            bytes_source=c.bytes.source if c.bytes else None))
        for g in (q.quantized if q else []):
            rows["checkpoint_quantized"].append(dict(model_id=mid, checkpoint_id=cid, tensor_group=g))
    for dtype, bpe, for_weights, *_ in PRECISIONS:
        if not for_weights or dtype in first:
            continue
        cid = f"{mid}:{dtype}:generic"
        quant = QUANT_DEFAULTS.get(dtype)
        rows["checkpoints"].append(dict(
            model_id=mid, checkpoint_id=cid, hf_id=None, weights_dtype=dtype, listed=False, is_default=True,
            method=quant[0] if quant else None, weight_bits=quant[1] if quant else None,
            group_size=quant[2] if quant else None, scale_dtype=quant[3] if quant else None,
            zero_points=bool(quant and quant[4]), checkpoint_bytes=None, bytes_source=None))
        for g in (QUANTIZED_DEFAULT if quant else []):
            rows["checkpoint_quantized"].append(dict(model_id=mid, checkpoint_id=cid, tensor_group=g))


def _rows(registry: Registry) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {name: [] for name in TABLES}
    for kind, loaded in registry.entries.items():
        if kind not in FACT_KINDS:
            continue
        for eid, item in sorted(loaded.items()):
            checked = registry.config_checked.get(eid, {}) if kind == "model" else {}
            for f in field_facts(item.entry, checked):
                line, col = item.doc.where(f.path)
                rows["field_provenance"].append(dict(
                    kind=kind, entry_id=eid, field=f.field, value=f.value, source_id=f.source_id, basis=f.basis,
                    confidence=f.confidence, confidence_basis=f.confidence_basis, note=f.note,
                    file=item.doc.file, line=line, col=col))
    for name, spec in ENTRY_TABLES.items():
        rows[name] = entry_rows(spec, registry)
    for name, keyed in KEYED_TABLES.items():
        rows[name] = keyed_rows(keyed, registry)
    for mid, item in sorted(registry.entries.get("model", {}).items()):
        _checkpoint_rows(rows, mid, item.entry)
    for hid, item in sorted(registry.entries.get("hardware", {}).items()):
        h, doc = item.entry, item.doc
        if h.price is not None:
            line = doc.where(("price",))[0]
            for qi, q in enumerate(h.price.quotes()):
                rows["hardware_prices"].append(dict(
                    hardware_id=hid, price_idx=qi, price_kind="rental", usd=q.usd_per_hour.value,
                    provider=q.provider, date=str(q.date), source_id=q.usd_per_hour.source, file=doc.file, line=line))
            if h.price.purchase is not None:
                pu = h.price.purchase
                rows["hardware_prices"].append(dict(
                    hardware_id=hid, price_idx=len(h.price.quotes()), price_kind="purchase", usd=pu.usd.value,
                    provider=pu.kind, date=pu.date, source_id=pu.usd.source, file=doc.file, line=line))
    rows["precisions"] = [dict(dtype=d, bytes_per_element=b, for_weights=w, for_kv=k, note=n)
                          for d, b, w, k, n in PRECISIONS]
    natives = {r["native_context_tokens"] for r in rows["models"]}
    _report_rows(registry, rows)
    asked = {r["item_value"] for r in rows["report_items"] if r["item_kind"] == "context"}
    asked |= {r["context_tokens"] for r in rows["report_workloads"]}
    tps = {r["item_value"] for r in rows["report_items"] if r["item_kind"] == "tp"}
    rows["contexts"] = [dict(context_tokens=c, label=context_label(c))
                        for c in sorted(set(CONTEXT_LADDER) | natives | asked)]
    rows["tp_sizes"] = [dict(tp=t) for t in sorted(set(TP_SIZES) | tps)]
    rows["batch_sizes"] = [dict(batch=b) for b in BATCH_SIZES]
    rows.update(engine_rows(registry))
    rows.update(throughput_rows(registry))
    return rows


_REPORT_LISTS = [("model", "models"), ("hardware", "hardware"), ("engine", "engines"),
                 ("weights_dtype", "weights_dtypes"), ("kv_dtype", "kv_dtypes"), ("tp", "tp"), ("context", "contexts")]


def _report_rows(registry: Registry, rows: dict[str, list[dict]]) -> None:
    """report_items: one row per listed id/value, with its YAML line."""
    for rid, item in sorted(registry.entries.get("report", {}).items()):
        r, doc = item.entry, item.doc
        for kind, field in _REPORT_LISTS:
            for i, v in enumerate(getattr(r, field)):
                numeric = kind in ("tp", "context")
                rows["report_items"].append(dict(
                    report_id=rid, item_kind=kind, item_idx=i, item_id=str(v), item_value=v if numeric else None,
                    key=f"{field}.{i}", file=doc.file, line=doc.where((field, i))[0]))


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
    for name, rows in _rows(registry).items():
        df = pd.DataFrame(rows, columns=list(TABLES[name]))
        out[name] = SCHEMAS[name].validate(df)
    registry.frames = out
    return out
