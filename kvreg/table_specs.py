"""Base tables that are not one entry field per column: several entry tables in one, lists of items, computed records.

Each declares its columns once, where the values come from:

* :class:`KeyedTable`: the keys (and values) of one dict or list field of scalars marked ``Rows(table, key,
  value)`` (a hardware entry's ``peak_flops`` → ``hardware_flops``).
* :class:`UnionTable`: one table of the rows of several :class:`~kvreg.entry_tables.EntryTable` specs whose
  columns agree (a hardware entry's rental quotes and its purchase price → ``hardware_prices``); each part's
  columns follow from its model's ``Column`` markers as any entry table's do.
* :class:`ItemTable`: one row per item of every list field an entry model marks ``Item(table, kind)`` (a
  report's ``models`` … ``contexts`` → ``report_items``): the kind, position, item and, for a list of
  numbers, its value.
* :class:`RecordTable`: rows computed in Python, one per record (a dataclass or ``NamedTuple`` instance:
  kvreg/weights.py ``TensorGroup``, kvreg/provenance.py ``FieldFact``, the axes): the record's ``Column``-marked
  fields are the columns, named by the marker (default: the field), dtype and nullability from the
  annotation (:func:`kvreg.entry_tables.pandas_dtype`), in declaration order; the columns its context gives
  (keys, file:line) are :class:`~kvreg.entry_tables.Derived`.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any, Callable, Iterable

from pydantic import BaseModel

from kvreg.entry_tables import (_WRAPPERS, I, S, Derived, EntryTable, _marker, _type_constraints, _unwrap, column_checks,
                                columns, pandas_dtype, place, rows as entry_rows)
from kvreg.schema.columns import Column, Item, Rows


@dataclasses.dataclass(frozen=True)
class UnionTable:
    """One base table holding the rows of ``parts`` (entry tables of one kind, same columns), by entry id then
    part: an entry's rows of the first part, then of the second (the sort is stable)."""

    name: str
    parts: tuple[EntryTable, ...]

    def columns(self) -> dict[str, tuple[str, bool]]:
        """The parts' columns: names, order and dtypes equal, nullable where any part's is.

        Raises:
            TypeError: the parts disagree on a column's name, place or dtype: a bug in the markers.
        """
        cols = [columns(p) for p in self.parts]
        first = cols[0]
        for p, c in zip(self.parts[1:], cols[1:]):
            if [(n, d) for n, (d, _) in c.items()] != [(n, d) for n, (d, _) in first.items()]:
                raise TypeError(f"table {self.name}: part {p.path} has columns {c}, the first {first}")
        return {n: (d, any(c[n][1] for c in cols)) for n, (d, _) in first.items()}

    def checks(self) -> dict[str, tuple]:
        """A column's constraints where every part's field holds them (the same ``(op, value)`` in each)."""
        per = [column_checks(p) for p in self.parts]
        return {c: v for c, v in per[0].items() if all(o.get(c) == v for o in per[1:])}

    def rows(self, registry) -> list[dict]:
        key = self.parts[0].keys[0]
        return sorted((r for p in self.parts for r in entry_rows(p, registry)), key=lambda r: r[key])


ITEM_COLUMNS = {"item_kind": (S, False), "item_idx": (I, False), "item_id": (S, False), "item_value": (I, True),
                "key": (S, False), "file": (S, False), "line": (I, False)}
"""An items table's columns after the entry id: the field's ``Item.kind``, the 0-based position, the item as
text, the item when it is a number (else NULL), its key path (``contexts.1``) and its YAML file:line."""


@dataclasses.dataclass(frozen=True)
class ItemTable:
    """One row per item of the ``Item``-marked list fields of ``model`` (``kind`` entries, by id), fields in
    declaration order, items in file order."""

    name: str
    kind: str
    model: type[BaseModel]
    id_key: str

    def fields(self) -> list[tuple[str, Item, bool]]:
        """(field, marker, whether its items are integers) of each marked field."""
        out = []
        for fname, info in self.model.model_fields.items():
            m = next((x for x in info.metadata if isinstance(x, Item) and x.table == self.name), None)
            if m is not None:
                item_type = typing.get_args(_unwrap(info.annotation)[0])[0]
                out.append((fname, m, pandas_dtype(item_type)[0] == I))
        return out

    def columns(self) -> dict[str, tuple[str, bool]]:
        return {self.id_key: (S, False), **ITEM_COLUMNS}

    def rows(self, registry) -> list[dict]:
        out = []
        fields = self.fields()
        for eid, item in sorted(registry.entries.get(self.kind, {}).items()):
            for fname, m, numeric in fields:
                for i, v in enumerate(getattr(item.entry, fname)):
                    out.append({self.id_key: eid, "item_kind": m.kind, "item_idx": i, "item_id": str(v),
                                "item_value": v if numeric else None, "key": f"{fname}.{i}",
                                "file": item.doc.file, "line": item.doc.where((fname, i))[0]})
        return out


@functools.lru_cache(maxsize=None)
def record_fields(record: type) -> list[tuple[str, str, tuple[str, bool], tuple]]:
    """(attribute, column, (pandas dtype, nullable), constraints) of each ``Column``-marked field of a dataclass
    or ``NamedTuple``, in declaration order; constraints from the annotation (a ``Literal``'s values).

    Raises:
        TypeError: a marked field whose annotation has no column type (a bug in the record).
    """
    hints = typing.get_type_hints(record, include_extras=True)
    names = record._fields if hasattr(record, "_fields") else [f.name for f in dataclasses.fields(record)]
    out = []
    for name in names:
        hint = hints[name]
        marker = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Column)), None)
        if marker is not None:
            out.append((name, marker.name or name, pandas_dtype(hint), tuple(_type_constraints(hint))))
    return out


@dataclasses.dataclass(frozen=True)
class RecordTable:
    """A base table computed in Python: ``records(registry)`` yields ``(context, record)`` in row order; the
    columns are ``derived`` (values of the context; keys ``first``) and the record's marked fields."""

    name: str
    record: type
    records: Callable[[Any], Iterable[tuple[Any, Any]]]
    derived: dict[str, Derived] = dataclasses.field(default_factory=dict)

    def columns(self) -> dict[str, tuple[str, bool]]:
        cols = place([], [(c, dt) for _, c, dt, _ in record_fields(self.record)], self.derived, self.name)
        return {n: (d.dtype, d.nullable) if isinstance(d, Derived) else d for n, d in cols.items()}

    def checks(self) -> dict[str, tuple]:
        return {c: v for _, c, _, v in record_fields(self.record) if v}

    def rows(self, registry) -> list[dict]:
        fields = [(a, c) for a, c, _, _ in record_fields(self.record)]
        return [{c: getattr(rec, a) for a, c in fields} | {n: d.value(ctx) for n, d in self.derived.items()}
                for ctx, rec in self.records(registry)]


@dataclasses.dataclass(frozen=True)
class KeyedTable:
    """A base table whose rows are the keys of one dict (or the items of one list) field of an entry kind
    (a :class:`~kvreg.schema.columns.Rows` marker): entry id, key, and a dict's value."""

    name: str
    kind: str
    id_key: str
    field: str
    marker: Rows
    key_type: Any
    value_type: Any = None


def keyed_tables(model: type[BaseModel], kind: str, id_key: str) -> list[KeyedTable]:
    """The :class:`KeyedTable` of every ``Rows``-marked field of ``model``, in declaration order.

    Raises:
        TypeError: a marker on a field that is not a dict or a list, or a ``value`` on a list: a marker bug.
    """
    out = []
    for fname, info in model.model_fields.items():
        m = _marker(info, Rows)
        if m is None:
            continue
        t, _ = _unwrap(info.annotation)
        origin, args = typing.get_origin(t), typing.get_args(t)
        if origin is dict and m.value is not None:
            out.append(KeyedTable(m.table, kind, id_key, fname, m, args[0], args[1]))
        elif origin is list and m.value is None:
            out.append(KeyedTable(m.table, kind, id_key, fname, m, args[0]))
        else:
            raise TypeError(f"{model.__name__}.{fname}: Rows needs a dict (with value=) or a list (without)")
    return out


def keyed_columns(t: KeyedTable) -> dict[str, tuple[str, bool]]:
    """``{column: (pandas dtype, nullable)}`` of a keyed table: the entry id, the key, a dict's value (none nullable)."""
    cols = {t.id_key: (S, False), t.marker.key: (pandas_dtype(t.key_type)[0], False)}
    if t.value_type is not None:
        cols[t.marker.value] = (pandas_dtype(t.value_type)[0], False)
    return cols


def keyed_checks(t: KeyedTable) -> dict[str, tuple[tuple[str, Any], ...]]:
    """The constraints of the key's and the value's types (``Dtype`` values, ``Flops`` > 0), as :func:`column_checks`."""
    out = {t.marker.key: tuple(_type_constraints(t.key_type))}
    if t.value_type is not None:
        out[t.marker.value] = tuple(_type_constraints(t.value_type))
    return {c: v for c, v in out.items() if v}


def keyed_rows(t: KeyedTable, registry) -> list[dict]:
    """One row per entry (by id) and key (sorted; a list's items once each)."""
    out = []
    for eid, item in sorted(registry.entries.get(t.kind, {}).items()):
        v = getattr(item.entry, t.field)
        for k in sorted(v if isinstance(v, dict) else set(v)):
            row = {t.id_key: eid, t.marker.key: k}
            if t.value_type is not None:
                x = v[k]
                row[t.marker.value] = x.value if isinstance(x, _WRAPPERS) else x
            out.append(row)
    return out
