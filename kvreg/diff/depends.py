"""Which base tables a view reads: the dependency graph of a side's views and macros, from their SQL text.

``kvreg diff`` builds HEAD as a copy of BASE with only the base tables whose frames differ rebuilt
(``scenarios.attach_like``), so a view whose base tables are all unchanged has the same rows on both sides and
its comparison can be skipped: a price edit (``hardware_prices``) cannot move ``capacity``, a source edit
(provenance tables) moves no view at all.  The graph is read from DuckDB's catalogue (``duckdb_views().sql``,
``duckdb_functions().macro_definition``): every identifier of a definition that names a table, view or macro
of the side is an edge, but for one right after ``AS`` (an alias or a type).  That over-approximates (a CTE or
column spelled like a table adds an edge), which only costs a comparison; it never misses a read, since every object a definition uses is named in its text.  On the
shipped registry the sets equal the tables DuckDB's own plan scans (``EXPLAIN``), at ~0.05 s instead of ~0.6 s
per view.
"""

from __future__ import annotations

import re

# An identifier, unless it follows AS: that names an alias, a CTE column or a CAST type (`count(...) AS sources`
# in speed_fit), never an object read.
_IDENT = re.compile(r"(?<![A-Za-z0-9_])(?<!AS )(?<!as )[A-Za-z_][A-Za-z0-9_]*")


def base_tables_read(con, alias: str, names: list[str]) -> dict[str, set[str]]:
    """For each view or macro in ``names`` present in side ``alias``: the base tables it reads, transitively.

    Args:
        con: a DuckDB connection with the side attached as database ``alias``.
        names: view (or table macro) names; a name the side does not have is left out of the result.
    Returns:
        ``{name: {table, …}}`` (a base table in ``names`` maps to itself).

    Main's schema only: the plan scopes (kvreg/sql/276-278) hold stand-ins of the same names in their own schemas
    (and a table, plan_admission.first_principles_none), which main's views never read; counted by name, they made
    capacity's focus read a table with no digest, and the diff's step cache stopped keying it.
    """
    defs: dict[str, str] = dict(con.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE database_name = ? AND schema_name = 'main' AND NOT internal",
        [alias]).fetchall())
    for name, text in con.execute(
            "SELECT function_name, string_agg(coalesce(macro_definition, ''), ' ') FROM duckdb_functions() "
            "WHERE database_name = ? AND schema_name = 'main' AND function_type IN ('macro', 'table_macro') "
            "GROUP BY ALL", [alias]).fetchall():
        defs[name] = defs.get(name, "") + " " + text
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ?"
                                        " AND schema_name = 'main'",
                                        [alias]).fetchall()}
    known = set(defs) | tables
    edges = {n: set(_IDENT.findall(text or "")) & known - {n} for n, text in defs.items()}
    out: dict[str, set[str]] = {}
    for name in names:
        if name in tables:
            out[name] = {name}
            continue
        if name not in defs:
            continue
        seen, todo, read = {name}, [name], set()
        while todo:
            for ref in edges.get(todo.pop(), ()):
                if ref in seen:
                    continue
                seen.add(ref)
                if ref in tables:
                    read.add(ref)
                if ref in defs:
                    todo.append(ref)
        out[name] = read
    return out


def _is_location(column: str) -> bool:
    """A column saying where a value was written (``file``, ``line``, ``col``, ``*_line``), not what it is."""
    return column in ("file", "line", "col") or column.endswith("_line")


def value_changed(mine: dict, theirs: dict, replaced: list[str]) -> set[str]:
    """The tables of ``replaced`` whose values differ, not only where they were written.

    Args:
        mine, theirs: the two sides' frames (``kvreg.tables.frames``: table name → DataFrame).
        replaced: the tables ``attach_like`` rebuilt (their frames differ in some column).
    Returns:
        The names whose frames still differ with the location columns dropped: a YAML file rewritten with the
        same values (keys moved, a comment added, a source note edited above them) moves every line number,
        which no compared figure reads (no kvreg/sql view orders or computes by ``line``).
    """
    out = set()
    for name in replaced:
        a, b = mine.get(name), theirs.get(name)
        if a is None or b is None or list(a.columns) != list(b.columns):
            out.add(name)
            continue
        keep = [c for c in a.columns if not _is_location(c)]
        if not a[keep].reset_index(drop=True).equals(b[keep].reset_index(drop=True)):
            out.add(name)
    return out


def tables_read_by(con, alias: str, texts: list[str]) -> set[str]:
    """The base tables of side ``alias`` that SQL ``texts`` read, transitively through the views and macros they name.

    The same over-approximation as :func:`base_tables_read` (every identifier naming an object of the side is a
    read), applied to SQL the diff itself runs (``scenarios.SHARE_STEPS``) rather than to a catalogue entry.

    Args:
        con: a DuckDB connection with the side attached as database ``alias``.
        texts: SQL text, or bare object names.
    Returns:
        The set of base table names (empty when the texts name none).
    """
    names = sorted({n for text in texts for n in _IDENT.findall(text)})
    return set().union(set(), *base_tables_read(con, alias, names).values())
