"""Entry-level diff: which entries of each kind were added, removed or changed, key by key.

Works over every kind in :data:`kvreg.registry.KINDS` without naming any.
Values are compared after validation (``80 GB`` and ``80e9`` are the same
value, a bare number and ``{value: …}`` are the same measure) and shown as
written in the YAML, with the line they are on.
"""

from __future__ import annotations

from typing import Any

from kvreg.diff.model import EntryChange, FieldChange
from kvreg.registry import Loaded, Registry

_MISSING = object()


def flatten(obj: Any, prefix: tuple = ()) -> dict[tuple, Any]:
    """Leaves of nested dicts/lists as ``{key path tuple: scalar}``; empty containers are leaves."""
    if isinstance(obj, dict) and obj:
        out = {}
        for k, v in obj.items():
            out.update(flatten(v, prefix + (k,)))
        return out
    if isinstance(obj, list) and obj:
        out = {}
        for i, v in enumerate(obj):
            out.update(flatten(v, prefix + (i,)))
        return out
    return {prefix: obj}


def raw_value(data: Any, path: tuple) -> Any:
    """The value at ``path`` as written in the YAML; a bare measure answers for its ``.value``.

    Returns ``_MISSING`` when the key is not written (a default applies).
    """
    cur = data
    for i, part in enumerate(path):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and part < len(cur):
            cur = cur[part]
        elif path[i:] == ("value",) and not isinstance(cur, (dict, list)):
            return cur  # `memory: 80 GB` is the measure {value: 80 GB}
        else:
            return _MISSING
    return cur


def _normalized(item: Loaded) -> dict[tuple, Any]:
    return flatten(item.entry.model_dump(mode="json", exclude_none=True))


def _same_sources_reordered(old: Loaded, new: Loaded) -> bool:
    """True when both versions cite the same sources in another order: no number can move.

    An edit to a source keeps the positional comparison (``sources.0.url: old → new``).
    """
    import json

    def canon(item):
        return sorted(json.dumps(s.model_dump(mode="json", exclude_none=True), sort_keys=True)
                      for s in item.entry.sources)

    return old.entry.sources != new.entry.sources and canon(old) == canon(new)


def _shown(item: Loaded, path: tuple, normalized: Any) -> Any:
    raw = raw_value(item.doc.data, path)
    return normalized if raw is _MISSING else raw


def _dotted(path: tuple) -> str:
    return ".".join(map(str, path))


def field_changes(old: Loaded, new: Loaded) -> tuple[FieldChange, ...]:
    """Keys whose validated value differs between two versions of one entry, sorted by HEAD line."""
    a, b = _normalized(old), _normalized(new)
    if _same_sources_reordered(old, new):
        a = {p: v for p, v in a.items() if p[:1] != ("sources",)}
        b = {p: v for p, v in b.items() if p[:1] != ("sources",)}
    out = []
    for path in sorted(set(a) | set(b), key=lambda p: tuple(map(str, p))):
        va, vb = a.get(path, _MISSING), b.get(path, _MISSING)
        if va == vb and type(va) is type(vb):
            continue
        if vb is _MISSING:
            file, line = old.doc.file, old.doc.where(path)[0]
        else:
            file, line = new.doc.file, new.doc.where(path)[0]
        out.append(FieldChange(
            path=_dotted(path),
            old=None if va is _MISSING else _shown(old, path, va),
            new=None if vb is _MISSING else _shown(new, path, vb),
            file=file, line=line))
    return tuple(sorted(out, key=lambda f: (f.line, f.path)))


def entry_changes(base: Registry, head: Registry) -> list[EntryChange]:
    """Added, removed and changed entries of every kind, in kind order then id.

    Args:
        base, head: validated registries (any kinds; a kind missing on one side
            counts as empty there).
    """
    out: list[EntryChange] = []
    kinds = list(dict.fromkeys([*base.entries, *head.entries]))
    for kind in kinds:
        old, new = base.entries.get(kind, {}), head.entries.get(kind, {})
        for eid in sorted(set(old) | set(new)):
            if eid not in old:
                item = new[eid]
                out.append(EntryChange(kind, eid, "added", item.doc.file, item.doc.where(("id",))[0]))
            elif eid not in new:
                item = old[eid]
                out.append(EntryChange(kind, eid, "removed", item.doc.file, item.doc.where(("id",))[0]))
            else:
                fields = field_changes(old[eid], new[eid])
                if fields:
                    out.append(EntryChange(kind, eid, "changed", new[eid].doc.file,
                                           new[eid].doc.where(("id",))[0], fields))
    return out
