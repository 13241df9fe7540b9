"""Optional comparisons that need code other branches provide: report recommendations.

A recommendation hook is a function ``recommend(con, report) -> value`` that
returns a JSON-able summary of what a report recommends (e.g. the cheapest
hardware option meeting its workload) from a connection holding the views and
one ``report`` entry.  When kvreg has both a ``report`` entry kind and one of
:data:`RECOMMENDERS`, the diff evaluates it on BASE and HEAD for every report
present on both sides and lists the ones that flip; otherwise it says why it
skipped the check.
"""

from __future__ import annotations

import importlib

# "module:function" candidates, first importable one wins.
RECOMMENDERS: tuple[str, ...] = ("kvreg.recommend:recommend", "kvreg.report.recommend:recommend",
                                 "kvreg.reports.recommend:recommend")


def find_recommender():
    """The first importable recommendation function, or None."""
    for spec in RECOMMENDERS:
        module, _, name = spec.partition(":")
        try:
            fn = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if callable(fn):
            return fn
    return None


def recommendation_flips(con, base, head, base_alias: str, head_alias: str):
    """Compare report recommendations between the two attached databases.

    Returns:
        ``(flips, skipped)``: a list of ``{report, old, new}`` for reports whose
        recommendation differs, and None; or ``(None, reason)`` when skipped.
    """
    if "report" not in head.entries and "report" not in base.entries:
        return None, "no report entry kind in this kvreg"
    fn = find_recommender()
    if fn is None:
        return None, "no recommendation function (" + ", ".join(RECOMMENDERS) + ")"
    flips = []
    common = sorted(set(base.entries.get("report", {})) & set(head.entries.get("report", {})))
    for rid in common:
        out = []
        for alias, reg in ((base_alias, base), (head_alias, head)):
            con.execute(f'USE "{alias}"')
            try:
                out.append(fn(con, reg.entries["report"][rid].entry))
            finally:
                con.execute("USE memory")
        if out[0] != out[1]:
            flips.append({"report": rid, "old": out[0], "new": out[1]})
    return flips, None
