"""``kvreg plan``: how many accelerators a workload needs, cheapest configuration first.

All arithmetic is in the ``plans`` table macro (kvreg/sql/145_plans.sql); this
module checks the arguments, picks the rows for one model and lays them out.
"""

from __future__ import annotations

import dataclasses

from kvreg import formats as f
from kvreg.fit import UsageError, check_known, dict_rows


@dataclasses.dataclass
class PlanResult:
    """One workload's plans for one model.

    ``feasible``, ``unranked`` and ``infeasible`` hold one dict per configuration
    (columns of ``plans``).  ``feasible`` is ranked cheapest first (configurations
    without a price after the priced ones, fewest GPUs first) and on ONE rate basis:
    when some rows are at the stated efficiency (``rate_basis = 'expected'``) and
    others only at the bandwidth ceiling (no efficiency stated), only the expected
    rows are ranked and the ceiling rows go to ``unranked`` (same order), because a
    ceiling rate is optimistic by 1/efficiency and would win unfairly.  When every
    row is at the ceiling they are ranked together and ``basis`` says so.
    ``infeasible`` has the longest servable context first.
    """

    model_id: str
    engine_id: str
    users: int
    context_tokens: int
    tpot_s: float
    ttft_s: float | None
    weights_dtypes: list[str]
    kv_dtypes: list[str]
    feasible: list[dict]
    infeasible: list[dict]
    unranked: list[dict] = dataclasses.field(default_factory=list)
    basis: str = "expected"


def plan(con, model: str, *, users: int, context_tokens: int, tpot_s: float, ttft_s: float | None = None,
         weights_dtypes: list[str] | None = None, kv_dtypes: list[str] | None = None,
         engine: str = "first-principles", hardware: list[str] | None = None) -> PlanResult:
    """Every hardware × precision × TP configuration for the workload, cheapest first.

    Args:
        con: a connection to a built database.
        model: a registry model id.
        users: concurrent sequences (> 0).
        context_tokens: context of each sequence, tokens (> 0).
        tpot_s: time per output token each sequence needs, seconds (> 0).
        ttft_s: optional prefill (time to first token) target, seconds; checked against the prefill floor.
        weights_dtypes: weight precisions to consider; default the model's own dtype.
        kv_dtypes: KV-cache precisions to consider; default bf16.
        engine: engine id whose memory pool is used.
        hardware: hardware ids to compare; default every hardware entry.

    Returns:
        A :class:`PlanResult`.

    Raises:
        UsageError: an unknown id or dtype, or a non-positive workload figure.
    """
    if users < 1 or context_tokens < 1 or not tpot_s > 0 or (ttft_s is not None and not ttft_s > 0):
        raise UsageError("users, context, TPOT (and TTFT when given) must be positive")
    check_known(con, "models", "model_id", model, "model")
    check_known(con, "engines", "engine_id", engine, "engine")
    if not weights_dtypes:
        weights_dtypes = [con.execute("SELECT dtype FROM models WHERE model_id = ?", [model]).fetchone()[0]]
    kv_dtypes = kv_dtypes or ["bf16"]
    for d in weights_dtypes:
        check_known(con, "precisions WHERE for_weights", "dtype", d, "weights dtype")
    for d in kv_dtypes:
        check_known(con, "precisions WHERE for_kv", "dtype", d, "KV dtype")
    for h in hardware or []:
        check_known(con, "hardware", "hardware_id", h, "hardware")
    if not hardware:
        hardware = [r[0] for r in con.execute("SELECT hardware_id FROM hardware").fetchall()]
    rows = dict_rows(con.execute(
        "SELECT * FROM plans(?, ?, ?, ?) WHERE model_id = ? AND engine_id = ?"
        " AND list_contains(?, weights_dtype) AND list_contains(?, kv_dtype) AND list_contains(?, hardware_id)"
        " ORDER BY feasible DESC, usd_per_hour NULLS LAST, gpus, hardware_id, tp, weights_dtype, kv_dtype",
        [users, context_tokens, tpot_s, ttft_s, model, engine, weights_dtypes, kv_dtypes, hardware]))
    feasible = [r for r in rows if r["feasible"]]
    # One basis per ranking: ceiling rates are optimistic by 1/efficiency, so they never
    # compete with expected rates; they are listed apart instead.
    basis = "expected" if any(r["rate_basis"] == "expected" for r in feasible) or not feasible else "ceiling"
    unranked = [r for r in feasible if r["rate_basis"] != basis]
    feasible = [r for r in feasible if r["rate_basis"] == basis]
    infeasible = sorted((r for r in rows if not r["feasible"]),
                        key=lambda r: (r["max_context_tokens"] is None, -(r["max_context_tokens"] or 0),
                                       r["single_seq_tpot_s"] is None, r["single_seq_tpot_s"] or 0,
                                       r["hardware_id"], r["tp"]))
    return PlanResult(model, engine, users, context_tokens, tpot_s, ttft_s, list(weights_dtypes), list(kv_dtypes),
                      feasible, infeasible, unranked, basis)


def _table(rows: list[tuple]) -> list[str]:
    widths = [max(len(str(t[i])) for t in rows) for i in range(len(rows[0]))]
    out = []
    for i, t in enumerate(rows):
        out.append("  ".join(str(c).rjust(w) if j else str(c).ljust(w) for j, (c, w) in enumerate(zip(t, widths))))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _reason_groups(rows: list[dict]) -> list[str]:
    """One line per hardware × precisions × reason, its TPs joined (``h: TP 2, 4, 8 bf16/bf16: reason``).

    Hardware in the order it first appears in ``rows``, its lines together, each line where
    its reason first appears; the longest servable context is given per TP when the reason
    has one (``max_context_tokens`` not NULL).
    """
    first = {}
    groups: dict[tuple, list[dict]] = {}
    for p in rows:
        first.setdefault(p["hardware_id"], len(first))
        groups.setdefault((p["hardware_id"], p["weights_dtype"], p["kv_dtype"], p["reason"]), []).append(p)
    out = []
    for (hw, w, kv, reason), ps in sorted(groups.items(), key=lambda g: first[g[0][0]]):
        ps = sorted(ps, key=lambda p: p["tp"])
        # 0: no context at all would do (the weights alone miss the TPOT), so nothing to offer.
        longest = [p for p in ps if p["max_context_tokens"]]
        if len(ps) == 1 and longest:
            tail = f" (longest context that would: {longest[0]['max_context_tokens']:,})"
        elif longest:
            tail = " (longest context that would: " + "; ".join(
                f"{p['max_context_tokens']:,} at TP {p['tp']}" for p in longest) + ")"
        else:
            tail = ""
        out.append(f"  {hw} TP {', '.join(str(p['tp']) for p in ps)} {w}/{kv}: {reason}{tail}")
    return out


def render_plan(r: PlanResult, top: int = 10, max_reasons: int = 12) -> str:
    """A terminal report: the workload, the cheapest ``top`` configurations, the configurations
    left unranked because their rate is on another basis, then why the others fail (one line per
    hardware and reason, at most ``max_reasons`` lines, then ``(N more)``)."""
    ttft = f" · TTFT ≤ {f.ms(r.ttft_s)}" if r.ttft_s is not None else ""
    out = [f"{r.model_id} · {r.users:,} users × {f.tokens(r.context_tokens)} · TPOT ≤ {f.ms(r.tpot_s)}{ttft}"
           f" · engine {r.engine_id} · weights {'/'.join(r.weights_dtypes)} · KV {'/'.join(r.kv_dtypes)}"]
    if r.feasible:
        out.append("Cheapest first. replicas = ceil(users ÷ min(capacity, rate limit)); "
                   "rate limit = largest batch whose decode step ≤ TPOT.")
        table = [("hardware", "weights", "KV", "TP", "capacity/replica", "rate limit", "replicas", "batch",
                  "GPUs", "$/hour", "binding", "TPOT at batch", "rate basis")]
        for p in r.feasible[:top]:
            table.append((p["hardware_id"], p["weights_dtype"], p["kv_dtype"], p["tp"],
                          f.count(p["max_seqs_per_replica"]), f.count(p["rate_max_batch"]), f.count(p["replicas"]),
                          f.count(p["batch_per_replica"]), f.count(p["gpus"]), f.usd(p["usd_per_hour"]),
                          p["binding_constraint"], f.ms(p["tpot_at_batch_s"]), p["rate_basis"]))
        out += _table(table)
        if len(r.feasible) > top:
            out.append(f"({len(r.feasible) - top} more feasible configurations not shown)")
        unpriced = sorted({p["hardware_id"] for p in r.feasible[:top] if p["usd_per_hour"] is None})
        if unpriced:
            out.append(f"Note: $/hour n/a = no price in the registry for {', '.join(unpriced)}; sorted after priced rows.")
        if r.basis == "ceiling":
            out.append("Note: no hardware here states a bandwidth efficiency: every rate is the bandwidth ceiling"
                       " (optimistic).")
        best = r.feasible[0]
        out.append(f"Best: {best['replicas']} × {best['hardware_id']} TP {best['tp']} = {best['gpus']} GPUs"
                   f" at {f.usd(best['usd_per_hour'])}/hour; binding constraint: {best['binding_constraint']}.")
        # Every plan states the efficiency its rates used and the evidence (speed_efficiency, kvreg/sql/124).
        shown = {p["hardware_id"]: p.get("efficiency_evidence") for p in r.feasible[:top]}
        out.append("Efficiency used: " + "; ".join(f"{hw}: {ev or 'none (bandwidth ceiling)'}"
                                                   for hw, ev in shown.items()) + ".")
    else:
        out.append("No configuration serves this workload.")
        best = r.infeasible[0] if r.infeasible else None
        if best is not None and best["max_context_tokens"] is not None:
            out.append(f"Best option: {best['hardware_id']} TP {best['tp']} ({best['weights_dtype']} weights,"
                       f" {best['kv_dtype']} KV): {best['reason']}.")
            out.append(f"Longest context one sequence could have there within the TPOT:"
                       f" {f.tokens(best['max_context_tokens'])}; one sequence alone decodes at"
                       f" {f.ms(best['single_seq_tpot_s'])} per token at this context.")
    if r.unranked:
        out.append(f"Not ranked: no stated bandwidth efficiency for {', '.join(sorted({p['hardware_id'] for p in r.unranked}))};"
                   " their rates are the bandwidth ceiling, not comparable with the expected rates above:")
        out += [f"  {p['hardware_id']} TP {p['tp']} {p['weights_dtype']}/{p['kv_dtype']}: {f.count(p['replicas'])} replicas,"
                f" {f.count(p['gpus'])} GPUs, {f.usd(p['usd_per_hour'])}/hour at the ceiling"
                for p in r.unranked[:top]]
        if len(r.unranked) > top:
            out.append(f"  ({len(r.unranked) - top} more)")
    if r.infeasible:
        out.append("Cannot serve it:")
        groups = _reason_groups(r.infeasible)
        out += groups[:max_reasons]
        if len(groups) > max_reasons:
            out.append(f"  ({len(groups) - max_reasons} more)")
    return "\n".join(out)
