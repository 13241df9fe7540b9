"""Field-level provenance: every number an entry states, with the source and confidence it rests on.

A number is sourced in one of three ways, tried in this order (registry/README.md, "Provenance"):

1. ``own``: it is written with its provenance, ``{value: 3.35 TB/s, source: mle_accel}``;
2. ``shipped-config``: it is model geometry that ``kvreg validate`` re-derived from the model's
   shipped ``config.json`` (``registry/models/<id>.config.json``, kvreg/configcheck.py) and found
   equal, so the shipped file is its source;
3. ``default``: the entry names the source of its bare numbers explicitly, by key prefix:

   .. code-block:: yaml

      field_sources:
        config: [layers, hidden_size, vocab_size, attention_heads, moe, layer_groups]

A number none of these covers is ``unsourced`` and a problem (check
``kvreg/checks/050_unsourced_number.sql``).  Confidence: the field's own, else (observations) an
``inferred`` note on the key makes it ``estimated``, else the entry's ``confidence``.

Only numbers the YAML states are counted (pydantic ``model_fields_set``); schema defaults are not
facts of the entry.  Booleans, ids, dates and strings are not numbers.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Iterator

from pydantic import BaseModel

from kvreg.schema.accounting import Cited
from kvreg.schema.columns import Column
from kvreg.schema.common import Entry, Measure

FACT_KINDS = ("model", "hardware", "engine", "observation", "throughput")
"""Entry kinds whose numbers are facts and must be sourced; a report definition asks a question."""

SHIPPED_CONFIG_SOURCE = "shipped-config"
"""``source_id`` of a number checked against the model's shipped config.json."""


@dataclasses.dataclass(frozen=True)
class FieldFact:
    """One number of one entry.

    ``path`` is the key path in the YAML (``("layer_groups", 0, "kv_heads")``), ``field`` the same
    dotted; ``value`` is in the field's base unit (bytes, tokens, bytes/s, FLOP/s, a count); ``basis``
    is ``own``, ``shipped-config``, ``default`` or ``unsourced``.  The marked fields are the columns of
    the ``field_provenance`` table, in this order (kvreg/tables.py ``FIELD_PROVENANCE``).
    """

    path: tuple
    field: Annotated[str, Column()] = dataclasses.field(init=False)
    value: Annotated[float, Column()]
    source_id: Annotated[str | None, Column()]
    basis: Annotated[str, Column()]
    confidence: Annotated[str, Column()]
    confidence_basis: Annotated[str, Column()]
    note: Annotated[str | None, Column()]

    def __post_init__(self):
        object.__setattr__(self, "field", ".".join(map(str, self.path)))


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _leaves(obj, path: tuple) -> Iterator[tuple[tuple, float, Measure | None]]:
    """(path, value, the Measure holding it or None) for every stated number below ``obj``."""
    if isinstance(obj, Measure):
        if _is_number(obj.value):
            yield path, float(obj.value), obj
        return
    if isinstance(obj, Cited) and obj.source and isinstance(obj.value, bool):
        # a cited on/off rule (reserve.cudagraph_profile.append_max_num_seqs) is a stated fact too: it is
        # counted as 1 (on) or 0 (off) so the source it rests on reaches the provenance view and the report
        yield path + ("value",), float(obj.value), obj
        return
    if isinstance(obj, Cited) and obj.source and isinstance(obj.value, (list, tuple)):
        # a cited list of numbers (accounting.block_sizes): each number rests on the rule's source
        for i, v in enumerate(obj.value):
            if _is_number(v):
                yield path + ("value", i), float(v), obj
        return
    if isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            if name in obj.model_fields_set and name != "field_sources":
                yield from _leaves(getattr(obj, name), path + (name,))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _leaves(v, path + (i,))
    elif _is_number(obj):
        yield path, float(obj), None


def _covers(prefix: str, path: tuple) -> bool:
    parts = prefix.split(".")
    return prefix == "*" or tuple(map(str, path[:len(parts)])) == tuple(parts)


def default_source(entry: Entry, path: tuple) -> str | None:
    """The source ``field_sources`` names for ``path``: the longest matching prefix wins."""
    best, best_len = None, -1
    for src, prefixes in entry.field_sources.items():
        for p in prefixes:
            n = 0 if p == "*" else len(p.split("."))
            if _covers(p, path) and n > best_len:
                best, best_len = src, n
    return best


def field_facts(entry: Entry, checked: dict[tuple, object] | None = None) -> list[FieldFact]:
    """Every number ``entry`` states, each with its source and confidence resolved.

    Args:
        entry: a validated entry.
        checked: key paths whose value the shipped config.json reproduced (from
            :func:`kvreg.configcheck.check_model`); those are ``shipped-config``.

    Returns:
        one :class:`FieldFact` per number, in schema order.
    """
    checked = checked or {}
    inferred = getattr(entry, "inferred", {}) or {}
    out = []
    for path, value, m in _leaves(entry, ()):
        key = ".".join(map(str, path))
        if m is not None and m.source:
            src, basis = m.source, "own"
        elif path in checked:
            src, basis = SHIPPED_CONFIG_SOURCE, "shipped-config"
        elif (d := default_source(entry, path)) is not None:
            src, basis = d, "default"
        else:
            src, basis = None, "unsourced"
        note = m.note if m is not None else None
        if m is not None and getattr(m, "confidence", None):
            conf, cbasis = m.confidence, "own"
        elif key in inferred:
            conf, cbasis, note = "estimated", "inferred", note or inferred[key]
        else:
            conf, cbasis = entry.confidence, "entry"
        out.append(FieldFact(path=path, value=value, source_id=src, basis=basis, confidence=conf,
                             confidence_basis=cbasis, note=note))
    return out


def unmatched_prefixes(entry: Entry) -> list[tuple[str, str]]:
    """(source id, prefix) pairs of ``field_sources`` that cover no stated number (a typo)."""
    paths = [p for p, _, _ in _leaves(entry, ())]
    # "*" is a blanket for whatever the entry states, so it is never "unused".
    return [(s, p) for s, ps in entry.field_sources.items() for p in ps
            if p != "*" and not any(_covers(p, path) for path in paths)]


def provenance_stats(registry) -> list[dict]:
    """Per fact kind: how many numbers, and how each is sourced and given a confidence.

    Returns one dict per kind present, then a ``total`` row, with keys ``kind``, ``entries``,
    ``numbers``, ``own``, ``shipped_config``, ``default``, ``unsourced`` (source basis) and
    ``own_confidence``, ``inferred_confidence``, ``entry_confidence`` (confidence basis).  In a
    valid registry ``unsourced`` is 0 (each one is a validation problem).  The total row's ``entries``
    counts the fact entries; its ``other_entries`` (``{kind: entries}``) the entries of the other kinds
    (report definitions), so the two add up to what ``kvreg validate`` says it validated.
    """
    keys = ("own", "shipped_config", "default", "unsourced")
    ckeys = ("own_confidence", "inferred_confidence", "entry_confidence")
    rows = []
    for kind in FACT_KINDS:
        loaded = registry.entries.get(kind, {})
        if not loaded:
            continue
        row = dict(kind=kind, entries=len(loaded), numbers=0, **{k: 0 for k in keys + ckeys})
        for eid, item in loaded.items():
            checked = registry.config_checked.get(eid, {}) if kind == "model" else {}
            for f in field_facts(item.entry, checked):
                row["numbers"] += 1
                row[f.basis.replace("-", "_")] += 1
                row[f"{f.confidence_basis}_confidence"] += 1
        rows.append(row)
    total = dict(kind="total", **{k: sum(r[k] for r in rows) for k in ("entries", "numbers") + keys + ckeys})
    total["other_entries"] = {k: len(v) for k, v in registry.entries.items() if k not in FACT_KINDS and v}
    return rows + [total]


def render_stats(rows: list[dict]) -> str:
    """The ``kvreg validate --stats`` table: counts and the share with a source and a confidence."""
    head = ["kind", "entries", "numbers", "own source", "shipped config", "field_sources", "unsourced",
            "own confidence", "inferred", "entry confidence"]
    keys = ["kind", "entries", "numbers", "own", "shipped_config", "default", "unsourced",
            "own_confidence", "inferred_confidence", "entry_confidence"]
    body = [[str(r[k]) if k == "kind" else f"{r[k]:,}" for k in keys] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    lines = ["Provenance of every number (registry/README.md, \"Provenance\"):", fmt(head),
             fmt(["-" * w for w in widths])] + [fmt(b) for b in body]
    t = rows[-1]
    other = t.get("other_entries") or {}
    if other:
        # the headline counts every entry validated; the table the fact entries, whose numbers need sources
        parts = ", ".join(f"{n:,} {k}" for k, n in sorted(other.items()))
        lines.append(f"entries: {t['entries']:,} fact entries above + {parts} (definitions: no facts to source) "
                     f"= {t['entries'] + sum(other.values()):,} validated")
    n = t["numbers"] or 1
    sourced = t["numbers"] - t["unsourced"]
    lines.append(f"with a source: {sourced:,} of {t['numbers']:,} ({100 * sourced / n:.1f} %); "
                 f"with a confidence: {t['numbers']:,} of {t['numbers']:,} (100.0 %; "
                 f"{t['own_confidence'] + t['inferred_confidence']:,} their own, the rest the entry's)")
    return "\n".join(lines)
