"""Field types shared by every registry entry: quantities with units, sources, provenance.

A numeric field may be written bare (``bandwidth: 3.35 TB/s``) or with its own
provenance (``bandwidth: {value: 3.35 TB/s, source: mle_accel, confidence: read}``).
Both parse to a :class:`Measure`; the entry-level ``confidence`` fills in where
a field gives none.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.columns import Column
from kvreg.units import UnitError, parse_quantity, to_int, unit_pattern

Confidence = Literal["measured", "read", "derived", "estimated"]
"""How a number was obtained: measured on a machine, read from a config or
datasheet, derived by arithmetic from read numbers, or estimated (registry/README.md)."""

DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "mxfp4", "nvfp4")
Dtype = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "mxfp4", "nvfp4"]

ID_RE = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")


_BARE = re.compile(r"^\s*[0-9.,eE+\-]+\s*$")


def _unit(kind: str, integral: bool):
    """Parse a quantity field; for an integral one (bytes, tokens) a value that is not whole is wrong-type.

    Tokens are whole whatever the unit (``131072.5`` or ``1.0001K`` is no context: it was truncated to 131072);
    a byte count written bare (``85899345920.5``) is whole too, while ``79.6 GiB`` rounds to the nearest byte
    (the prefix's figure is itself a rounded one).  The error type ``int_type`` reports as ``wrong-type``
    with the whole-number hint, as ``kv_heads: 8.0`` does."""
    def parse(v: Any):
        try:
            x = parse_quantity(v, kind)
        except UnitError as exc:
            raise PydanticCustomError("bad_unit", "{message}", {"message": str(exc), "hint": exc.hint})
        if not integral:
            return x
        bare = isinstance(v, (int, float)) or (isinstance(v, str) and _BARE.match(v) is not None)
        if (bare or kind == "tokens") and x != int(x):
            raise PydanticCustomError("int_type", "Input should be a whole number of {kind}: {value} is not",
                                      {"kind": kind, "value": f"{x:,.6g}" if not bare else str(v)})
        return to_int(x)
    return BeforeValidator(parse)


class _UnitJson:
    """JSON Schema of a unit-bearing field: a number in the base unit, or a string with a unit.

    Editors then accept ``80 GB`` and ``85899345920`` alike and flag ``80G``
    (the pattern is :func:`kvreg.units.unit_pattern`, the parser's own rules).
    """

    def __init__(self, name: str, kind: str, number: dict, description: str):
        self.name, self.kind, self.number, self.description = name, kind, number, description

    def __get_pydantic_json_schema__(self, core_schema, handler):
        return {"title": self.name, "description": self.description,
                "anyOf": [self.number, {"type": "string", "pattern": unit_pattern(self.kind)}]}


Bytes = Annotated[int, _unit("bytes", True), Field(gt=0),
                  _UnitJson("Bytes", "bytes", {"type": "integer", "exclusiveMinimum": 0},
                            "bytes: a number of bytes, or a string with a unit: 80 GB (10^9), 79.6 GiB (2^30)")]
"""Bytes (``80 GB``, ``79.6 GiB`` or a bare integer); must be > 0."""
DEVICE_MEMORY_MIN = 2**30
"""The smallest device memory a hardware entry may give: 1 GiB.  The smallest accelerator in the registry
holds 16 GB (hardware/t4.yaml); no device that serves a model has had less than 1 GiB since ~2010, so a figure
below it is a unit slip: a bare number is bytes, and ``32607`` (the MiB dropped) is 32,607 bytes."""


def _plausible_memory(v: int) -> int:
    if v >= DEVICE_MEMORY_MIN:
        return v
    if v * 2**20 >= DEVICE_MEMORY_MIN:
        hint = f"a bare number is bytes: did you mean {v} MiB ({v * 2**20 / 2**30:.2f} GiB)?"
    elif v * 2**30 >= DEVICE_MEMORY_MIN:
        hint = f"a bare number is bytes: did you mean {v} GiB or {v} GB?"
    else:
        hint = "write the unit: 80 GB (10^9 bytes) or 79.6 GiB (2^30 bytes)"
    raise PydanticCustomError(
        "implausible_memory", "{value} bytes is below 1 GiB, too small for a device's memory",
        {"value": f"{v:,}", "hint": hint})


DeviceMemory = Annotated[int, _unit("bytes", True), AfterValidator(_plausible_memory), Field(ge=DEVICE_MEMORY_MIN),
                         _UnitJson("DeviceMemory", "bytes", {"type": "integer", "minimum": DEVICE_MEMORY_MIN},
                                   "a device's memory in bytes (at least 1 GiB), or a string with a unit: 80 GB "
                                   "(10^9), 79.6 GiB (2^30)")]
"""A device's memory (``80 GB``, ``79.6 GiB`` or a bare integer of bytes); at least :data:`DEVICE_MEMORY_MIN`
(1 GiB), else an ``implausible-memory`` problem whose hint names the likely unit (MiB for ``32607``)."""
BytesOrZero = Annotated[int, _unit("bytes", True), Field(ge=0),
                        _UnitJson("BytesOrZero", "bytes", {"type": "integer", "minimum": 0},
                                  "bytes (0 allowed): a number of bytes, or a string with a unit: 6 GiB, 512 MB")]
Bandwidth = Annotated[float, _unit("bandwidth", False), Field(gt=0),
                      _UnitJson("Bandwidth", "bandwidth", {"type": "number", "exclusiveMinimum": 0},
                                "bytes per second, or a string with a unit: 3.35 TB/s, 819 GB/s")]
"""Bytes per second (``3.35 TB/s``)."""
Flops = Annotated[float, _unit("flops", False), Field(gt=0),
                  _UnitJson("Flops", "flops", {"type": "number", "exclusiveMinimum": 0},
                            "FLOP per second, or a string with a unit: 989 TFLOP/s")]
"""FLOP per second (``989 TFLOP/s``)."""
Tokens = Annotated[int, _unit("tokens", True), Field(gt=0),
                   _UnitJson("Tokens", "tokens", {"type": "integer", "exclusiveMinimum": 0},
                             "tokens: an integer, or 8K (8,000), 32Ki (32,768)")]
"""Tokens (``8K`` = 8,000; ``32Ki`` = 32,768; bare integers)."""
Count = Annotated[float, _unit("count", False), Field(gt=0),
                  _UnitJson("Count", "count", {"type": "number", "exclusiveMinimum": 0},
                            "a positive number such as a parameter count: 70.6e9")]
"""A plain positive number such as a parameter count (``70.6e9``)."""
EntryId = Annotated[str, Field(pattern=ID_RE.pattern)]

T = TypeVar("T")


class Strict(BaseModel):
    """Base for every entry model: unknown keys are errors, never ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


class Measure(Strict, Generic[T]):
    """A number with optional provenance: ``value`` plus ``source`` / ``confidence`` / ``note``."""

    value: T
    source: str | None = None
    confidence: Confidence | None = None
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _wrap_bare(cls, data: Any) -> Any:
        return data if isinstance(data, dict) else {"value": data}

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema, handler):
        # Published as "the bare value, or {value, source, confidence, note}", as the validator accepts.
        ref = handler(core_schema)
        target = handler.resolve_ref_schema(ref)
        obj = {k: v for k, v in target.items() if k not in ("title", "description")}
        value = obj["properties"]["value"]
        name = value.get("title") if value.get("title") not in (None, "Value") else value.get("type", "value")
        target.clear()
        target.update({"title": f"Measure of {name}",
                       "description": "a number, bare or with provenance: {value, source, confidence, note}",
                       "anyOf": [value, obj]})
        return ref


class Source(Strict):
    """Where an entry's facts come from.  ``id`` lets fields cite it (``source: <id>``)."""

    id: Annotated[str | None, Column("source_id")] = None
    url: Annotated[str | None, Column()] = None
    title: Annotated[str | None, Column()] = None
    date: Annotated[dt.date | str | None, Column()] = None
    note: Annotated[str | None, Column()] = None

    @model_validator(mode="after")
    def _has_reference(self):
        if not (self.url or self.title):
            raise PydanticCustomError("source_empty", "a source needs a url or a title",
                                      {"hint": "write url: https://... or title: 'NVIDIA H100 datasheet'"})
        return self


class Entry(Strict):
    """Fields every registry entry has: an id equal to its file stem, sources, default confidence."""

    id: EntryId
    name: Annotated[str | None, Column()] = None
    sources: Annotated[list[Source], Field(min_length=1)]
    confidence: Annotated[Confidence, Column(last=True)] = "read"
    notes: Annotated[str | None, Column(table="observations")] = None
    field_sources: dict[str, list[str]] = {}
    """The explicit default source of the entry's bare numbers, by key prefix:
    ``{config: [layers, layer_groups]}`` (``"*"``: every key).  A number with no source of its own
    and none here is a problem (kvreg/provenance.py, registry/README.md "Provenance")."""

    def measures(self) -> list[tuple[str, Measure]]:
        """Every :class:`Measure` in the entry with its dotted key path (for the provenance table)."""
        out: list[tuple[str, Measure]] = []

        def walk(obj, path):
            if isinstance(obj, Measure):
                out.append((path, obj))
            elif isinstance(obj, BaseModel):
                for name in type(obj).model_fields:
                    walk(getattr(obj, name), f"{path}.{name}" if path else name)
            elif isinstance(obj, dict):
                for k, v in obj.items():
                    walk(v, f"{path}.{k}")
            elif isinstance(obj, list):
                for i, v in enumerate(obj):
                    walk(v, f"{path}.{i}")

        walk(self, "")
        return out

    @model_validator(mode="after")
    def _field_sources_resolve(self):
        seen: set[str] = set()
        for i, src in enumerate(self.sources):
            if src.id and src.id in seen:
                # A field citing this id would be ambiguous.
                raise PydanticCustomError(
                    "duplicate_source_id", "source id '{src}' is used twice in this entry",
                    {"path": f"sources.{i}.id", "src": src.id, "hint": "give each source its own id"})
            seen.add(src.id)
        ids = {s.id for s in self.sources if s.id}
        for path, m in self.measures():
            if m.source is not None and m.source not in ids:
                raise PydanticCustomError(
                    "unknown_source", "source '{src}' is not one of this entry's sources",
                    {"path": f"{path}.source", "src": m.source,
                     "hint": f"add a source with id: {m.source} under sources"
                             + (f", or cite one of {', '.join(sorted(ids))}" if ids else " (no source has an id yet)")})
        for src in self.field_sources:
            if src not in ids:
                raise PydanticCustomError(
                    "unknown_source", "field_sources names source '{src}', which is not one of this entry's sources",
                    {"path": f"field_sources.{src}", "src": src,
                     "hint": f"give a source id: {src}" + (f", or use one of {', '.join(sorted(ids))}" if ids else "")})
        from kvreg.provenance import unmatched_prefixes  # late: provenance walks these models

        for src, prefix in unmatched_prefixes(self):
            raise PydanticCustomError(
                "field_source_unused", "field_sources.{src} names '{prefix}', which holds no number in this entry",
                {"path": f"field_sources.{src}", "src": src, "prefix": prefix,
                 "hint": "name a key that the entry states (layers, layer_groups, moe, settings …), or remove it"})
        return self
