"""What would change ``kvreg plan``'s answer, and the † call sized again at the vendor's measured efficiency.

The arithmetic is SQL: ``plan_levers`` (kvreg/sql/284_plan_levers.sql: the runner-up's price at which it wins, the
bandwidth efficiency at which the device count or the pick changes, the ``max_num_batched_tokens`` settings at which
the engine's admission moves the count) and ``plan_measured_basis`` (286: the same workload ranked with
``efficiency_basis := 'vendor_measured'``, as the report's † footnote).  This module runs them for the
recommendation of one :func:`kvreg.plan.plan` call and words the warning.
"""

from __future__ import annotations

from kvreg import formats as f
from kvreg.fit import dict_rows

EFFICIENCY_BASES = ("fitted", "vendor_measured")
"""The ``plans`` macro's ``efficiency_basis`` values (kvreg/sql/275_plans.sql): 'fitted' sizes every device at
speed_efficiency's figure; 'vendor_measured' replaces a figure that is only the hardware entry's stated one by the same
vendor's lowest measured one (plan_efficiency, 274)."""


def _stated(con, engine: str, efficiency_basis: str) -> set[str]:
    """Hardware ids whose bandwidth efficiency under ``engine``'s family is the entry's stated guess at this basis
    (plan_efficiency.bandwidth_level 'stated'; at 'vendor_measured' only those with no vendor figure to replace it)."""
    return {h for (h,) in con.execute(
        "SELECT pe.hardware_id FROM plan_efficiency pe JOIN engines en ON en.engine = pe.engine_family"
        " WHERE en.engine_id = ? AND pe.bandwidth_level = 'stated'"
        " AND (? = 'fitted' OR pe.vendor_bandwidth_efficiency IS NULL)", [engine, efficiency_basis]).fetchall()}


def vendor_replaced(con, engine: str, hardware: list[str] | None) -> set[str]:
    """Hardware ids (of ``hardware``, None = all) whose bandwidth efficiency under ``engine``'s family the
    'vendor_measured' basis replaces: the entry's stated figure, with a measured one of the same vendor
    (plan_efficiency, 274).  Every other device's plans rows are the same at both bases (275); with none, the
    'vendor_measured' ranking is the 'fitted' one."""
    return {h for (h,) in con.execute(
        "SELECT pe.hardware_id FROM plan_efficiency pe JOIN engines en ON en.engine = pe.engine_family"
        " WHERE en.engine_id = ? AND pe.vendor_bandwidth_efficiency IS NOT NULL"
        " AND (? IS NULL OR list_contains(?, pe.hardware_id))", [engine, hardware, hardware]).fetchall()}


def levers_for(con, rows: list[dict], knobs: dict | None, efficiency_basis: str,
               measured_ranked: bool = False, admission: str | None = None) -> tuple[dict | None, dict | None, set[str]]:
    """The recommendation's levers, its measured-basis comparison and the stated-efficiency hardware.

    Args:
        con: the connection whose temp table ``plan_ranked`` holds ``rows`` (ranked_plans for one model), and with
            ``measured_ranked`` ``plan_ranked_measured`` the same call ranked at 'vendor_measured'
            (:func:`kvreg.plan.plan` ranks both in one statement where that basis moves a row).
        rows: those rows as dicts (rank order).
        knobs: the engine settings given (None = the release's); ``plan_levers`` re-admits at them.
        efficiency_basis: the basis ``rows`` were ranked at.
        measured_ranked: ``plan_ranked_measured`` is there; without it (no listed device's figure is replaced,
            :func:`vendor_replaced`) the 'vendor_measured' ranking of a † call is ``plan_ranked`` itself.
        admission: the name of a table of engine_capacity_at rows at ``knobs`` over the levers' batched-tokens axis
            (:func:`kvreg.plan_eval.plan_admission`'s ``plan_admission_rows``): the re-admission reads it
            (``plan_levers_admission_of``, 284) instead of calling engine_capacity_at again; None: it calls it.

    Returns:
        (plan_levers row or None without a recommendation, plan_measured_basis row or None when the recommendation
        is not a † call or the basis is already 'vendor_measured', the hardware ids sized at a stated figure).
    """
    if not rows:
        return None, None, set()
    stated = _stated(con, rows[0]["engine_id"], efficiency_basis)
    k = knobs or {}
    if admission is not None and any(r["rank_in_model"] == 1 and r["pool_basis"] == "engine" for r in rows):
        # the plan's one admission table (kvreg/plan_eval.py plan_admission): the same levers as plan_levers below
        lev = dict_rows(con.execute(
            "SELECT * FROM plan_levers_core('plan_ranked', admission := ("
            "SELECT list(a) FROM plan_levers_admission_of('plan_ranked', ?) a))", [admission]))
    elif any(r["rank_in_model"] == 1 and r["pool_basis"] == "engine" for r in rows):
        lev = dict_rows(con.execute(
            "SELECT * FROM plan_levers('plan_ranked', gpu_memory_utilization := ?, max_num_seqs := ?,"
            " enforce_eager := ?, num_speculative_tokens := ?, block_size := ?)",
            [k.get("gpu_memory_utilization"), k.get("max_num_seqs"), k.get("enforce_eager"),
             k.get("num_speculative_tokens"), k.get("block_size")]))
    else:
        # a first-principles recommendation: plan_levers_admission (284) would find no engine row to re-admit, so
        # the same levers come without binding the engine admission chain (~0.12 s CPU of the ~0.17 s of the call)
        lev = dict_rows(con.execute("SELECT * FROM plan_levers_core('plan_ranked')"))
    best = lev[0] if lev else None
    measured = None
    if (best is not None and efficiency_basis == "fitted" and best["binding_constraint"] == "tpot"
            and best["hardware_id"] in stated):
        if not measured_ranked:   # 'vendor_measured' replaces no listed device's figure: the same rows
            con.execute("CREATE OR REPLACE TEMP TABLE plan_ranked_measured AS SELECT * FROM plan_ranked")
        got = dict_rows(con.execute("SELECT * FROM plan_measured_basis('plan_ranked', 'plan_ranked_measured')"))
        measured = got[0] if got else None
    return best, measured, stated


def measured_warning(m: dict) -> str:
    """The † line of a call sized on a stated efficiency, in the report's terms (kvreg/templates/_summary.html.j2):
    the stated figure, the vendor's measured one and where it comes from, the count at it, and whether the pick
    changes — or, when nothing changes, that the call holds at the measured figure."""
    head = (f"† {m['hardware_id']}: sized at the stated {m['bandwidth_efficiency']:.2f}; the vendor's lowest measured"
            f" figure under {m['vendor_engine_family']} is {m['vendor_bandwidth_efficiency']:.2f}"
            f" ({m['vendor_hardware_id']})")
    if m["holds"]:
        return f"{head}: the call holds at the measured figure ({m['devices']:,} × {m['hardware_id']})."
    if m["at_devices"] is None:
        tail = f"no configuration of {m['hardware_id']} serves the workload at that figure"
    else:
        tail = f"{m['devices']:,} → {f.counted(m['at_devices'], 'device')} at that figure (TP {m['at_tp']})"
    if m["flips"]:
        price = f" at ${m['top_usd_per_hour']:,.2f}/hour" if m["top_usd_per_hour"] is not None else ""
        tail += (f"; the recommendation would flip to {m['top_devices']:,} × {m['top_hardware_id']}"
                 f" (TP {m['top_tp']}, {m['top_weights_dtype']} / {m['top_kv_dtype']}){price}")
    elif m["top_hardware_id"] is None:
        tail += "; no listed configuration serves the workload at that figure"
    else:
        tail += " (still the recommendation)"
    return f"{head}: {tail}. Rerun with --efficiency-basis vendor_measured to see that plan."


def lever_lines(levers: dict | None) -> list[str]:
    """"What would change the answer": one line per lever (plan_levers.lines, 284), indented under a heading;
    empty when there is no recommendation or no lever moves it."""
    if not levers or not levers.get("lines"):
        return []
    return ["What would change the answer:"] + [f"  {x['line']}." for x in levers["lines"]]
