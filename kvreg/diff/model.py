"""The records a registry diff is made of: field changes, entry changes, figure changes.

Plain dataclasses, so the renderers (text, Markdown, JSON) and the tests read
the same structure.  Figures are in the base units of their view column
(``*_bytes`` bytes, ``*_tokens`` tokens, ``*_per_s`` per second, ``*_seqs``
sequences).
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class FieldChange:
    """One key of one entry whose value differs.

    ``path`` is the dotted key path (``layer_groups.1.kv_heads``); ``old`` and
    ``new`` are the values as written in the YAML (None when the key is absent
    on that side); ``file``/``line`` point at HEAD for added or changed keys
    and at BASE for removed ones.
    """

    path: str
    old: Any
    new: Any
    file: str
    line: int


@dataclasses.dataclass(frozen=True)
class EntryChange:
    """An entry added, removed or changed between BASE and HEAD (``status``)."""

    kind: str
    id: str
    status: str  # "added" | "removed" | "changed"
    file: str
    line: int
    fields: tuple[FieldChange, ...] = ()


@dataclasses.dataclass(frozen=True)
class FigureChange:
    """One figure of one scenario row that moved.

    ``keys`` maps the view's key columns to their values; ``pct`` is
    (new − old) ÷ |old| × 100, None when old is 0.
    """

    view: str
    kind: str
    id: str
    keys: dict
    figure: str
    old: float | None
    new: float | None
    pct: float | None


@dataclasses.dataclass(frozen=True)
class FigureSummary:
    """How one figure moved across all scenarios of one entry (changes shown after the threshold).

    ``up``/``down`` count scenarios where it rose/fell between two values;
    ``no_longer_fit`` those where it went to NULL (or, a sequence count, to 0),
    ``now_fit`` those where it came from NULL (or 0): the four add up to
    ``count``.  ``min_pct``/``max_pct`` bound the % changes of the up and down
    scenarios only (None when there is none with a finite %), so a count going
    to 0 never reads as −100 %.
    """

    view: str
    kind: str
    id: str
    figure: str
    count: int
    up: int
    down: int
    min_pct: float | None
    max_pct: float | None
    no_longer_fit: int = 0
    now_fit: int = 0


@dataclasses.dataclass(frozen=True)
class ScenarioSetChange:
    """Scenario rows of one view that exist on only one side, for one entry.

    ``status`` is ``added`` (only in HEAD) or ``removed`` (only in BASE);
    ``count`` rows in all; ``sample`` holds the first few, each a dict of keys
    and figures.
    """

    view: str
    kind: str
    id: str
    status: str
    count: int
    sample: tuple[dict, ...]


# ViewComparison.skipped for a view none of whose base tables differ between the sides (kvreg/diff/depends.py)
UNMOVED = "reads no table that differs between BASE and HEAD"


@dataclasses.dataclass(frozen=True)
class ViewComparison:
    """What was compared in one view: key and figure columns, rows on each side, or why it was skipped.

    ``left_out``: why → how many moved figures and one-side scenario rows the focus left out of the changes
    shown (kvreg/diff/focus.py ``LEFT_OUT``: ``draft_head``, ``tp_refused``); empty with ``--all-scenarios``.
    """

    view: str
    keys: tuple[str, ...]
    figures: tuple[str, ...]
    base_rows: int
    head_rows: int
    skipped: str | None = None
    left_out: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class RecommendationFlip:
    """A report whose recommended option for one model differs between BASE and HEAD.

    ``old``/``new`` are (hardware_id, engine_id, weights_dtype, kv_dtype, tp, devices), or None
    when no option of the report meets its workload on that side.
    """

    report: str
    model: str
    old: tuple | None
    new: tuple | None


@dataclasses.dataclass
class DiffResult:
    """The whole diff between a BASE and a HEAD project."""

    base_label: str
    head_label: str
    entries: list[EntryChange]
    figures: list[FigureChange]
    scenario_sets: list[ScenarioSetChange]
    views: list[ViewComparison]
    threshold_pct: float
    hidden_below_threshold: int
    summaries: list[FigureSummary] = dataclasses.field(default_factory=list)
    reports_checked: list[str] = dataclasses.field(default_factory=list)
    recommendations: list[RecommendationFlip] = dataclasses.field(default_factory=list)
    # None: ``figures`` holds every figure change shown.  N: at most N per entry and view (the largest,
    # in order); ``summaries`` still count them all (the renderers count from them).
    figure_rows: int | None = None

    @property
    def has_changes(self) -> bool:
        return bool(self.entries or self.figures or self.scenario_sets)

    @property
    def left_out(self) -> dict[str, int]:
        """Why → rows the focus left out of the changes shown, over every view (:attr:`ViewComparison.left_out`)."""
        out: dict[str, int] = {}
        for v in self.views:
            for why, n in v.left_out.items():
                out[why] = out.get(why, 0) + n
        return out

    def figures_moved(self, kind: str | None = None, id: str | None = None) -> int:
        """Figure changes shown (after the threshold) for one entry, or in all with no entry given.

        Counted from ``summaries`` (aggregated in SQL), so it is the full count when ``figures`` is bounded.
        """
        return sum(s.count for s in self.summaries if kind is None or (s.kind, s.id) == (kind, id))
