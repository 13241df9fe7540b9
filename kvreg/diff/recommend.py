"""Report recommendations that flip: the report's own option ranking on BASE and on HEAD.

A report recommends, per model, its rank-1 option that meets the workload
(``kvreg/report/context.py``: ``rank_in_model = 1 AND meets`` over the
``plan_options`` query, or ``options`` when the plans macro is absent).  The
diff runs that same query on each side, but only for reports that list a
touched entry (a model, hardware or engine the change edits, or a hardware
entry depending on one): a report naming none of them ranks the same rows on
both sides, so it cannot flip.  The diff ranks on sides cut to the touched models
(an edit of models alone) or to the checked reports' entries
(``scenarios.cut_to_reports``): about 2 s per report per side on the shipped
registry (benchmarks/README.md).
"""

from __future__ import annotations

import json

from kvreg.diff.model import RecommendationFlip

# Entry kind → report_items.item_kind naming an entry of that kind.
ITEM_KINDS = {"model": "model", "hardware": "hardware", "engine": "engine"}


def _reports_touching(con, alias: str, order: list[tuple[str, list[str]]]) -> set[str]:
    out: set[str] = set()
    for kind, ids in order:
        item = ITEM_KINDS.get(kind)
        if item is None:
            continue
        out |= {r[0] for r in con.execute(
            f'SELECT DISTINCT report_id FROM "{alias}".report_items WHERE item_kind = ? AND list_contains(?, item_id)',
            [item, ids]).fetchall()}
    return out


def _recommended(con, alias: str, report_id: str, only_models: set[str] | None = None) -> dict[str, tuple | None]:
    """model id → (hardware, engine, weights, kv, tp, devices) of the report's recommendation, or None.

    ``only_models``: rank only these of the report's models (options are ranked per model, so the others'
    recommendations cannot depend on an edit that touches models alone).
    """
    from kvreg.report.context import rank_options, scope_from_items

    con.execute(f'USE "{alias}"')
    try:
        scope = scope_from_items(con, report_id)
        if only_models is not None:
            scope["models"] = [m for m in scope["models"] if m in only_models]
        rank_options(con, report_id, scope)
        models = [r[0] for r in con.execute(
            "SELECT item_id FROM report_items WHERE report_id = ? AND item_kind = 'model' ORDER BY item_idx",
            [report_id]).fetchall()]
        if only_models is not None:
            models = [m for m in models if m in only_models]
        best = {r[0]: tuple(r[1:]) for r in con.execute(
            "SELECT model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp, devices FROM report_options "
            "WHERE rank_in_model = 1 AND meets").fetchall()}
        con.execute("DROP TABLE IF EXISTS report_options")
        return {m: best.get(m) for m in models}
    finally:
        con.execute("USE memory")


def reports_to_check(con, base_alias: str, head_alias: str, order: list[tuple[str, list[str]]],
                     reports: list[str] | None = None) -> set[str]:
    """Report ids on both sides (with a workload) that list a touched entry, within ``reports`` when given."""
    common = _reports_touching(con, base_alias, order) & _reports_touching(con, head_alias, order)
    common &= {r[0] for r in con.execute(f'SELECT report_id FROM "{head_alias}".report_workloads').fetchall()}
    common &= {r[0] for r in con.execute(f'SELECT report_id FROM "{base_alias}".report_workloads').fetchall()}
    if reports is not None:
        common &= set(reports)
    return common


def _cached_recommended(con, alias: str, report_id: str, only: set[str] | None, keys, keyed_as: str,
                        extra: tuple[str, ...], prepare) -> dict[str, tuple | None]:
    """:func:`_recommended`, read from the step cache when this side's ranking was computed before.

    The key (``keys.whole_key``) covers every base table of side ``keyed_as`` (the uncut side the ranking copy is
    made from: a ranking reads most of the registry), the report, the models ranked and ``extra`` (what the copy is
    cut to).  ``prepare`` is called before the first ranking that is not cached (it makes the ranking copies).
    """
    key = None if keys is None else keys.whole_key(keyed_as, "rank", report_id,
                                                   json.dumps(sorted(only) if only is not None else None), *extra)
    if key is not None:
        hit = keys.cache.load_json(key, f"ranking of {report_id}")
        if isinstance(hit, list):
            return {m: (tuple(v) if v is not None else None) for m, v in hit}
    prepare()
    out = _recommended(con, alias, report_id, only)
    if key is not None:
        value = [[m, list(v) if v is not None else None] for m, v in out.items()]
        if json.loads(json.dumps(value)) == value:  # only plain values (str, int, float, None) are stored
            keys.cache.store_json(key, value, f"ranking of {report_id}")
    return out


def recommendation_flips(con, base_alias: str, head_alias: str,
                         order: list[tuple[str, list[str]]], reports: list[str] | None = None,
                         progress=None, keys=None, keyed_as: tuple[str, str] | None = None,
                         prepare=None) -> tuple[list[str], list[RecommendationFlip]]:
    """Reports checked (present on both sides and listing a touched entry) and the recommendations that flip.

    Args:
        con: connection with both sides attached as ``base_alias`` / ``head_alias``.
        order: ``[(kind, ids)]`` of touched entries (:func:`kvreg.diff.scenarios.touched`).
        reports: check only these report ids (None: every report on both sides).
        progress: optional callable given a message before each report is ranked (~2 s a side each).
        keys: the step cache's keys (:class:`kvreg.diff.stepcache.StepKeys`; None: no cache): a side's ranking of a
            report computed by an earlier diff with the same key is read back.
        keyed_as: the (BASE, HEAD) sides ``base_alias`` / ``head_alias`` are ranking copies of: which reports are
            checked is read from them and the rankings are keyed by their content (default: the aliases themselves).
        prepare: called once before the first ranking not read from the cache (makes the ranking copies), or None.
    Returns:
        (sorted report ids checked, one :class:`RecommendationFlip` per report × model whose
        recommended option differs; ``old``/``new`` None when no option meets the workload).
    """
    keyed_as = keyed_as or (base_alias, head_alias)
    common = reports_to_check(con, *keyed_as, order, reports)
    # An edit of models alone moves only those models' options (ranked per model): rank just them.
    only = ({i for _, ids in order for i in ids} if order and {k for k, _ in order} == {"model"} else None)
    prepared: list[bool] = []

    def once() -> None:
        if prepare is not None and not prepared:
            prepare()
        prepared.append(True)

    extra = (json.dumps(sorted(common)), json.dumps(order))
    flips = []
    for n, rid in enumerate(sorted(common), 1):
        if progress is not None:
            progress(f"ranking report {rid} on BASE and HEAD ({n} of {len(common)})")
        old = _cached_recommended(con, base_alias, rid, only, keys, keyed_as[0], extra, once)
        new = _cached_recommended(con, head_alias, rid, only, keys, keyed_as[1], extra, once)
        for model in new:
            if model in old and old[model] != new[model]:
                flips.append(RecommendationFlip(rid, model, old[model], new[model]))
    return sorted(common), flips
