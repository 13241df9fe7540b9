"""Table-column markers on entry-model fields: the one place a base-table column is declared.

A field annotated ``Annotated[int | None, Column("window_tokens")]`` is a column of the base table
whose rows are the model's objects; its pandas dtype and nullability follow from the annotation
(kvreg/entry_tables.py: ``Measure[Tokens] | None`` → ``Int64``, nullable).  ``Columns(prefix)`` on a
nested-model field flattens that model's marked fields into the same row (``moe.experts`` →
``moe_experts``).  The markers are plain metadata: pydantic ignores them, so validation and the
published JSON Schemas are unchanged by them.
"""

from __future__ import annotations

import dataclasses
import fractions
from typing import Any


@dataclasses.dataclass(frozen=True)
class Column:
    """This field is a column.

    Attributes:
        name: the column name (default: the field name); a unit-bearing field names its unit
            (``_bytes``, ``_tokens``, ``_bytes_per_s``; tests/test_entry_tables.py checks it).
        table: the base table it belongs to when not the one whose rows hold this model's objects
            (``model_profile_geometry`` for a model's FFN widths).
        fill: the value written when the field (or an enclosing optional model) is absent; the
            column is then not nullable (``k_eq_v`` absent → false).
        fallback: a sibling field read when this one is absent (``params_active`` → ``params_total``).
        inherit: when absent, the enclosing object's field of the same name is read (a throughput
            measurement's ``scenario`` defaults to its entry's).
        join: a list field is written as one string, its items joined by this separator (NULL
            when absent, or empty where the field's default is empty): ``block_sizes: [16, 32]`` → ``'16,32'``.
        after: the column this one follows, where declaration order would put it elsewhere (the
            tables kept their column order when their columns moved here: views pass it on with
            ``SELECT *`` / ``o.*``).
        last: placed after every other field column of the row (entry-level ``confidence``).
        scale: the stored value is the field's times this, to put a figure kept as printed in base
            units (an observation's logged ``model_loading_gib`` → ``model_loading_bytes``, × 2^30; a
            report's ``tpot_ms`` → ``tpot_s``, × ``Fraction(1, 1000)``); the column is then ``Float64``.
            An exact ratio (an int or a :class:`fractions.Fraction`): the stored float is the
            correctly rounded product, as ``x / 1000`` would give (``x * 1e-3`` would not).
    """

    name: str | None = None
    table: str | None = None
    fill: Any = None
    fallback: str | None = None
    inherit: bool = False
    join: str | None = None
    after: str | None = None
    last: bool = False
    scale: int | fractions.Fraction | None = None

    def __post_init__(self):
        if isinstance(self.scale, float):
            raise TypeError(f"Column {self.name}: scale {self.scale!r} is a float; give an int or a Fraction")


@dataclasses.dataclass(frozen=True)
class Rows:
    """On a dict or list field of scalars: the field is a table of its own, one row per key.

    Attributes:
        table: the table (its first column is the entry id, named by the kind's key: ``hardware_id``).
        key: the column holding a dict's key or a list's item; rows in key order, a list's items once each.
        value: the column holding a dict's value (a ``Measure``'s ``value``); None for a list.
    """

    table: str
    key: str
    value: str | None = None


@dataclasses.dataclass(frozen=True)
class Columns:
    """On a field holding a nested model: its :class:`Column` fields join this row, names prefixed.

    Attributes:
        prefix: put before each nested column's name (``moe_``).
        present: the name of a boolean column saying whether the block is given (``cudagraph_profiled``).
        last: every column of the block goes after the row's other field columns.
    """

    prefix: str = ""
    present: str | None = None
    last: bool = False


@dataclasses.dataclass(frozen=True)
class Item:
    """On a list field of ids or numbers: each item is a row of the entry kind's items table, one table for
    several such fields (a report's ``models``, ``hardware`` … ``contexts`` → ``report_items``).

    Attributes:
        table: the items table (kvreg/table_specs.py :class:`~kvreg.table_specs.ItemTable`).
        kind: the ``item_kind`` of this field's rows (``model``, ``context``).
    """

    table: str
    kind: str
