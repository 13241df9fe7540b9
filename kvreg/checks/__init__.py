"""Cross-entry registry checks: each ``*.sql`` file here is a query returning offending rows.

Besides the base tables, the queries see ``invalid_entries(kind, entry_id)``: entry files
that failed validation, so a reference to one is not also reported as missing; and the ``tp_sharding`` view
(kvreg/sql/037_tp_sharding.sql) over the TP sizes plus every TP an observation states.
Every query returns ``file, line, key, message, hint``; the file stem (with
dashes) is the problem code.  A hint may hold ``{near:KIND:ID}`` (KIND = model, hardware, engine or
architecture): it becomes "did you mean …?" with the ids :func:`kvreg.suggest.near_ids` finds for ID among the
registry's ids of that kind (for ``architecture``: the families the other hardware entries name; the same
suggestions the CLI makes), or nothing when none is close.  A message or hint may hold
``{hf:MODEL:HF_ID}``: it becomes the ``file:line`` of that model entry's ``hf_id`` or of the listed
checkpoint whose ``hf_id`` is HF_ID (case-insensitive), else the entry's file.  They run over the same base tables the build
loads, in an in-memory DuckDB (CONVENTIONS.md, kvreg habit 3), and over the views a check names on a
``-- Reads views: NNN_name`` line (created from kvreg/sql first), so a stated figure is compared with the build's
own formula.
"""

from __future__ import annotations

from importlib import resources

import re

from kvreg.problems import Problem

_VIEWS = re.compile(r"^-- Reads views: (.+)$", re.M)
"""A check's header line naming the view files (kvreg/sql/NNN_name, comma-separated) it reads besides the base
tables: they are created first, once, so a check compares a stated figure with the formula the build uses (never a
copy of it)."""

_NEAR = re.compile(r"\{near:(model|hardware|engine|architecture):([^}]*)\}")


def _near(hint: str, registry) -> str:
    """``hint`` with each ``{near:KIND:ID}`` marker replaced by "did you mean …? " (or removed)."""
    from kvreg.suggest import near_ids

    def one(m: re.Match) -> str:
        if m.group(1) == "architecture":  # the families the other hardware entries name (ID's own left out)
            known = sorted({h.entry.architecture for h in registry.entries.get("hardware", {}).values()
                            if h.entry.architecture and h.entry.architecture != m.group(2)})
        else:
            known = sorted(registry.entries.get(m.group(1), {}))
        near = near_ids(m.group(2), known)
        return f"did you mean {', '.join(near)}? " if near else ""

    return _NEAR.sub(one, hint or "")


_HF = re.compile(r"\{hf:([^:}]*):([^}]*)\}")


def _hf_at(text: str, registry) -> str:
    """``text`` with each ``{hf:MODEL:HF_ID}`` marker replaced by the file:line where MODEL's entry names HF_ID."""

    def one(m: re.Match) -> str:
        item = registry.entries.get("model", {}).get(m.group(1))
        if item is None:
            return m.group(1)
        name, doc = m.group(2).rstrip("/").lower(), item.doc
        paths = [("hf_id",)] + [("checkpoints", i, "hf_id") for i, c in enumerate(item.entry.checkpoints)
                                 if (c.hf_id or "").lower() == name]
        path = next((p for p in paths if p != ("hf_id",) or (item.entry.hf_id or "").lower() == name), None)
        return f"{doc.file}:{doc.where(path)[0]}" if path else doc.file

    return _HF.sub(one, text or "")


def run_checks(registry) -> list[Problem]:
    """Run every check query over ``registry``'s tables; return the problems found."""
    import duckdb

    from kvreg.tables import frames

    con = duckdb.connect(":memory:")
    for name, df in frames(registry).items():
        con.register(f"_{name}", df)
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "_{name}"')
    docs = {item.doc.file: item.doc for loaded in registry.entries.values() for item in loaded.values()}
    import pandas as pd

    invalid = pd.DataFrame(sorted(registry.invalid), columns=["kind", "entry_id"], dtype="string")
    con.register("_invalid_entries", invalid)
    con.execute("CREATE TABLE invalid_entries AS SELECT * FROM _invalid_entries")
    # every TP an observation states, so check 207's tp_sharding view (037, read via its Reads views line) covers it
    con.execute("INSERT INTO tp_sizes SELECT DISTINCT tp FROM observations WHERE tp IS NOT NULL AND tp > 0 "
                "AND tp NOT IN (SELECT tp FROM tp_sizes)")
    problems = []
    created: set[str] = set()
    for f in sorted(resources.files("kvreg.checks").iterdir(), key=lambda p: p.name):
        if not f.name.endswith(".sql"):
            continue
        query = f.read_text()
        for view in (v.strip() for m in _VIEWS.findall(query) for v in m.split(",")):
            if view not in created:
                con.execute(resources.files("kvreg.sql").joinpath(f"{view}.sql").read_text())
                created.add(view)
        code = f.name.removesuffix(".sql").split("_", 1)[1].replace("_", "-")
        # five columns (file, line, key, message, hint), and a sixth, related, where a check names another file
        for file, line, key, message, hint, *related in con.execute(query).fetchall():
            # Point at the offending key itself when its document knows it (the
            # query's line is that of the enclosing entry or list item).
            col = 1
            doc = docs.get(file)
            if doc is not None and key:
                path = tuple(int(k) if k.isdigit() else k for k in key.split("."))
                if path in doc.positions:
                    line, col = doc.positions[path]
            problems.append(Problem(file, int(line), col, key, code, _hf_at(message, registry),
                                    _near(_hf_at(hint, registry), registry), related=(related or [""])[0] or ""))
    con.close()
    return problems
