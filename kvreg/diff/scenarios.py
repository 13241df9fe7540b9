"""Scenario figures that moved: the views of both sides joined in SQL, row by row.

Both registries are loaded into one DuckDB connection as two attached
in-memory databases (``kv_base`` and ``kv_head``) with the same tables and
views; each configured view is compared by a FULL OUTER JOIN on its key
columns (DuckDB binds a view inside the database it lives in, so
``kv_base.capacity`` reads ``kv_base``'s tables).  Views a branch does not
have are skipped, so the list can name views that other work adds.

The grid is limited to scenarios touching an added, removed or changed entry
(by the view's ``<kind>_id`` columns), plus entries that depend on one (a
hardware entry whose residents name a changed model); ``all_scenarios``
compares every row.
"""

from __future__ import annotations

import dataclasses
import json

from kvreg.diff.focus import (_NATIVE_WEIGHTS, FOCUS, SHARED, FocusSpec, batches_literal, focus_sql,
                              native_weights_table)
from kvreg.diff.model import FigureChange, FigureSummary, ScenarioSetChange, ViewComparison

BASE, HEAD = "kv_base", "kv_head"
RANK_BASE, RANK_HEAD = "kv_base_rank", "kv_head_rank"  # copies cut for the recommendation check (cut_to_reports)


@dataclasses.dataclass(frozen=True)
class ViewSpec:
    """A view to compare and the figures in it that reports show (used when the column exists)."""

    view: str
    all_figures: tuple[str, ...]  # compared with --all-scenarios; the default compares focus.FOCUS


# The views the reports use and their headline figures (issue 8).  Views and
# columns missing on this branch are skipped.
VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("capacity", ("max_seqs", "naive_max_seqs", "pool_bytes", "seq_bytes")),
    ViewSpec("engine_capacity", ("admitted_seqs", "logged_kv_tokens")),
    ViewSpec("roofline", ("decode_tok_per_s",)),
    ViewSpec("costs", ("usd_per_hour", "usd_per_million_output_tokens", "usd_per_concurrent_seq_month")),
)

# Scenario axes: the columns that identify a row, in display order.  A view's
# key is the subset it has; the comparison refuses a view whose key is not unique.
KEY_COLUMNS: tuple[str, ...] = (
    "model_id", "hardware_id", "engine_id", "weights_dtype", "kv_dtype", "tp", "context_tokens",
    "max_model_len", "max_num_batched_tokens", "batch", "batch_size", "batch_seqs",
    "workload_id", "report_id", "at",
)

# Which key column carries the id of an entry of each kind.
ENTITY_COLUMNS: dict[str, str] = {"model": "model_id", "hardware": "hardware_id", "engine": "engine_id"}

# (table, id column, referenced id column, referenced kind, depending kind): an entry of the
# depending kind whose row names a touched entry of the referenced kind is touched too.
DEPENDENCIES: tuple[tuple[str, str, str, str, str], ...] = (
    ("residents", "hardware_id", "model_id", "model", "hardware"),
)

SAMPLE_ROWS = 5
SEQ_RANK = 1e15  # a size above any |%|: sequence-count changes sort first


def _materialize_focus(con, focus: FocusSpec, order: list[tuple[str, list[str]]],
                       sides: dict[str, tuple[str, str]] | None = None, keys=None) -> None:
    """``_diff_base`` / ``_diff_head``: the focused SELECT per touched entry group, UNIONed (see :mod:`focus`).

    ``sides``: kind → (BASE, HEAD) aliases of copies cut to that kind's entries (an edit of several kinds:
    :func:`cut_by_kind`).  A group's SELECT then runs on its kind's copies and leaves out the rows an earlier
    group's predicate matches, so a row touching two kinds (an edited model on an edited accelerator) comes from
    one copy only, the earlier group's, which is also the group :func:`_attribution` gives it to.
    ``keys``: the step cache's keys (:mod:`kvreg.diff.stepcache`; step ``focus <view>``, :data:`FOCUS_STEPS`): a
    side's focused rows computed before under the same key are read back (not for ``sides``' copies).
    """
    step = "focus " + focus.view
    for side, (alias, name) in enumerate(((BASE, "_diff_base"), (HEAD, "_diff_head"))):
        key = _step_key(keys, alias, step, json.dumps(order)) if sides is None else None
        if key is not None and keys.cache.load_table(con, key, name, step):
            continue
        parts, params, earlier = [], [], []
        for kind, ids in order:
            col = ENTITY_COLUMNS[kind]
            if col not in focus.keys or not ids:
                continue
            test = f"v.{_q(col)} IN ({', '.join('?' * len(ids))})"
            if sides is None:
                parts.append(focus_sql(con, focus, alias, test))
                params.extend(ids)
                continue
            entity = "(" + " AND ".join([test] + [f"NOT coalesce({t}, FALSE)" for t, _ in earlier]) + ")"
            parts.append(focus_sql(con, focus, sides.get(kind, (BASE, HEAD))[side], entity))
            params.extend(list(ids) + [i for _, group in earlier for i in group])
            earlier.append((test, ids))
        sql = " UNION ".join(f"({p})" for p in parts) or focus_sql(con, focus, alias, "FALSE")
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}", params)
        if key is not None:
            keys.cache.store_table(con, key, name, step)


def cut_by_kind(con, order: list[tuple[str, list[str]]], same: frozenset[str] | set[str] = frozenset(),
                say=None, keys=None) -> dict[str, tuple[str, str]]:
    """The focused rows of an edit of several kinds: one pair of side copies per kind, each cut to that kind.

    :func:`cut_to_touched` cannot cut a side for a model and an accelerator edited together (the model's rows
    need every accelerator, the accelerator's every model).  So per kind of entry touched, each side is copied
    (:func:`copy_side`, ``COPY FROM DATABASE``: tables, views, macros; the speed fits frozen on the uncut side
    first), the copy cut to that kind's touched entries and its focused views shared (:func:`share_focused`; HEAD's
    copy copies BASE's copy's steps listed in ``same``).  The comparison then reads each group's rows from its
    kind's copies (:func:`_materialize_focus`).  Exact as a one-kind cut is (tests/test_diff_cut.py): every
    per-scenario view computes a row from its own model, accelerator and release, drafts and residents kept.

    ``keys``: the step cache's keys (:class:`kvreg.diff.stepcache.StepKeys`), as for :func:`share_focused`.

    Returns:
        ``{kind: (base copy alias, head copy alias)}``; the copies stay attached to ``con``.
    """
    sides: dict[str, tuple[str, str]] = {}
    for kind in sorted({k for k, ids in order if ids}):
        sub = [(k, ids) for k, ids in order if k == kind and ids]
        pair = (f"{BASE}_{kind}", f"{HEAD}_{kind}")
        if say is not None:
            say(f"computing the focused scenarios of the edited {kind} entries")
        for alias, copy in zip((BASE, HEAD), pair):
            copy_side(con, alias, copy, keys=keys)
            cut_to_touched(con, copy, sub, keys)
        share_focused(con, pair[0], sub, keys=keys)
        share_focused(con, pair[1], sub, like=pair[0], same=same, keys=keys)
        sides[kind] = pair
    return sides


# Views that fit across entries (efficiencies fitted over every accelerator's and model's throughput
# measurements, with architecture-family fallbacks): frozen as tables before a side is cut down, so a
# cut registry keeps the full registry's fits.
FROZEN_VIEWS: tuple[str, ...] = ("speed_efficiency",)

# Entry kinds whose table can be cut to the touched entries: (table, id column).
CUTTABLE: dict[str, tuple[str, str]] = {"hardware": ("hardware", "hardware_id"), "model": ("models", "model_id"),
                                        "engine": ("engines", "engine_id")}
# Per-entry tables cut together with the kind's own table: an engine's accounting rules must go with its
# `engines` row, or the release would be read as a first-principles engine (memory_pools_at, 240).
CUT_WITH: dict[str, tuple[str, ...]] = {"engine": ("engine_accounting", "engine_quirks")}


def cut_to_touched(con, alias: str, order: list[tuple[str, list[str]]], keys=None) -> bool:
    """Cut side ``alias`` down to the scenarios a focused comparison reads; True when it did.

    The focused comparison (``focus.FOCUS``) only reads rows of touched entries, at the release's default
    ``max_num_batched_tokens``; every per-scenario view computes a row from its own model, accelerator and
    engine.  When one kind of entry is touched (models, accelerators or engine releases: a pull request's
    usual edit), the other entries of that kind and the non-default batched-token settings are deleted from
    the side's tables, so the views compute ~1/N of the grid with identical figures for the rows kept.
    Kept as well: models sharing a served set (target + draft) with a touched one and models resident
    on some accelerator (they shape that device's pool).  Cross-entry views (:data:`FROZEN_VIEWS`) are
    materialized first.  Mixed edits (a model and an accelerator) are not cut: their touched rows are a
    union, not a product.  Run the report recommendation check before this (it ranks across entries).
    ``keys``: the step cache's keys, told the side was cut (a step's key then says to what).
    """
    kinds = {k for k, ids in order if ids}
    if len(kinds) != 1 or next(iter(kinds)) not in CUTTABLE:
        return False
    kind = next(iter(kinds))
    ids = sorted({i for k, group in order for i in group})
    db = _q(alias)
    freeze(con, alias, keys=keys)
    _keep_only(con, alias, kind, ids)
    if keys is not None:
        keys.cut(alias, "touched " + json.dumps(order))
    con.execute(f"DELETE FROM {db}.batched_tokens WHERE max_num_batched_tokens NOT IN "
                f"(SELECT max_num_batched_tokens FROM {db}.engine_accounting WHERE max_num_batched_tokens IS NOT NULL "
                f"UNION SELECT max_num_batched_tokens_large_gpu FROM {db}.engine_accounting "
                f"WHERE max_num_batched_tokens_large_gpu IS NOT NULL)")
    return True


def _keep_only(con, alias: str, kind: str, ids: list[str]) -> None:
    """Delete side ``alias``'s entries of ``kind`` other than ``ids`` (and their CUT_WITH rows).

    A model cut also keeps the models sharing a served set with a kept model (drafts) and resident models,
    whose weights every pool subtracts.
    """
    db = _q(alias)
    table, col = CUTTABLE[kind]
    keep, params = f"list_contains(?, {_q(col)})", [ids]
    if kind == "model":
        keep += (f" OR model_id IN (SELECT s.model_id FROM {db}.served_models s WHERE s.served_id IN "
                 f"(SELECT t.served_id FROM {db}.served_models t WHERE list_contains(?, t.model_id)))"
                 f" OR model_id IN (SELECT r.model_id FROM {db}.residents r WHERE r.model_id IS NOT NULL)")
        params.append(ids)
    con.execute(f"DELETE FROM {db}.{_q(table)} WHERE NOT ({keep})", params)
    for other in CUT_WITH.get(kind, ()):
        if _has_table(con, alias, other):
            con.execute(f"DELETE FROM {db}.{_q(other)} WHERE NOT list_contains(?, {_q(col)})", [ids])


def cut_to_reports(con, alias: str, report_ids: list[str], order: list[tuple[str, list[str]]], keys=None) -> None:
    """Cut side ``alias`` down to what the report recommendation check of ``report_ids`` reads.

    A report ranks only the options of the models, accelerators and engine releases it lists
    (``report_items``; kvreg/sql/280_ranked_plans.sql filters ``ranked_plans`` by those lists), but the
    ranking's views compute the whole registry's grid before that filter (an engine edit's check took ~60 s
    CPU of 120 on the shipped registry).  So, for the check only (the diff ranks on a separate copy of each
    side: this cut keeps far fewer rows than the focused comparison needs), the other entries of each kind
    are deleted: kept are the reports' listed entries, the touched entries, models sharing a served set with a
    kept model and resident models, and every entry of a kind some report lists none of; ``model_weights`` keeps
    the weights dtypes the reports list (when each lists some) and the models' own (report_weights), and every
    row of draft and resident models.  Cross-entry views (:data:`FROZEN_VIEWS`) are frozen first.  tests/test_diff_cut.py checks the cut side ranks every option of
    the shipped reports exactly as the whole registry does.
    ``keys``: the step cache's keys, told the side was cut.
    """
    db = _q(alias)
    freeze(con, alias, keys=keys)
    if keys is not None:
        keys.cut(alias, "reports " + json.dumps([sorted(report_ids), order]))
    touched_ids = {k: {i for kind, ids in order if kind == k for i in ids} for k in CUTTABLE}
    for kind in CUTTABLE:
        listed = con.execute(
            f"SELECT report_id, list(DISTINCT item_id) FROM {db}.report_items WHERE item_kind = ? "
            f"AND list_contains(?, report_id) GROUP BY report_id", [kind, report_ids]).fetchall()
        if len(listed) < len(set(report_ids)):
            continue  # a report lists no entry of this kind: keep them all
        _keep_only(con, alias, kind, sorted({i for _, items in listed for i in items} | touched_ids[kind]))
    # Weights precisions the reports list, and each listed model's own checkpoint precision (report_weights,
    # kvreg/sql/031: every option is at one of them): the others' pools and admission are not computed.  A
    # draft's weights are read at its own dtype and a resident's at its stated one, so those models keep every row
    # (as in native_model_weights).
    dtypes = con.execute(f"SELECT report_id, list(DISTINCT item_id) FROM {db}.report_items WHERE "
                         f"item_kind = 'weights_dtype' AND list_contains(?, report_id) GROUP BY report_id",
                         [report_ids]).fetchall()
    if len(dtypes) == len(set(report_ids)) and _is_view(con, alias, "model_weights"):
        _view_to_table(con, alias, "model_weights",
                       f"SELECT w.* FROM {db}.model_weights w WHERE list_contains(?, w.weights_dtype) "
                       f"OR (w.model_id, w.weights_dtype) IN (SELECT rw.model_id, rw.weights_dtype "
                       f"FROM {db}.report_weights rw WHERE list_contains(?, rw.report_id)) "
                       f"OR w.model_id IN (SELECT s.model_id FROM {db}.served_models s WHERE s.role <> 'target') "
                       f"OR w.model_id IN (SELECT r.model_id FROM {db}.residents r WHERE r.model_id IS NOT NULL)",
                       [sorted({d for _, items in dtypes for d in items}), sorted(set(report_ids))])


def copy_side(con, alias: str, copy: str, *, frozen: bool = True, keys=None) -> None:
    """Attach a new in-memory database ``copy`` holding side ``alias``'s tables, views and macros.

    ``COPY FROM DATABASE`` (tens of milliseconds, where building a side from its registry takes ~1 s): the
    views and macros of the copy read the copy's own tables (DuckDB binds a view in the database it lives
    in), so the copy can be cut (:func:`cut_to_reports`) without touching ``alias``.  Cross-entry views
    (:data:`FROZEN_VIEWS`) are frozen in ``alias`` first (``frozen``), so both compute the fit once, on the
    uncut side.  ``keys``: the step cache's keys, told the copy holds ``alias``'s tables.
    """
    if frozen:
        freeze(con, alias, keys=keys)
    con.execute(f"ATTACH ':memory:' AS {_q(copy)}")
    con.execute(f"COPY FROM DATABASE {_q(alias)} TO {_q(copy)}")
    if keys is not None:
        keys.copied(alias, copy)


def _is_view(con, alias: str, view: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_views() WHERE database_name = ? AND view_name = ?",
                            [alias, view]).fetchone()[0])


def _view_to_table(con, alias: str, view: str, select: str, params: list | None = None) -> None:
    """Replace view ``view`` of side ``alias`` by a table holding ``select``'s rows (same name)."""
    db = _q(alias)
    con.execute(f"CREATE OR REPLACE TEMP TABLE __frozen AS {select}", params or [])
    con.execute(f"DROP VIEW {db}.{_q(view)}")
    con.execute(f"CREATE TABLE {db}.{_q(view)} AS SELECT * FROM __frozen")
    con.execute("DROP TABLE __frozen")


def freeze(con, alias: str, like: str | None = None, same: frozenset[str] | set[str] = frozenset(),
           keys=None) -> None:
    """Materialize side ``alias``'s cross-entry views (:data:`FROZEN_VIEWS`) as tables; idempotent.

    ``like``, ``same``: a view named in ``same`` (its inputs are byte-identical on both sides:
    :func:`shared_steps`) is copied from side ``like``'s frozen table instead of being computed again.
    ``keys``: a :class:`kvreg.diff.stepcache.StepKeys`; a view whose key was computed before is read back from
    the step cache, one computed here is stored.
    """
    for view in FROZEN_VIEWS:
        if _is_view(con, alias, view):
            source = alias
            if like is not None and view in same and _has_table(con, like, view) and not _is_view(con, like, view):
                source = like
            elif _cached_step(con, keys, alias, view, view):
                continue
            _view_to_table(con, alias, view, f"SELECT * FROM {_q(source)}.{_q(view)}")
            if source == alias:
                _store_step(con, keys, alias, view, view)


def _step_key(keys, alias: str, step: str, *extra: str) -> str | None:
    return None if keys is None else keys.key(alias, step, *extra)


def _cached_step(con, keys, alias: str, step: str, table: str, *extra: str) -> bool:
    """Replace view or table ``table`` of side ``alias`` by the step cache's rows of ``step``; False on a miss."""
    key = _step_key(keys, alias, step, *extra)
    if key is None:
        return False
    name = f"{_q(alias)}.{_q(table)}"
    return keys.cache.load_table(con, key, name, step, temp=False,
                                 replaces_view=name if _is_view(con, alias, table) else None)


def _store_step(con, keys, alias: str, step: str, table: str, *extra: str) -> None:
    key = _step_key(keys, alias, step, *extra)
    if key is not None:
        keys.cache.store_table(con, key, f"{_q(alias)}.{_q(table)}", step)


# What each per-side computation of the focused comparison reads, as SQL text or object names (every identifier
# naming a table, view or macro of the side counts: kvreg/diff/depends.py tables_read_by), read on the catalogue
# as built, so a view's reads include those of every view and macro under it (capacity's include the admission
# rows', roofline's capacity's).  Every step after the freeze also reads what the cut (cut_to_touched, _keep_only:
# which rows of batched_tokens, models, hardware, engines survive) and the native-weights tables (_NATIVE_WEIGHTS,
# native_model_weights) read, as it is computed from their rows.
_CUT_READS = ("batched_tokens engine_accounting engine_quirks engines hardware models served_models residents "
              "model_weights checkpoints hardware_precisions " + _NATIVE_WEIGHTS)
SHARE_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("speed_efficiency", ("speed_efficiency",)),  # frozen before any cut: its inputs are the whole registry's
    ("__engine_capacity_rows", (_CUT_READS, "engine_capacity_at engine_capacity contexts max_model_lens")),
    ("capacity", (_CUT_READS, SHARED["capacity"], "capacity")),
    ("roofline", (_CUT_READS, SHARED["roofline"], "roofline batch_sizes")),
)
# The focused rows each comparison reads of a side (focus.FOCUS, _materialize_focus), keyed like the steps above
# (by what the view reads on the catalogue as built, which includes the shared tables' inputs): not copied between
# the sides (a view none of whose inputs differ is not compared at all), only read back from the step cache.
FOCUS_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    ("focus " + view, (_CUT_READS, spec.sql, view, "batch_sizes")) for view, spec in FOCUS.items())


def step_reads(con, alias: str) -> dict[str, set[str]]:
    """{step of :data:`SHARE_STEPS`: the base tables it reads}, on side ``alias``'s catalogue as built.

    Call before :func:`freeze` or :func:`share_focused` replace views by tables (whose own reads would then be
    hidden).  Derived from the SQL text (``depends.tables_read_by``), never listed by hand: the sets that key
    the step cache (:mod:`kvreg.diff.stepcache`) and decide what HEAD copies (:func:`shared_steps`).
    """
    from kvreg.diff.depends import _IDENT, base_tables_read

    names = {step: sorted({n for text in texts for n in _IDENT.findall(text)})
             for step, texts in SHARE_STEPS + FOCUS_STEPS}
    read = base_tables_read(con, alias, sorted({n for ns in names.values() for n in ns}))  # one catalogue read
    return {step: set().union(set(), *(read.get(n, set()) for n in ns)) for step, ns in names.items()}


def shared_steps(con, alias: str, changed: set[str], reads: dict[str, set[str]] | None = None) -> set[str]:
    """The steps of :data:`SHARE_STEPS` whose inputs are identical on both sides: HEAD may copy BASE's rows.

    Call on the side's catalogue as built (before :func:`freeze` or :func:`share_focused` replace views by
    tables, whose own reads would then be hidden).  A step is the same when no base table it reads is in
    ``changed`` (``depends.value_changed``: the tables whose values differ).  A price edit (hardware_prices,
    field_provenance) leaves the admission rows and capacity the same, and moves the speed fits and roofline
    (both read hardware_peaks, which carries the price costs read); a model, accelerator or engine edit moves
    every step.  Exact: a step's rows are a function of the tables it reads, which hold the same values on both
    sides, and both sides are cut the same way (the cut's reads are every later step's inputs).
    ``reads``: :func:`step_reads` of the side, when already computed.
    """
    steps = {step for step, _ in SHARE_STEPS}
    return {step for step, read in (reads or step_reads(con, alias)).items() if step in steps and not read & changed}


def focus_cached(keys, order: list[tuple[str, list[str]]], views: list[str]) -> bool:
    """Whether both sides' focused rows of every view in ``views`` are in the step cache (``focus <view>``).

    Then the comparisons read them back and :func:`share_focused` (whose tables only they read) need not run;
    a stored file that turns out unreadable makes its comparison compute the focus from the side's views (the
    same rows: ``focus.SHARED``), only slower.
    """
    if keys is None or not views:
        return False
    touched_ids = json.dumps(order)
    return all(keys.cache.has(keys.key(alias, "focus " + view, touched_ids))
               for alias in (BASE, HEAD) for view in views if view in FOCUS)


def share_focused(con, alias: str, order: list[tuple[str, list[str]]], like: str | None = None,
                  same: frozenset[str] | set[str] = frozenset(), keys=None) -> list[str]:
    """Compute side ``alias``'s shared views (``focus.SHARED``) once, on the touched focused rows only.

    Each such view becomes a table of the rows the focused comparison keeps of it (touched entries,
    within the native context, native weights dtypes), so the views read on top of it (roofline on
    capacity) compute only those scenarios; their focused rows are unchanged (see ``focus.SHARED``).
    The engine admission rows both ``capacity`` and ``engine_capacity`` read are computed first, once
    (:func:`share_engine_capacity`).
    Cross-entry views are frozen first (they fit over the whole grid).  Call after the report
    recommendation check (it ranks every option) and never with ``--all-scenarios``.
    ``like``, ``same``: the side already shared (BASE) and the steps whose inputs are identical on both sides
    (:func:`shared_steps`); those steps' tables are copied from ``like`` instead of computed a second time.
    ``keys``: the step cache's keys (:class:`kvreg.diff.stepcache.StepKeys`): a step computed before with the same
    key (code, touched entries, the values of every base table it reads) is read back instead, and a step computed
    here is stored.

    Returns:
        The views replaced (``["engine_capacity", "capacity", "roofline"]`` on a full registry).
    """
    terms, params = [], []
    for kind, ids in order:
        if ids:
            terms.append(f"list_contains(?, v.{_q(ENTITY_COLUMNS[kind])})")
            params.append(ids)
    if not terms:
        return []
    same = set(same) if like is not None else set()
    freeze(con, alias, like, same, keys)
    native_weights_table(con, alias)  # the templates' semi join reads it
    native_model_weights(con, alias)
    touched_ids = json.dumps(order)
    copy = like if "__engine_capacity_rows" in same and _has_table(con, like, "__engine_capacity_rows") else None
    done = share_engine_capacity(con, alias, " OR ".join(terms), params, order, copy_from=copy, keys=keys)
    batches = batches_literal(con, alias)
    for view, sql in SHARED.items():
        if _is_view(con, alias, view):
            if view in same and _has_table(con, like, view) and not _is_view(con, like, view):
                _view_to_table(con, alias, view, f"SELECT * FROM {_q(like)}.{_q(view)}")
            elif not _cached_step(con, keys, alias, view, view, touched_ids):
                _view_to_table(con, alias, view, sql.format(db=_q(alias), entity=" OR ".join(terms),
                                                            batches=batches), params)
                _store_step(con, keys, alias, view, view, touched_ids)
            done.append(view)
    return done


def native_model_weights(con, alias: str) -> bool:
    """Cut side ``alias``'s weights precisions to the native ones before any pool or admission is computed.

    Every pool (``memory_pools_at``, ``engine_memory_pools_at`` 205: the served target's weights) enumerates its
    weights dtypes from ``model_weights``, so the admission arithmetic ran for all 5–8 precisions of each model
    and the focus then kept the native ones (``__focus_weights``): for one accelerator 1.7 M admission rows to
    keep 132,100.  ``model_weights`` becomes a table of its rows (model, dtype) that some accelerator of the side
    runs natively for the model or for a served set it is the target of, plus every row of a draft or resident
    model (a draft's weights are read at its own dtype, a resident's at its stated one).  ``__focus_weights``
    names every accelerator's native dtypes (``hardware_precisions`` is not cut), so only the side's
    accelerators count.  Exact for the focused rows: each reads only its own (model, dtype) row, its draft's and
    the residents' (tests/test_diff_cut.py).
    Call after the report recommendation check, with ``__focus_weights`` built.  Returns True when it cut; a side
    where every dtype is native on some accelerator (an engine or model edit on the shipped registry) keeps the
    view, and its query plans, as they were.
    """
    if not _is_view(con, alias, "model_weights"):
        return False
    db = _q(alias)
    con.execute(f"CREATE OR REPLACE TEMP TABLE __native_weights AS "
                f"WITH f AS (SELECT f.* FROM {db}.__focus_weights f SEMI JOIN {db}.hardware h "
                f"ON h.hardware_id = f.hardware_id), "
                # (model, dtype) kept; a NULL dtype keeps every dtype of the model
                f"k AS (SELECT model_id, weights_dtype FROM f "
                f"UNION SELECT s.model_id, f.weights_dtype FROM f JOIN {db}.served_models s "
                f"ON s.served_id = f.model_id AND s.role = 'target' "
                f"UNION SELECT s.model_id, NULL FROM {db}.served_models s WHERE s.role <> 'target' "
                f"UNION SELECT r.model_id, NULL FROM {db}.residents r WHERE r.model_id IS NOT NULL) "
                f"SELECT w.* FROM {db}.model_weights w SEMI JOIN k ON k.model_id = w.model_id "
                f"AND (k.weights_dtype IS NULL OR k.weights_dtype = w.weights_dtype)")
    kept, total = con.execute(f"SELECT (SELECT count(*) FROM __native_weights), "
                              f"(SELECT count(*) FROM {db}.model_weights)").fetchone()
    if kept < total:  # an edit whose accelerators run every dtype natively (an engine, a model) keeps the view
        _view_to_table(con, alias, "model_weights", "SELECT * FROM __native_weights")
    con.execute("DROP TABLE __native_weights")
    return kept < total


# The engine admission macro's parameters (kvreg/sql/220_engine_capacity.sql), all but context_list: the shared
# macro below answers only the call with every one of them NULL (the release defaults), as `capacity` makes it.
_ENGINE_KNOBS = ("max_num_batched_tokens", "gpu_memory_utilization", "max_num_seqs", "enforce_eager",
                 "num_speculative_tokens", "available_kv_bytes", "batched_axis", "block_size")


def share_engine_capacity(con, alias: str, entity: str, params: list,
                          order: list[tuple[str, list[str]]] | None = None, copy_from: str | None = None,
                          keys=None) -> list[str]:
    """Compute side ``alias``'s engine admission arithmetic once for the touched focused scenarios.

    ``capacity`` (through ``capacity_at``) and ``engine_capacity`` both run ``engine_capacity_at`` — the
    engine's block and admission arithmetic (kvreg/sql/220_engine_capacity.sql) — over one accelerator's (or
    model's, or release's) whole grid: a second pass for the ``engine_capacity`` comparison was ~7 s CPU of a
    hardware edit's 12 (benchmarks/README.md).  Here its rows are computed once, at the release defaults, over
    the contexts and max_model_lens axes together, for the touched entries (``entity``, a predicate on
    ``v``'s id columns with ``params``), the native weights dtypes (``__focus_weights``) and max_model_lens
    within the model's native context (or any, for an id with none: the engine_capacity focus's test; capacity's
    ``within_native`` is stricter), into table ``__engine_capacity_rows``.  When one kind of entry is touched
    (``order``: ``(kind, ids)`` pairs), its ids go to the macro's filter (220: ``only_models``, ``only_hardware``,
    ``only_engines``), and the max_model_lens above every served id's native context (of the touched models, for a
    model edit) are not computed.  One call: one per group of models sharing a native context (a UNION ALL, or
    one statement each) cost more than the rows it saved, ~0.35 s CPU a call against ~0.04 s a context for one
    accelerator (benchmarks/README.md, fifth session).  Then in this side

    * ``engine_capacity_at`` is replaced by a macro over that table, for the default-knob call only (any other
      call raises an error rather than answering from the wrong rows);
    * the ``engine_capacity`` view is replaced by the table's rows on its axes (``max_model_lens``, and
      ``batched_tokens``: the view's rows at the release's default setting — the only ones its focus reads —
      are the default call's, as both compute ``engine_memory_pools_at`` at that value, 205: ``batched_set``).

    Exact for the focused rows: every row either focus keeps has a touched id and a native weights dtype, and
    a row of ``engine_capacity_at`` at one max_model_len does not depend on the list's other values (its
    first-principles sums are per context, 220: ``fp``).  Call after the report recommendation check, which
    reads other rows, and never with ``--all-scenarios``.  ``copy_from``: a side whose ``__engine_capacity_rows``
    were computed from identical inputs (:func:`shared_steps`): its rows are copied, not computed.  ``keys``: the
    step cache's keys (:func:`share_focused`): rows computed before under the same key are read back.
    Returns ``["engine_capacity"]``, or ``[]`` when the side has no such view or macro.
    """
    db = _q(alias)
    if not entity or not _is_view(con, alias, "engine_capacity") or not con.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE database_name = ? AND function_name = 'engine_capacity_at'",
            [alias]).fetchone()[0]:
        return []
    lens = sorted({r[0] for r in con.execute(f"SELECT context_tokens FROM {db}.contexts UNION "
                                             f"SELECT max_model_len FROM {db}.max_model_lens").fetchall()})
    # one kind touched: its ids filter the macro (several kinds: the entity predicate is an OR of them)
    touched = {k: sorted(ids) for k, ids in (order or []) if ids}
    one = touched if len(touched) == 1 else {}
    only = {"model": "only_models", "hardware": "only_hardware", "engine": "only_engines"}
    # no len above the longest native context of the served ids computed (NULL: none stated, every len)
    longest = con.execute(f"SELECT CASE WHEN bool_or(m.native_context_tokens IS NULL) THEN NULL "
                          f"ELSE max(m.native_context_tokens) END FROM {db}.served_models s "
                          f"LEFT JOIN {db}.models m ON m.model_id = s.served_id "
                          f"WHERE ? IS NULL OR list_contains(?, s.served_id)",
                          [one.get("model")] * 2).fetchone()[0]
    lens = [n for n in lens if longest is None or n <= longest] or lens[:1]
    filters = "".join(f", {only[k]} := ?::VARCHAR[]" for k in one)
    con.execute(f'USE {db}')
    try:
        if copy_from is not None:
            con.execute(f"CREATE OR REPLACE TABLE {db}.__engine_capacity_rows AS "
                        f"SELECT * FROM {_q(copy_from)}.__engine_capacity_rows")
        elif _cached_step(con, keys, alias, "__engine_capacity_rows", "__engine_capacity_rows", json.dumps(order)):
            pass
        else:
            con.execute(f"CREATE OR REPLACE TABLE {db}.__engine_capacity_rows AS SELECT v.* FROM "
                        f"engine_capacity_at(?::BIGINT[]{filters}) v LEFT JOIN {db}.models m ON m.model_id = v.model_id "
                        f"SEMI JOIN {db}.__focus_weights w ON w.hardware_id = v.hardware_id "
                        f"AND w.model_id = v.model_id AND w.weights_dtype = v.weights_dtype "
                        f"WHERE ({entity}) AND v.max_model_len <= coalesce(m.native_context_tokens, v.max_model_len)",
                        [lens] + list(one.values()) + params)
            _store_step(con, keys, alias, "__engine_capacity_rows", "__engine_capacity_rows", json.dumps(order))
        knobs = ", ".join(f"{k} := NULL" for k in _ENGINE_KNOBS)
        defaults = " AND ".join(f"{k} IS NULL" for k in _ENGINE_KNOBS)
        # the id filters (220: only_models, only_hardware, only_engines; capacity_at passes its lists) filter the rows
        con.execute(f"CREATE OR REPLACE MACRO engine_capacity_at(context_list, {knobs}, only_models := NULL, "
                    f"only_hardware := NULL, only_engines := NULL) AS TABLE "
                    f"SELECT t.* FROM {db}.__engine_capacity_rows t WHERE list_contains(context_list, t.max_model_len) "
                    f"AND (only_models IS NULL OR list_contains(only_models, t.model_id)) "
                    f"AND (only_hardware IS NULL OR list_contains(only_hardware, t.hardware_id)) "
                    f"AND (only_engines IS NULL OR list_contains(only_engines, t.engine_id)) "
                    f"AND (CASE WHEN {defaults} THEN TRUE ELSE error('kvreg diff: engine_capacity_at is shared for "
                    f"the release defaults only (kvreg/diff/scenarios.py share_engine_capacity)') END)")
    finally:
        con.execute("USE memory")
    _view_to_table(con, alias, "engine_capacity",
                   f"SELECT * FROM {db}.__engine_capacity_rows WHERE max_model_len IN "
                   f"(SELECT max_model_len FROM {db}.max_model_lens) AND max_num_batched_tokens IN "
                   f"(SELECT max_num_batched_tokens FROM {db}.batched_tokens)")
    return ["engine_capacity"]


def attach(con, alias: str, registry) -> None:
    """Load ``registry``'s tables and views into a new in-memory database ``alias`` on ``con``."""
    from kvreg.build import populate

    con.execute(f'ATTACH \':memory:\' AS "{alias}"')
    con.execute(f'USE "{alias}"')
    try:
        populate(con, registry)
    finally:
        con.execute("USE memory")


def attach_cached(con, alias: str, registry, cache=None) -> None:
    """:func:`attach`, or the same database read back from the step cache (``cache``,
    :class:`kvreg.diff.stepcache.StepCache`) when a side with these very tables was built before.

    Keyed by every base table's frame, location columns included, and the code (``stepcache.side_key``): the
    copy (``COPY FROM DATABASE`` from the stored file, ~0.05 s CPU) holds the same tables, views and macros as
    :func:`attach` builds (~1.7 s CPU on the shipped registry); ``build_info`` (the checkout's commit, no input of
    any view) is written again.
    """
    from kvreg.build import registry_commit
    from kvreg.diff.stepcache import side_key

    key = side_key(registry) if cache is not None and cache.folder is not None else None
    if key is not None and cache.load_database(con, key, alias, "side database"):
        con.execute(f"CREATE OR REPLACE TABLE {_q(alias)}.build_info AS SELECT ? AS registry_commit",
                    [registry_commit(registry.root)])
        return
    attach(con, alias, registry)
    if key is not None:
        cache.store_database(con, key, alias, "side database")


def attach_like(con, alias: str, registry, like: str, like_registry) -> list[str]:
    """Load ``registry`` as side ``alias`` by copying side ``like`` (``like_registry``'s) and replacing the base
    tables that differ; returns the tables replaced.

    The views and macros are the running kvreg's on both sides, so a copy (``COPY FROM DATABASE``, ~25 ms) holds
    them already bound to its own tables; only a base table whose frame (kvreg/tables.py, built once during
    validation) differs from ``like``'s is rebuilt from ``registry``'s frame, as :func:`attach` builds it, and
    ``build_info`` is always rebuilt.  A one-entry edit replaces a handful of tables instead of building ~100
    views a second time (~0.9 s CPU of a diff).  tests/test_diff_cut.py checks every table equals
    :func:`attach`'s.
    """
    from kvreg.build import registry_commit
    from kvreg.tables import frames

    mine, theirs = frames(registry), frames(like_registry)
    copy_side(con, like, alias, frozen=False)
    db = _q(alias)
    replaced = []
    for name, df in mine.items():
        other = theirs.get(name)
        if other is not None and list(other.columns) == list(df.columns) and other.dtypes.equals(df.dtypes) \
                and other.equals(df):
            continue
        con.register("_frame", df)
        try:
            con.execute(f"DROP TABLE IF EXISTS {db}.{_q(name)}")
            con.execute(f"CREATE TABLE {db}.{_q(name)} AS SELECT * FROM _frame")
        finally:
            con.unregister("_frame")
        replaced.append(name)
    for name in sorted(set(theirs) - set(mine)):  # a base table only ``like``'s registry has
        con.execute(f"DROP TABLE IF EXISTS {db}.{_q(name)}")
        replaced.append(name)
    con.execute(f"CREATE OR REPLACE TABLE {db}.build_info AS SELECT ? AS registry_commit",
                [registry_commit(registry.root)])
    return replaced


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(con, alias: str, view: str) -> dict[str, str]:
    rows = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ? "
                       "AND table_name = ? ORDER BY column_index", [alias, view]).fetchall()
    return dict(rows)


def _has_table(con, alias: str, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND table_name = ?",
                            [alias, table]).fetchone()[0])


def touched(con, groups: list[tuple[str, set[str]]]) -> list[tuple[str, list[str]]]:
    """Entries whose scenarios may move, in attribution order.

    Args:
        groups: ``[(kind, ids)]`` of edited entries in priority order (the diff
            puts added and removed entries first, so a new accelerator's rows are
            its own even when they also touch a changed model).
    Returns:
        ``[(kind, sorted ids)]`` for kinds with an entity column: the edited
        groups, then entries depending on them (:data:`DEPENDENCIES`).
    """
    order = [(k, sorted(ids)) for k, ids in groups if k in ENTITY_COLUMNS and ids]
    edited: dict[str, set[str]] = {}
    for k, ids in groups:
        edited.setdefault(k, set()).update(ids)
    for table, id_col, ref_col, ref_kind, kind in DEPENDENCIES:
        refs = sorted(edited.get(ref_kind, ()))
        if not refs:
            continue
        deps: set[str] = set()
        for alias in (BASE, HEAD):
            if _has_table(con, alias, table):
                deps |= {r[0] for r in con.execute(
                    f"SELECT DISTINCT {_q(id_col)} FROM {alias}.{_q(table)} WHERE list_contains(?, {_q(ref_col)})",
                    [refs]).fetchall()}
        deps -= edited.get(kind, set())
        if deps:
            order.append((kind, sorted(deps)))
    return order


def _filter(keys: list[str], order: list[tuple[str, list[str]]], all_scenarios: bool) -> tuple[str, list]:
    if all_scenarios:
        return "TRUE", []
    terms, params = [], []
    for kind, ids in order:
        col = ENTITY_COLUMNS[kind]
        if col in keys:
            terms.append(f"list_contains(?, {_q(col)})")
            params.append(ids)
    return (" OR ".join(terms) or "FALSE"), params


def _attribution(keys: list[str], order: list[tuple[str, list[str]]]) -> tuple[str, str, list]:
    kind_cases, id_cases, params = [], [], []
    for kind, ids in order:
        col = ENTITY_COLUMNS[kind]
        if col in keys:
            kind_cases.append(f"WHEN list_contains(?, {_q(col)}) THEN '{kind}'")
            id_cases.append(f"WHEN list_contains(?, {_q(col)}) THEN {_q(col)}::VARCHAR")
            params.append(ids)
    kind_sql = "CASE " + " ".join(kind_cases) + " ELSE 'other' END" if kind_cases else "'other'"
    id_sql = "CASE " + " ".join(id_cases) + " ELSE '' END" if id_cases else "''"
    return kind_sql, id_sql, params + params  # the id CASE repeats the kind CASE's tests


def _integral(dtype: str) -> bool:
    return dtype.upper() in ("BIGINT", "INTEGER", "HUGEINT", "SMALLINT", "TINYINT", "UBIGINT", "UINTEGER")


def _value(v, integral: bool):
    if v is None:
        return None
    return int(v) if integral and float(v).is_integer() else v


def compare_view(con, spec: ViewSpec, order: list[tuple[str, list[str]]], *, threshold_pct: float = 0.0,
                 all_scenarios: bool = False, figure_rows: int | None = None,
                 sides: dict[str, tuple[str, str]] | None = None, step_keys=None):
    """Compare one view between ``kv_base`` and ``kv_head`` on ``con``.

    Args:
        figure_rows: fetch at most this many figure changes per entry (its largest, in the order
            below); None fetches every one.  The counts (summaries, hidden) always cover every change:
            they are aggregated in SQL, so a bounded fetch only saves turning rows into records.
        sides: per-kind cut copies of the two sides (:func:`cut_by_kind`), read by the focused SELECTs.
        step_keys: the step cache's keys: each side's focused rows are read back when computed before.

    Returns:
        (what was compared, figure changes at or above ``threshold_pct`` (%) sorted
        by entry then largest |%| first, scenario rows only on one side, the number
        of figure changes hidden by the threshold, one summary per entry × figure).
    """
    base_cols, head_cols = _columns(con, BASE, spec.view), _columns(con, HEAD, spec.view)
    if not base_cols or not head_cols:
        return ViewComparison(spec.view, (), (), 0, 0, skipped="view not present"), [], [], 0, []
    focus = None if all_scenarios else FOCUS.get(spec.view)
    if focus is not None:
        keys, figures = list(focus.keys), list(focus.figures)
        if not all(c in base_cols and c in head_cols for c in keys if c != "at"):
            return (ViewComparison(spec.view, tuple(keys), tuple(figures), 0, 0, skipped="key columns missing"),
                    [], [], 0, [])
        _materialize_focus(con, focus, order, sides, step_keys)
    else:
        keys = [k for k in KEY_COLUMNS if k in base_cols and k in head_cols]
        figures = [f for f in spec.all_figures if f in base_cols and f in head_cols]
        if not keys or not figures:
            return (ViewComparison(spec.view, tuple(keys), tuple(figures), 0, 0, skipped="no key or figure columns"),
                    [], [], 0, [])
        where, where_params = _filter(keys, order, all_scenarios)
        cols = ", ".join(_q(c) for c in keys + figures)
        # The two sides, limited to the touched scenarios, as temp tables of this connection.
        for alias, name in ((BASE, "_diff_base"), (HEAD, "_diff_head")):
            con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {cols}, 1 AS __fit, "
                        f"NULL::VARCHAR AS __left_out FROM {alias}.{_q(spec.view)} WHERE {where}", where_params)
    key_list = ", ".join(_q(k) for k in keys)
    counts = [con.execute(f"SELECT count(*) FROM {n}").fetchone()[0] for n in ("_diff_base", "_diff_head")]
    dupes = sum(con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {n} GROUP BY {key_list} HAVING count(*) > 1)")
                .fetchone()[0] for n in ("_diff_base", "_diff_head"))
    if dupes:
        return (ViewComparison(spec.view, tuple(keys), tuple(figures), *counts,
                               skipped=f"key ({', '.join(keys)}) is not unique: add the view's axes to KEY_COLUMNS"),
                [], [], 0, [])
    kind_sql, id_sql, attr_params = _attribution(keys, order)
    on = " AND ".join(f"b.{_q(k)} IS NOT DISTINCT FROM h.{_q(k)}" for k in keys)
    joined = (
        f"WITH j AS (SELECT {', '.join(f'coalesce(b.{_q(k)}, h.{_q(k)}) AS {_q(k)}' for k in keys)}, "
        f"b.__present IS NOT NULL AS in_base, h.__present IS NOT NULL AS in_head, "
        f"coalesce(b.__fit > 0, FALSE) AS fit_base, coalesce(h.__fit > 0, FALSE) AS fit_head, "
        f"coalesce(b.__left_out, h.__left_out) AS left_out, "
        + ", ".join(f"b.{_q(f)} AS {_q('old_' + f)}, h.{_q(f)} AS {_q('new_' + f)}" for f in figures)
        + f" FROM (SELECT *, TRUE AS __present FROM _diff_base) b FULL OUTER JOIN "
          f"(SELECT *, TRUE AS __present FROM _diff_head) h ON {on}), "
        f"a AS (SELECT *, {kind_sql} AS entry_kind, {id_sql} AS entry_id FROM j)"
    )
    moved = " UNION ALL ".join(
        f"SELECT entry_kind, entry_id, {key_list}, left_out, '{f}' AS figure, {_q('old_' + f)}::DOUBLE AS old, "
        f"{_q('new_' + f)}::DOUBLE AS new FROM a WHERE in_base AND in_head AND (fit_base OR fit_head)"
        for f in figures)   # a scenario whose weights fit on neither side is not compared (docs/diff.md)
    scored = (
        f"{joined}, m AS (SELECT *, CASE WHEN old <> 0 THEN (new - old) / abs(old) * 100 END AS pct FROM ({moved}) "
        f"WHERE old IS DISTINCT FROM new "
        f"AND NOT coalesce(abs(new - old) <= 1e-9 * greatest(abs(old), abs(new)), FALSE)), "
        # Sequence counts rank by how many sequences moved, above every other figure; others by |%|.
        f"q AS (SELECT *, figure = 'batch' OR figure LIKE '%\\_seqs' ESCAPE '\\' AS is_seqs FROM m), "
        f"s AS (SELECT *, CASE WHEN is_seqs "
        f"THEN {SEQ_RANK} + abs(new - old) ELSE least(coalesce(abs(pct), {SEQ_RANK} - 1), {SEQ_RANK} - 1) END AS size, "
        # Each moved figure in exactly one class, so the summary's counts add up to its scenarios (render.py
        # names them): to NULL or a sequence count to 0 is "no longer fits", the reverse "now fits".
        f"CASE WHEN new IS NULL OR (is_seqs AND new = 0) THEN 'gone' WHEN old IS NULL OR (is_seqs AND old = 0) "
        f"THEN 'new' WHEN new > old THEN 'up' ELSE 'down' END AS cls, "
        # a row the focus leaves out (focus.LEFT_OUT: draft heads, TP sizes the planner refuses) is counted apart
        f"left_out IS NULL AND (pct IS NULL OR abs(pct) >= ?) AS shown FROM q) "
    )
    # The moved figures are scored once into a temp table: the summaries, the hidden count and the
    # (bounded) rows fetched below all read it, instead of each re-running the join.
    con.execute(f"CREATE OR REPLACE TEMP TABLE _diff_moved AS {scored}SELECT * FROM s",
                attr_params + [threshold_pct])
    summaries = [FigureSummary(spec.view, *row) for row in con.execute(
        "SELECT entry_kind, entry_id, figure, count(*), count(*) FILTER (WHERE cls = 'up'), "
        "count(*) FILTER (WHERE cls = 'down'), min(pct) FILTER (WHERE cls IN ('up', 'down')), "
        "max(pct) FILTER (WHERE cls IN ('up', 'down')), count(*) FILTER (WHERE cls = 'gone'), "
        "count(*) FILTER (WHERE cls = 'new') FROM _diff_moved WHERE shown "
        "GROUP BY entry_kind, entry_id, figure ORDER BY entry_kind, entry_id, figure").fetchall()]
    hidden = con.execute("SELECT count(*) FROM _diff_moved WHERE NOT shown AND left_out IS NULL").fetchone()[0]
    left_out = dict(con.execute("SELECT left_out, count(*) FROM _diff_moved WHERE left_out IS NOT NULL "
                                "GROUP BY left_out").fetchall())
    # Entries ordered by their largest shown change, then each entry's changes largest first; a bounded
    # fetch keeps each entry's first `figure_rows` of that same order (row_number over the same sort).
    within = f"size DESC, abs(new - old) DESC, {key_list}, figure"
    bound = "" if figure_rows is None else f"QUALIFY row_number() OVER (PARTITION BY entry_kind, entry_id ORDER BY {within}) <= {int(figure_rows)} "
    changes_sql = (
        f"SELECT entry_kind, entry_id, {key_list}, figure, old, new, pct, "
        f"max(size) OVER (PARTITION BY entry_kind, entry_id) AS group_size "
        f"FROM _diff_moved WHERE shown {bound}"
        f"ORDER BY group_size DESC, entry_kind, entry_id, {within}"
    )
    integral = {f: _integral(head_cols[f]) for f in figures}
    changes = []
    n_keys = len(keys)
    for row in con.execute(changes_sql).fetchall():
        figure, old, new, pct = row[2 + n_keys:6 + n_keys]
        changes.append(FigureChange(spec.view, row[0], row[1], dict(zip(keys, row[2:2 + n_keys])), figure,
                                    _value(old, integral[figure]), _value(new, integral[figure]), pct))
    con.execute("DROP TABLE IF EXISTS _diff_moved")
    sets_sql = (
        f"{joined}, o AS (SELECT *, CASE WHEN in_head THEN 'added' ELSE 'removed' END AS status FROM a "
        f"WHERE NOT (in_base AND in_head) AND (fit_base OR fit_head) AND left_out IS NULL), "
        f"r AS (SELECT *, row_number() OVER (PARTITION BY entry_kind, entry_id, status ORDER BY {key_list}) AS n, "
        f"count(*) OVER (PARTITION BY entry_kind, entry_id, status) AS total FROM o) "
        f"SELECT entry_kind, entry_id, status, total, {key_list}, "
        + ", ".join(f"CASE WHEN in_head THEN {_q('new_' + f)} ELSE {_q('old_' + f)} END" for f in figures)
        + f" FROM r WHERE n <= {SAMPLE_ROWS} ORDER BY entry_kind, entry_id, status, n"
    )
    groups: dict[tuple, list] = {}
    for row in con.execute(sets_sql, attr_params).fetchall():
        kind, eid, status, total = row[:4]
        values = dict(zip(keys + figures, row[4:]))
        for f in figures:
            values[f] = _value(values[f], integral[f])
        groups.setdefault((kind, eid, status, total), []).append(values)
    sets = [ScenarioSetChange(spec.view, k, e, s, t, tuple(rows)) for (k, e, s, t), rows in groups.items()]
    # scenarios on one side only that the focus leaves out are counted with the moved figures it leaves out
    for why, n in con.execute(f"{joined} SELECT left_out, count(*) FROM a WHERE NOT (in_base AND in_head) "
                              f"AND (fit_base OR fit_head) AND left_out IS NOT NULL GROUP BY left_out",
                              attr_params).fetchall():
        left_out[why] = left_out.get(why, 0) + n
    con.execute("DROP TABLE IF EXISTS _diff_base")
    con.execute("DROP TABLE IF EXISTS _diff_head")
    return (ViewComparison(spec.view, tuple(keys), tuple(figures), *counts, left_out=left_out), changes, sets, hidden,
            summaries)
