"""What changed since the previous report: the registry diff (``kvreg diff``) grouped for a buyer.

A report definition may name ``previous:`` (a git revision of the project, a previous report's registry
stamp — the commit printed in its footer, ``-dirty`` dropped — or a directory holding the previous
project).  The report then opens with what moved the decision.  Nothing is compared here: the entries
and the recommendation flips come from :func:`kvreg.diff.diff_projects` (entry changes key by key,
``kvreg/diff/entries.py``; each side's own report ranking, ``kvreg/diff/recommend.py``), run without
the scenario-figure comparison the report does not show; this module only sorts its records into
the section's groups and names, for each recommendation that flipped, the changed entries it rests on.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from kvreg.problems import KvregError, Problem


@dataclasses.dataclass(frozen=True)
class Flip:
    """One model whose recommended option differs from the previous report's.

    ``old``/``new`` are (hardware_id, engine_id, weights_dtype, kv_dtype, tp, devices) or None (no
    option served the workload on that side); ``reasons`` the changed or added entries the two
    recommendations rest on (their hardware, engine and the model), each an :class:`EntryNote`.
    """

    model: str
    old: tuple | None
    new: tuple | None
    reasons: list


@dataclasses.dataclass(frozen=True)
class EntryNote:
    """An entry change as the section prints it: kind, id, status, where, and its changed keys."""

    kind: str
    id: str
    status: str  # added | removed | changed
    file: str
    line: int
    fields: tuple  # kvreg.diff.model.FieldChange rows (path, old, new, file, line)


@dataclasses.dataclass(frozen=True)
class Changes:
    """The "What changed since" section's content (template ``_changes.html.j2``).

    Attributes:
        previous: the revision or stamp as the report definition names it.
        base_label: the resolved side (``REV (sha)`` or the directory).
        flips: recommendations that changed, report model order.
        new_entries: hardware and engine entries the report lists that the previous registry lacks.
        price_changes: listed hardware whose ``price`` keys changed (only those keys).
        corrections: every other change to a listed model, hardware or engine entry (key by key).
        unlisted_new: hardware and engine ids added to the registry that the report does not list.
    """

    previous: str
    base_label: str
    flips: list[Flip]
    new_entries: list[EntryNote]
    price_changes: list[EntryNote]
    corrections: list[EntryNote]
    unlisted_new: list[tuple[str, str]]


def _note(e, fields=None) -> EntryNote:
    return EntryNote(e.kind, e.id, e.status, e.file, e.line, tuple(e.fields if fields is None else fields))


def _is_price(field) -> bool:
    return field.path == "price" or field.path.startswith("price.")


def _side(project: Path, previous: str) -> str:
    """The diff's BASE argument: a directory relative to the project, else the revision (a stamp's ``-dirty`` dropped)."""
    as_dir = project / previous
    if as_dir.is_dir():
        return str(as_dir)
    return previous.removesuffix("-dirty")


def changes_since(project: Path, report, report_id: str, *, file: str = "", line: int = 0) -> Changes:
    """What moved the decision between ``report.previous`` and the project as it is now.

    Args:
        project: the kvreg project directory (HEAD = its files as they are).
        report: the report entry (its ``previous``, ``models``, ``hardware``, ``engines``).
        report_id: the report's id, the only report whose recommendation flips are checked.
        file, line: where ``previous:`` is written, for the error.

    Returns:
        :class:`Changes`.

    Raises:
        KvregError: ``previous`` names neither a revision of the project's git repository nor a directory
            (code ``bad-previous``), or the previous registry does not validate.
    """
    from kvreg.diff import RevisionError, diff_projects

    try:
        result = diff_projects(_side(project, report.previous), None, project, compare_figures=False, reports=[report_id])
    except RevisionError as exc:
        raise KvregError([Problem(file, line, 0, "previous", "bad-previous", str(exc),
                                  "name a git revision of the project (a tag, a branch, a commit or a previous "
                                  "report's registry stamp) or a directory holding the previous project")]) from None
    listed = {"model": set(report.models), "hardware": set(report.hardware), "engine": set(report.engines)}
    new_entries, prices, corrections, unlisted = [], [], [], []
    for e in result.entries:
        if e.kind not in listed:
            continue
        if e.id not in listed[e.kind]:
            if e.status == "added" and e.kind in ("hardware", "engine"):
                unlisted.append((e.kind, e.id))
            continue
        if e.status == "added":
            new_entries.append(_note(e))
            continue
        price = [f for f in e.fields if _is_price(f)]
        other = [f for f in e.fields if not _is_price(f)]
        if price:
            prices.append(_note(e, price))
        if other or e.status == "removed":
            corrections.append(_note(e, other))
    flips = []
    for f in result.recommendations:
        if f.report != report_id:
            continue
        keys = [("model", f.model)]
        for side in (f.old, f.new):
            if side is not None:
                keys += [("hardware", side[0]), ("engine", side[1])]
        reasons = [n for k in dict.fromkeys(keys) for n in (*prices, *new_entries, *corrections)
                   if (n.kind, n.id) == k]
        flips.append(Flip(f.model, f.old, f.new, reasons))
    order = {m: i for i, m in enumerate(report.models)}
    flips.sort(key=lambda x: order.get(x.model, len(order)))
    return Changes(report.previous, result.base_label, flips, new_entries, prices, corrections, sorted(unlisted))


def value_text(v: Any) -> str:
    """A YAML value as the section prints it (None: not set)."""
    return "not set" if v is None else str(v)
