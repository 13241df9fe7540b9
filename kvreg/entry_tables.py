"""Base tables generated from the entry models' :class:`~kvreg.schema.columns.Column` markers.

An :class:`EntryTable` names a registry kind, the list (or optional) fields walked from each entry
to the row objects, its key columns and the columns computed here (file, line, arithmetic); every
other column follows from a marked field, in declaration order (the fields an enclosing object
marks for this table first, then the row object's): its name, its pandas dtype and nullability
from the annotation (:func:`pandas_dtype`), its value read from the entry (a
:class:`~kvreg.schema.common.Measure` gives its ``value``).  :func:`columns` feeds
``kvreg.tables.TABLES`` (and so the pandera schemas); :func:`rows` the frames.  Adding a field to
a converted table is then one edit: the annotated field (plus its line in docs/sql.md).
"""

from __future__ import annotations

import dataclasses
import fractions
import functools
import datetime as dt
import types
import typing
from typing import Any, Callable, Literal

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from kvreg.formats import counted
from kvreg.schema.accounting import Cited
from kvreg.schema.columns import Column, Columns, Rows
from kvreg.schema.common import Measure

# A value with its provenance: the column holds the value (``Measure`` numbers, ``Cited`` rules).
_WRAPPERS = (Measure, Cited)

I, F, S, B = "Int64", "Float64", "string", "boolean"


@dataclasses.dataclass(frozen=True)
class Row:
    """What a computed column is computed from: the loaded entry, the row's object and its indices."""

    item: Any
    """the :class:`kvreg.registry.Loaded` entry (``.entry``, ``.doc`` for file:line)"""
    obj: Any
    """the row's object: the entry itself, or the list item walked to"""
    chain: tuple[Any, ...]
    """the objects walked, the entry first and ``obj`` last"""
    idx: tuple[int, ...]
    """the 0-based position in each list walked (``(group_idx,)``, ``(group_idx, tensor_idx)``)"""


@dataclasses.dataclass(frozen=True)
class Derived:
    """A column computed here, not stated by a field: pandas dtype, nullable, value of a :class:`Row`.

    Placed after the field columns, in declaration order, unless ``first`` (before them, after the keys) or
    ``after`` (behind the column it names: a key, a field column or an earlier derived column)."""

    dtype: str
    nullable: bool
    value: Callable[[Row], Any]
    after: str | None = None
    first: bool = False


@dataclasses.dataclass(frozen=True)
class EntryTable:
    """A base table whose rows are entries of one kind, or objects reached from them.

    Attributes:
        name: the table.
        kind: the registry kind its entries are (``model``, ``hardware``); None: entries of every
            kind, in the registry's order, the kind named in the first key (``sources``).
        model: the entry model of that kind (the row objects' model follows ``path``).
        keys: key columns, first: (the kind, when ``kind`` is None) the entry id, then one 0-based
            index per list in ``path``.
        path: fields walked from the entry to the row objects; a list gives one row per item
            (and an index key), an optional nested model one row when present.
        derived: columns computed here, after the field columns, in this order.
        home: the table a marker without ``table`` belongs to, when not this one (a second table
            of the same rows, holding only the fields marked ``Column(table=name)``).
        exclude: marked fields (by column name) this table leaves out: an :class:`Entry` field
            another kind's table has (``confidence``) where this kind's table never had it; or an
            index key the table has no column for (a checkpoint's position: ``checkpoint_id`` names it).
        items: the objects of a step of ``path`` as a function of the object holding it, where they are not
            just that field's value (``{"checkpoints": all_checkpoints}``: the listed ones, then one generic
            per unlisted precision; ``{"rental": Price.quotes}``: the one-quote form, then ``rental``).
            The function is called with the holding object and returns a list of the field's model.
        A ``path`` may end at a list of scalars marked ``Rows(table, key)``: one row per item, in file order,
        the item in column ``key`` (a checkpoint's quantized tensor groups).
    """

    name: str
    kind: str | None
    model: type[BaseModel]
    keys: tuple[str, ...]
    path: tuple[str, ...] = ()
    derived: dict[str, Derived] = dataclasses.field(default_factory=dict)
    home: str | None = None
    exclude: tuple[str, ...] = ()
    items: dict[str, Callable[[Any], list]] = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def fields(self) -> list[FieldColumn]:
        """:func:`table_fields` of this table, worked out once (the markers do not change at run time)."""
        return table_fields(self)


@dataclasses.dataclass(frozen=True)
class FieldColumn:
    """One column that follows from a marked field: where its value is and its type."""

    name: str
    dtype: str
    nullable: bool
    path: tuple[str, ...]
    """attribute path from the object holding the field (``("moe", "experts")``)"""
    marker: Column
    owner: type[BaseModel]
    """the model class whose field it is (tests check no marked field is left out of every table)"""
    level: int = 0
    """which object of the walk holds it: 0 the entry, ``len(path)`` the row object"""
    last: bool = False
    """placed after the other field columns (its marker's or its ``Columns`` block's ``last``)"""
    present: bool = False
    """a ``Columns(present=...)`` flag: whether the block at ``path`` is given, not a field value"""
    item: bool = False
    """the row object itself: an item of the ``Rows``-marked list of scalars ``path`` ends at"""
    checks: tuple[tuple[str, Any], ...] = ()
    """the field's value constraints as the column holds them (:func:`constraints`, scaled)"""


def _unwrap(annotation) -> tuple[Any, bool]:
    """(the annotation with Annotated and Optional removed, whether None is allowed)."""
    optional = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            optional |= len(args) < len(typing.get_args(annotation))
            if len(args) > 1:
                return tuple(args), optional
            annotation = args[0]
        else:
            return annotation, optional


def pandas_dtype(annotation) -> tuple[str, bool]:
    """The pandas dtype of a field's values and whether it may be None.

    ``Measure[T]`` and ``Cited[T]`` are typed as ``T``; a ``Literal`` as its values' type; ``bool`` → ``boolean``,
    ``int`` → ``Int64``, ``float`` → ``Float64``, ``str``/``date`` → ``string``.

    Raises:
        TypeError: an annotation with no column type (a list, a dict, a model): a bug in a marker.
    """
    t, optional = _unwrap(annotation)
    if isinstance(t, type) and issubclass(t, _WRAPPERS):
        inner, inner_optional = pandas_dtype(t.__pydantic_generic_metadata__["args"][0])
        return inner, optional or inner_optional
    if typing.get_origin(t) is Literal:
        t = type(typing.get_args(t)[0])
    kinds = {pandas_dtype(a)[0] for a in t} if isinstance(t, tuple) else None
    if kinds is not None and len(kinds) == 1:
        return kinds.pop(), optional
    for py, dtype in ((bool, B), (int, I), (float, F), (str, S), (dt.date, S)):
        if isinstance(t, type) and issubclass(t, py):
            return dtype, optional
    raise TypeError(f"no column type for {annotation!r}")


_BOUNDS = {annotated_types.Gt: "gt", annotated_types.Ge: "ge", annotated_types.Lt: "lt", annotated_types.Le: "le"}


def _meta_constraints(meta) -> list[tuple[str, Any]]:
    if isinstance(meta, FieldInfo):
        return [c for m in meta.metadata for c in _meta_constraints(m)]
    if type(meta) in _BOUNDS:
        op = _BOUNDS[type(meta)]
        return [(op, getattr(meta, op))]
    if isinstance(meta, annotated_types.Interval):
        return [(op, getattr(meta, op)) for op in ("gt", "ge", "lt", "le") if getattr(meta, op) is not None]
    pattern = getattr(meta, "pattern", None)
    return [("pattern", pattern)] if isinstance(pattern, str) else []


def _type_constraints(annotation) -> list[tuple[str, Any]]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        return _type_constraints(base) + [c for m in meta for c in _meta_constraints(m)]
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _type_constraints(args[0]) if len(args) == 1 else []   # several types (date | str): none
    if origin is Literal:
        return [("isin", tuple(typing.get_args(annotation)))]
    if isinstance(annotation, type) and issubclass(annotation, _WRAPPERS):
        return _type_constraints(annotation.__pydantic_generic_metadata__["args"][0])
    return []


def constraints(info: FieldInfo) -> tuple[tuple[str, Any], ...]:
    """The value constraints pydantic enforces on a field, as ``(op, value)`` pairs, in declaration order.

    ``op`` is ``gt``/``ge``/``lt``/``le`` (a bound: ``Field(gt=0)``, ``PositiveInt``, ``Tokens``), ``isin``
    (a ``Literal``'s values: ``Dtype``, ``Confidence``) or ``pattern`` (``Field(pattern=...)``: ``EntryId``;
    pydantic searches, so the check does too).  Read through ``Optional``, ``Annotated`` and the value of
    ``Measure[T]`` / ``Cited[T]``; a union of several types gives none.  The pandera schemas of the
    converted tables check these (kvreg/tables.py ``SCHEMAS``), so the bound is declared once, on the
    field, for validation, the published JSON Schema and the frames alike.
    """
    out = [c for m in info.metadata for c in _meta_constraints(m)] + _type_constraints(info.annotation)
    return tuple(dict.fromkeys(out))


def _column_checks(model: type[BaseModel], fname: str, col: Column) -> tuple[tuple[str, Any], ...]:
    """The field's constraints as its column holds them: scaled; none for a joined list, and none
    where the value may come from another field (``fallback``) with other constraints."""
    info = model.model_fields[fname]
    if col.join is not None:
        return ()
    own = constraints(info)
    if col.fallback is not None and constraints(model.model_fields[col.fallback]) != own:
        return ()
    if col.scale is not None:
        own = tuple((op, v if op in ("isin", "pattern") else float(fractions.Fraction(v) * col.scale)) for op, v in own)
    if col.fill is not None and not _holds(own, col.fill):
        raise TypeError(f"{model.__name__}.{fname}: fill {col.fill!r} breaks the field's own constraints {own}")
    return own


def _holds(checks, v) -> bool:
    import operator
    import re

    ops = {"gt": operator.gt, "ge": operator.ge, "lt": operator.lt, "le": operator.le,
           "isin": lambda x, vals: x in vals, "pattern": lambda x, p: re.search(p, x) is not None}
    return all(ops[op](v, arg) for op, arg in checks)


def _marker(info, cls):
    return next((m for m in info.metadata if isinstance(m, cls)), None)


def _nested(annotation) -> tuple[type[BaseModel], bool, bool]:
    """The model a field holds (through Optional, ``Cited[...]`` and ``list[...]``), whether it may be
    absent and whether it is a list."""
    t, optional = _unwrap(annotation)
    if isinstance(t, type) and issubclass(t, Cited):
        t, inner_optional = _unwrap(t.__pydantic_generic_metadata__["args"][0])
        optional |= inner_optional
    many = typing.get_origin(t) is list
    if many:
        t = typing.get_args(t)[0]
    if not (isinstance(t, type) and issubclass(t, BaseModel)):
        raise TypeError(f"a field that holds no model: {annotation!r}")
    return t, optional, many


def _nested_model(annotation) -> tuple[type[BaseModel], bool]:
    return _nested(annotation)[:2]


def field_columns(model: type[BaseModel], table: str, own: str | None = None, prefix: str = "",
                  path: tuple[str, ...] = (), optional: bool = False, last: bool = False) -> list[FieldColumn]:
    """The columns of ``table`` that ``model``'s marked fields (and nested ``Columns`` models) declare.

    ``own`` is the table whose rows are ``model``'s objects (a marker without ``table`` belongs to
    it; None: only markers naming ``table`` count); ``optional`` whether an enclosing model may be
    absent (every column below is then nullable unless it has a ``fill`` or inherits a value).
    Declaration order; :func:`table_fields` applies ``after`` and ``last``.
    """
    out: list[FieldColumn] = []
    for fname, info in model.model_fields.items():
        nest = _marker(info, Columns)
        if nest is not None:
            sub, sub_optional = _nested_model(info.annotation)
            if nest.present and own == table:
                out.append(FieldColumn(nest.present, B, False, path + (fname,), Column(), model,
                                       last=last or nest.last, present=True))
            out += field_columns(sub, table, own, prefix + nest.prefix, path + (fname,), optional or sub_optional,
                                 last or nest.last)
            continue
        col = _marker(info, Column)
        if col is None or (col.table or own) != table:
            continue
        if col.join is not None:
            # NULL when absent (None, or empty where the default is empty); a required list is always written
            dtype, nullable = S, optional or (not info.is_required() and info.default in (None, []))
        else:
            dtype, nullable = pandas_dtype(info.annotation)
            nullable = nullable or optional
        if col.scale is not None:
            dtype = F
        if col.fill is not None:
            nullable = False
        elif col.fallback is not None:
            nullable = pandas_dtype(model.model_fields[col.fallback].annotation)[1] or optional
        out.append(FieldColumn(prefix + (col.name or fname), dtype, nullable, path + (fname,), col, model,
                               last=last or col.last, checks=_column_checks(model, fname, col)))
    return out


def _chain(spec: EntryTable) -> list[type[BaseModel]]:
    """The models walked: the entry model, then the model each field of ``spec.path`` holds.

    Raises:
        ValueError: ``keys`` is not the entry id plus one index per list walked.
    """
    models, lists = [spec.model], 0
    for i, name in enumerate(spec.path):
        info = models[-1].model_fields[name]
        if i == len(spec.path) - 1 and _marker(info, Rows) is not None:
            lists += 1          # a list of scalars: its items are the rows (table_fields adds their column)
            break
        model, _, many = _nested(info.annotation)
        models.append(model)
        lists += many
    ids = 1 + (spec.kind is None)
    if len(spec.keys) != ids + lists:
        raise ValueError(f"table {spec.name}: {counted(len(spec.keys), 'key')} for {counted(ids, 'id column')}"
                         f" and {counted(lists, 'list index', 'list indexes')}")
    return models


def table_fields(spec: EntryTable) -> list[FieldColumn]:
    """The field columns of the table, in order.

    Each object walked contributes its fields marked for this table, the entry first and the row
    object (whose markers without ``table`` belong here, or to ``home``) last; then a column with
    ``after`` moves behind the column it names, and ``last`` columns go to the end.  An ``inherit``
    column takes the nullability of the enclosing field it falls back on.

    Raises:
        TypeError, ValueError: a marker that cannot hold (no field to inherit, ``after`` naming no
            column): a bug in the markers, caught at import.
    """
    chain = _chain(spec)
    scalars = len(chain) == len(spec.path)       # the path ends at a Rows-marked list of scalars
    cols: list[FieldColumn] = []
    for level, model in enumerate(chain):
        own = (spec.home or spec.name) if level == len(chain) - 1 and not scalars else None
        cols += [dataclasses.replace(c, level=level) for c in field_columns(model, spec.name, own)]
    if scalars:
        info = chain[-1].model_fields[spec.path[-1]]
        item_type = typing.get_args(_unwrap(info.annotation)[0])[0]
        marker = _marker(info, Rows)
        cols.append(FieldColumn(marker.key, pandas_dtype(item_type)[0], False, (spec.path[-1],), Column(), chain[-1],
                                level=len(chain), item=True, checks=tuple(_type_constraints(item_type))))
    cols = [c for c in cols if c.name not in spec.exclude]
    for i, c in enumerate(cols):
        if c.marker.inherit:
            up = [m.model_fields[c.path[-1]] for m in chain[:c.level] if c.path[-1] in m.model_fields]
            if not up:
                raise TypeError(f"{spec.name}.{c.name}: no enclosing model has a field {c.path[-1]} to inherit")
            # the value may be the enclosing field's: its constraints hold only where both fields share them
            cols[i] = dataclasses.replace(c, nullable=c.nullable and pandas_dtype(up[-1].annotation)[1],
                                          checks=c.checks if constraints(up[-1]) == c.checks else ())
    for c in [c for c in cols if c.marker.after]:
        cols.remove(c)
        at = next((i for i, o in enumerate(cols) if o.name == c.marker.after), None)
        if at is None:
            raise ValueError(f"{spec.name}.{c.name}: after names no column {c.marker.after}")
        cols.insert(at + 1, c)
    return [c for c in cols if not c.last] + [c for c in cols if c.last]


def _key_dtype(spec: EntryTable, key: str) -> tuple[str, bool]:
    ids = spec.keys[:1 + (spec.kind is None)]
    return (S, False) if key in ids else (I, False)


def place(keys: list[tuple[str, Any]], fields: list[tuple[str, Any]], derived: dict[str, Derived],
          table: str) -> dict[str, Any]:
    """Columns in table order: keys, ``first`` derived columns, fields, the other derived columns; then each
    derived column with ``after`` moved behind the column it names.

    Raises:
        ValueError: two columns share a name, or ``after`` names no column: a bug in a declaration.
    """
    named = (keys + [(n, d) for n, d in derived.items() if d.first] + fields
             + [(n, d) for n, d in derived.items() if not d.first])
    names = [n for n, _ in named]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"table {table}: column {', '.join(twice)} declared twice")
    for name, d in derived.items():
        if d.after is not None:
            at = next((i for i, (n, _) in enumerate(named) if n == name))
            moved = named.pop(at)
            to = next((i for i, (n, _) in enumerate(named) if n == d.after), None)
            if to is None:
                raise ValueError(f"{table}.{name}: after names no column {d.after}")
            named.insert(to + 1, moved)
    return dict(named)


def columns(spec: EntryTable) -> dict[str, tuple[str, bool]]:
    """``{column: (pandas dtype, nullable)}`` of the table, for ``kvreg.tables.TABLES``: keys (less the excluded
    index keys), fields, derived (:func:`place`).

    Raises:
        ValueError: two columns of the table share a name (a marker's name repeats a key, a
            derived column or another field's column): a bug in the markers, caught at import.
    """
    cols = place([(k, _key_dtype(spec, k)) for k in spec.keys if k not in spec.exclude],
                 [(c.name, (c.dtype, c.nullable)) for c in spec.fields], spec.derived, spec.name)
    return {n: (d.dtype, d.nullable) if isinstance(d, Derived) else d for n, d in cols.items()}


def column_checks(spec: EntryTable) -> dict[str, tuple[tuple[str, Any], ...]]:
    """``{column: ((op, value), ...)}``: the pydantic constraints of the table's field columns (:func:`constraints`)
    as the column holds them, for the pandera schemas (kvreg/tables.py).  Keys and derived columns have none."""
    return {c.name: c.checks for c in spec.fields if c.checks}


def _read(obj, path: tuple[str, ...], raw: bool = False):
    for name in path:
        if obj is None:
            return None
        obj = getattr(obj, name)
    return obj.value if isinstance(obj, _WRAPPERS) and not raw else obj


def _value(chain: tuple, c: FieldColumn):
    obj = chain[c.level]
    if c.item:
        return obj
    if c.present:
        return _read(obj, c.path, raw=True) is not None
    v = _read(obj, c.path)
    if c.marker.join is not None:
        # lists comma-joined (SQL splits them with string_split); absent (None, or empty where the field's
        # default is empty: large_gpu_excludes []) is NULL, an empty list given where the default is None is ''
        info = c.owner.model_fields[c.path[-1]]
        absent = v is None or (not v and not info.is_required() and _read(info, ("default",)) == [])
        return None if absent else c.marker.join.join(map(str, v))
    if v is None and c.marker.fallback is not None:
        v = _read(obj, c.path[:-1] + (c.marker.fallback,))
    if v is None and c.marker.inherit:
        v = next((_read(o, c.path[-1:]) for o in reversed(chain[:c.level]) if c.path[-1] in type(o).model_fields),
                 None)
    if v is not None and c.marker.scale is not None:
        v = float(fractions.Fraction(v) * c.marker.scale)
    return c.marker.fill if v is None else v


def _walk(chain: tuple, path: tuple[str, ...], idx: tuple[int, ...] = (), items=None):
    if not path:
        yield chain, idx
        return
    items = items or {}
    child = items[path[0]](chain[-1]) if path[0] in items else getattr(chain[-1], path[0])
    if isinstance(child, Cited):
        child = child.value
    if isinstance(child, list):
        for i, x in enumerate(child):
            yield from _walk(chain + (x,), path[1:], idx + (i,), items)
    elif child is not None:
        yield from _walk(chain + (child,), path[1:], idx, items)


def rows(spec: EntryTable, registry) -> list[dict]:
    """The table's rows: entries of ``spec.kind`` (or of every kind) by id, then list items in file order."""
    fields = spec.fields
    out = []
    kinds = list(registry.entries) if spec.kind is None else [spec.kind]
    for kind, (eid, item) in ((k, e) for k in kinds for e in sorted(registry.entries.get(k, {}).items())):
        for chain, idx in _walk((item.entry,), spec.path, (), spec.items):
            ids = (eid,) if spec.kind is not None else (kind, eid)
            row = {k: v for k, v in zip(spec.keys, (*ids, *idx)) if k not in spec.exclude}
            row |= {c.name: _value(chain, c) for c in fields}
            at = Row(item, chain[-1], chain, idx)
            row |= {name: d.value(at) for name, d in spec.derived.items()}
            out.append(row)
    return out
