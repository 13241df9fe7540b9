"""``kvreg diff``: what a registry change moves, for pull-request review.

:func:`diff_projects` loads BASE and HEAD (directories or git revisions),
lists the entries added, removed and changed key by key (``entries``), then
compares the scenario figures of the views reports use, joined in SQL across
the two databases (``scenarios``), checks report references (``references``)
and whether a report recommendation flips (``recommend``).
``render`` turns the result into text, Markdown or JSON.
"""

from __future__ import annotations

from pathlib import Path

from kvreg.diff.model import DiffResult
from kvreg.diff.revisions import RevisionError, fills_geometry, materialize
from kvreg.problems import KvregError

__all__ = ["DiffResult", "RevisionError", "diff_projects"]


def _load(root: Path, label: str, cache=None, fill_geometry: bool = True):
    from kvreg.registry import load_registry

    try:
        return load_registry(root, cache, fill_geometry)
    except KvregError as exc:
        exc.side = label  # the CLI says which side is invalid
        raise
    finally:
        if cache is not None:
            cache.save()  # what validated is kept even when the other side (or a cross-entry check) fails


def diff_projects(base: str, head: str | None = None, project: Path | str = ".", *, threshold_pct: float = 0.0,
                  all_scenarios: bool = False, progress=None, compare_figures: bool = True,
                  reports: list[str] | None = None, figure_rows: int | None = None) -> DiffResult:
    """Diff the registry of ``project`` between two revisions or directories.

    Args:
        base: a directory or a git revision of the repository holding ``project``.
        head: the same, or None for ``project``'s working tree.
        project: the kvreg project directory (may be a subfolder of the repository).
        threshold_pct: hide figure changes smaller than this many percent (changes
            from 0 are never hidden).
        all_scenarios: compare every scenario row, not only those touching changed entries.
        progress: optional callable given a short message before each step (load, attach, each view).
        compare_figures: compare the scenario figures of the views (False: entries and recommendation flips only,
            as a report's "what changed" section needs).
        reports: check recommendation flips only for these report ids (None: every report).
        figure_rows: keep at most this many figure changes per entry and view, the largest (None: all).
            The counts stay complete (aggregated in SQL); the text and Markdown renderers need
            :func:`kvreg.diff.render.rows_needed` rows, so the CLI asks for no more than it prints.

    Returns:
        A :class:`DiffResult` (figures in the base units of their view columns).

    Raises:
        RevisionError: ``base`` or ``head`` is neither a directory nor a revision (usage error).
        KvregError: either side has registry problems, or a report in HEAD names an
            entry HEAD does not have; ``exc.side`` names the side.
    """
    import duckdb

    from kvreg.build import duckdb_config
    from kvreg.diff.entries import entry_changes
    from kvreg.diff.depends import base_tables_read, value_changed
    from kvreg.diff.model import UNMOVED, ViewComparison
    from kvreg.diff.recommend import recommendation_flips, reports_to_check
    from kvreg.diff.references import dangling_report_references
    from kvreg.diff.scenarios import (BASE, HEAD, RANK_BASE, RANK_HEAD, VIEWS, attach_cached, attach_like, compare_view,
                                       copy_side, cut_by_kind, cut_to_reports, cut_to_touched, freeze,
                                       focus_cached, share_focused, shared_steps, step_reads, touched)
    from kvreg.diff.stepcache import StepCache, StepKeys, side_digests
    from kvreg.tables import frames
    from kvreg.validate_cache import ValidateCache

    project = Path(project)
    say = progress or (lambda message: None)
    with materialize(base, project) as (base_root, base_label), materialize(head, project) as (head_root, head_label):
        # One validate cache for both sides, in the project's .kvreg/ (kvreg/validate_cache.py): the entries
        # BASE and HEAD share are validated once, and an unchanged entry not at all on the next diff.
        cache = ValidateCache.for_project(project)
        say(f"validating BASE {base_label}")
        # Each side's entries read as the code of their revision did: filled from the shipped configs or not
        # (revisions.fills_geometry: a revision from before the fill left unknown geometry out).
        base_reg = _load(base_root, f"BASE {base_label}", cache, fills_geometry(base, project))
        say(f"validating HEAD {head_label}")
        head_reg = _load(head_root, f"HEAD {head_label}", cache, fills_geometry(head, project))
        entries = entry_changes(base_reg, head_reg)
        ids = {k: set(v) for k, v in head_reg.entries.items()}
        removed: dict[str, set[str]] = {}
        for e in entries:
            if e.status == "removed":
                removed.setdefault(e.kind, set()).add(e.id)
        problems = dangling_report_references(head_root, ids, removed)
        if problems:
            exc = KvregError(problems)
            exc.side = f"HEAD {head_label}"
            raise exc
        con = duckdb.connect(":memory:", config=duckdb_config())
        con.execute("SET enable_progress_bar = false")  # the diff's output is the report, not a progress bar
        try:
            say("building BASE and HEAD views in memory")
            # BASE's database read back when a side with the same tables was built before (kvreg/diff/stepcache.py)
            step_cache = None if all_scenarios else StepCache.for_project(project)
            attach_cached(con, BASE, base_reg, step_cache)
            replaced = attach_like(con, HEAD, head_reg, BASE, base_reg)  # BASE's views copied, differing tables rebuilt
            # A view none of whose base tables differ has the same rows on both sides (kvreg/diff/depends.py):
            # its comparison is skipped (a price or source edit cannot move capacity or the admission rows).
            changed = value_changed(frames(head_reg), frames(base_reg), replaced) | {"build_info"}
            unmoved = {v for v, read in base_tables_read(con, BASE, [s.view for s in VIEWS]).items()
                       if not read & changed}
            # The per-side steps of the focused comparison whose inputs are identical on both sides (a price edit:
            # the speed fits, admission rows and capacity): HEAD copies BASE's rows (scenarios.shared_steps).
            same, keys = set(), None
            if not all_scenarios:
                base_reads, head_reads = step_reads(con, BASE), step_reads(con, HEAD)
                same = shared_steps(con, BASE, changed, base_reads) & shared_steps(con, HEAD, changed, head_reads)
                # Every per-side step keyed by the code, the touched entries and the values of the base tables it
                # reads (kvreg/diff/stepcache.py): one computed by an earlier diff is read back from the project's
                # .kvreg/diff-cache/ (BASE's, on every diff against the same base after the first).
                reads = {step: base_reads.get(step, set()) | head_reads.get(step, set())
                         for step in set(base_reads) | set(head_reads)}
                keys = StepKeys(step_cache,
                                {BASE: side_digests(base_reg), HEAD: side_digests(head_reg)}, reads)

            def freeze_sides() -> None:  # before anything cuts or copies a side (idempotent)
                freeze(con, BASE, keys=keys)
                freeze(con, HEAD, BASE, same, keys)

            groups: list[tuple[str, set[str]]] = []
            for statuses in (("added", "removed"), ("changed",)):
                by_kind: dict[str, set[str]] = {}
                for e in entries:
                    if e.status in statuses:
                        by_kind.setdefault(e.kind, set()).add(e.id)
                groups.extend(by_kind.items())
            order = touched(con, groups)
            # A focused comparison cuts both sides to the touched entries (cut_to_touched).  The report
            # recommendation check ranks each model's options across accelerators and engines: an edit of
            # models alone may cut first (the ranking of a model reads no other model), any other edit is
            # ranked on the whole sides before the cut.
            models_only = {k for k, ids in order if ids} == {"model"}
            cut = False
            if not all_scenarios and models_only:
                freeze_sides()
                cut = cut_to_touched(con, BASE, order, keys) and cut_to_touched(con, HEAD, order, keys)
            say("checking report recommendations")
            rank = reports_to_check(con, BASE, HEAD, order, reports)
            copies: list[str] = []

            def rank_copies() -> None:
                # Rank on a copy of each side cut to the checked reports' entries (cut_to_reports): the same
                # ranking, without computing the grid of the registry's other models, accelerators and releases
                # (a model edit's sides are cut to the model already, not to the reports' devices and engines).
                # The copies (copy_side: tables, views and macros, ~25 ms) go before the comparison; made only
                # when some ranking is not in the step cache.
                freeze_sides()
                for alias, copy in ((BASE, RANK_BASE), (HEAD, RANK_HEAD)):
                    copy_side(con, alias, copy)
                    cut_to_reports(con, copy, sorted(rank), order)
                    copies.append(copy)
            try:
                checked, flips = recommendation_flips(con, RANK_BASE, RANK_HEAD, order, reports=reports,
                                                      progress=say, keys=keys, keyed_as=(BASE, HEAD),
                                                      prepare=rank_copies)
            finally:
                for copy in copies:
                    con.execute(f'DETACH "{copy}"')
            compare = [spec for spec in VIEWS if spec.view not in unmoved] if compare_figures else []
            sides = None
            if compare and not all_scenarios:
                freeze_sides()
                if not cut and len({k for k, ids in order if ids}) > 1:
                    # Several kinds edited (models and accelerators): a copy of each side per kind, cut to it.
                    sides = cut_by_kind(con, order, same, say, keys)
                else:
                    if not cut and cut_to_touched(con, BASE, order, keys):
                        cut_to_touched(con, HEAD, order, keys)
                    # The focused capacity and roofline rows once per side, read by their comparisons and costs'
                    # (not needed when every comparison's focused rows of both sides are in the step cache).
                    if not focus_cached(keys, order, [spec.view for spec in compare]):
                        say("computing the focused scenarios of BASE")
                        share_focused(con, BASE, order, keys=keys)
                        say("computing the focused scenarios of HEAD" + (
                            f" (copying {', '.join(sorted(same))} from BASE)" if same else ""))
                        share_focused(con, HEAD, order, like=BASE, same=same, keys=keys)
            if keys is not None and keys.cache.hits:
                say(f"read from the step cache: {', '.join(keys.cache.hits)}")
                del keys.cache.hits[:]  # each comparison names its own read-back rows after it
            figures, sets, views, summaries, hidden = [], [], [], [], 0
            for spec in VIEWS if compare_figures else ():
                if spec.view in unmoved:
                    views.append(ViewComparison(spec.view, (), (), 0, 0, skipped=UNMOVED))
                    continue
                say(f"comparing {spec.view}")
                view, f, s, h, summary = compare_view(con, spec, order, threshold_pct=threshold_pct,
                                                      all_scenarios=all_scenarios, figure_rows=figure_rows,
                                                      sides=sides, step_keys=keys)
                if keys is not None and keys.cache.hits:
                    say(f"read from the step cache: {', '.join(keys.cache.hits)}")
                    del keys.cache.hits[:]
                views.append(view)
                figures.extend(f)
                sets.extend(s)
                summaries.extend(summary)
                hidden += h
        finally:
            con.close()
    return DiffResult(base_label, head_label, entries, figures, sets, views, threshold_pct, hidden, summaries,
                      checked, flips, figure_rows)
