"""``kvreg plan``: how many accelerators a workload needs, cheapest configuration first.

All arithmetic is in the ``plans`` table macro (kvreg/sql/275_plans.sql); this
module checks the arguments, picks the rows for one model and lays them out.
"""

from __future__ import annotations

import dataclasses
import math

from kvreg import formats as f
from kvreg.engine_fit import unmodelled_layout
from kvreg.fit import UsageError, check_known, check_servable, dict_rows
from kvreg.plan_eval import (FIRST_PRINCIPLES_SCOPE, PLAN_ADMISSION_SCOPE, PLAN_OPTIMIZERS_OFF,  # noqa: F401
                             RELEASE_BLOCKS_SCOPE, optimizers_off, plan_admission, plan_settings, search_first)


POOL_KNOBS = ("gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "enforce_eager",
              "num_speculative_tokens")
"""The knobs the memory pool macros take (``memory_pools_at``, ``engine_memory_pools_at``)."""
KNOBS = POOL_KNOBS + ("block_size",)
"""Engine knobs a user may set (``kvreg fit``/``plan`` options, report ``engine_settings``); None = the default.
``block_size`` changes blocks, not the pool: only the block macros take it (engine_capacity_at, capacity_at, plans)."""


@dataclasses.dataclass
class PlanResult:
    """One workload's plans for one model, ranked by the ``ranked_plans`` macro (kvreg/sql/280_ranked_plans.sql).

    ``feasible`` holds the rows of its ``'priced'`` list (cheapest first, on one rate basis), ``unpriced``
    the feasible rows without a price (ranked apart on device count), ``unranked`` the feasible rows at the
    bandwidth ceiling while others are at a stated efficiency (``rate_basis``; optimistic by 1/efficiency),
    ``infeasible`` the rest (longest servable context first).  One dict per configuration (columns of
    ``ranked_plans``).  ``basis`` is the rate basis ranked; ``knobs`` the engine settings the user gave;
    ``workload`` the workload fields given (:data:`WORKLOAD_FIELDS`, None = not given).  ``users`` is the
    concurrent requests the plan sized (given, or Little's law from ``request_rate_per_s``).
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
    unpriced: list[dict] = dataclasses.field(default_factory=list)
    knobs: dict = dataclasses.field(default_factory=dict)
    workload: dict = dataclasses.field(default_factory=dict)
    native_context_tokens: int | None = None  # the model's; a plan beyond it is warned about
    # the engine release records no support: block (engine_support.checked false): nothing said where it runs
    support_unchecked: bool = False
    # why the engine gives no row at all for this model, when it does not model its layout (engine_fit, DeepSeek-V4)
    layout_notes: list[str] = dataclasses.field(default_factory=list)
    efficiency_basis: str = "fitted"   # the plans macro's efficiency_basis
    # plan_levers (kvreg/sql/284) row of the recommendation: what would change the answer; None without one
    levers: dict | None = None
    # plan_measured_basis (286) row: the recommendation sized at the vendor's measured figure (a † call); else None
    measured: dict | None = None
    stated: set = dataclasses.field(default_factory=set)   # hardware whose bandwidth efficiency is the stated guess

    @property
    def ranked(self) -> list[dict]:
        """Every row in ``ranked_plans``' order (rank_in_model): priced, no price, other basis, infeasible."""
        return sorted(self.feasible + self.unpriced + self.unranked + self.infeasible,
                      key=lambda r: r["rank_in_model"])


def knob_params(knobs: dict | None, names: tuple[str, ...] = KNOBS) -> list:
    """The engine knob values in ``names`` order (default :data:`KNOBS`; None = the release default), as SQL
    parameters."""
    knobs = knobs or {}
    unknown = set(knobs) - set(KNOBS)
    if unknown:
        raise UsageError(f"unknown engine {f.noun_for(len(unknown), 'setting')} {', '.join(sorted(unknown))} (known: {', '.join(KNOBS)})")
    return [knobs.get(k) for k in names]


def check_knobs(knobs: dict | None) -> None:
    """Raise :class:`UsageError` for a knob value out of range (utilization in (0, 1], counts ≥ 1 or ≥ 0).

    ``block_size`` depends on the release: :func:`check_block_size`.  A value of the wrong type (``"0.9"``,
    ``max_num_seqs=2.5``, a non-bool ``enforce_eager``; the Python API passes what it is given) is a UsageError
    too, never a TypeError from a comparison."""
    k = knobs or {}
    if not isinstance(k, dict):
        raise UsageError(f"knobs must be a dict of engine settings, got {type(k).__name__}")
    for name, v in k.items():
        if v is None or name not in KNOBS:
            continue  # an unknown name: knob_params names it with the known ones
        if name == "enforce_eager":
            if not isinstance(v, bool):
                raise UsageError(f"enforce_eager must be True or False, got {v!r}")
        elif name == "gpu_memory_utilization":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise UsageError(f"gpu_memory_utilization must be a number in (0, 1], got {v!r}")
        elif isinstance(v, bool) or not isinstance(v, int):
            raise UsageError(f"{name} must be a whole number, got {v!r}")
    u = k.get("gpu_memory_utilization")
    if u is not None and not 0 < u <= 1:
        raise UsageError(f"--gpu-memory-utilization {u} is not in (0, 1]")
    for name in ("max_num_seqs", "max_num_batched_tokens"):
        if k.get(name) is not None and k[name] < 1:
            raise UsageError(f"--{name.replace('_', '-')} {k[name]} must be at least 1")
    if k.get("num_speculative_tokens") is not None and k["num_speculative_tokens"] < 0:
        raise UsageError("--num-speculative-tokens must be 0 or more")
    # block_size: checked against each release's allowed sizes by check_block_size (the message names them)


def allowed_block_sizes(con, engine: str) -> list[int] | None:
    """Block sizes (tokens) ``engine`` accepts for ``--block-size`` (engine_accounting.block_sizes, read from
    the release's code), or None when kvreg does not model the knob for it (first-principles, SGLang, TRT-LLM)."""
    row = con.execute("SELECT block_sizes FROM engine_accounting WHERE engine_id = ?", [engine]).fetchone()
    return [int(x) for x in row[0].split(",")] if row and row[0] else None


def compressed_block_size(con, engine: str, model: str) -> int | None:
    """The block (tokens) ``engine`` lays ``model``'s compressed attention out in (DeepSeek-V4: the sparse SWA
    backend's preferred 256, engine_accounting.compressed_block_tokens), or None when the model has no
    compressed layer or the release does not model that layout."""
    row = con.execute(
        "SELECT a.compressed_block_tokens FROM engine_accounting a WHERE a.engine_id = ? AND a.compressed_mla_modelled"
        " AND EXISTS (SELECT 1 FROM layer_groups g WHERE g.model_id = ? AND g.kind = 'full'"
        " AND g.compress_tokens IS NOT NULL)", [engine, model]).fetchone()
    return int(row[0]) if row else None


def check_block_size(con, engines: list[str], block_size: int | None, option: str = "--block-size",
                     model: str | None = None) -> None:
    """Raise :class:`UsageError` when ``block_size`` is set and one of ``engines`` does not accept it.

    The message names the option, the release and its allowed values (the SQL macros would give no rows for
    such a release: refused here first, never an empty or silently unchanged figure).  For a ``model`` with
    compressed attention (DeepSeek-V4) under a release that models its layout, the one size is the layout's
    block: vLLM takes the sparse SWA backend's 256 unless told otherwise (platforms/interface.py 0.22.0:489-501),
    and any other size fails its page match (v1/core/kv_cache_utils.py 0.22.0:1549), so kvreg gives no row."""
    if block_size is None:
        return
    for e in engines:
        compressed = compressed_block_size(con, e, model) if model else None
        if compressed is not None:
            if block_size != compressed:
                raise UsageError(f"{option} {block_size}: under {e}, {model}'s compressed attention is laid out in"
                                 f" {compressed}-token blocks (the sparse SWA backend's size); another size fails"
                                 f" vLLM's page match, so kvreg has no figure for it. Use {option} {compressed} or"
                                 " leave it unset")
            continue
        allowed = allowed_block_sizes(con, e)
        if allowed is None:
            raise UsageError(f"{option} {block_size}: engine {e} has no block-size knob in kvreg (only vLLM"
                             " releases model it); leave it unset")
        if block_size not in allowed:
            raise UsageError(f"{option} {block_size} is not a block size {e} accepts (a power of two in tokens;"
                             f" allowed: {', '.join(map(str, allowed))})")


_KNOB_SQL = ", ".join(f"{k} := ?" for k in KNOBS)

WORKLOAD_FIELDS = ("input_tokens", "output_tokens", "shared_prefix_tokens", "parallel_samples", "request_rate_per_s")
"""Workload fields beside users × context (``plans`` parameters of the same names, 275): input and output
lengths, a shared prefix, samples per request, a request rate (req/s) instead of users."""

_WORKLOAD_SQL = ", ".join(f"{k} := ?" for k in WORKLOAD_FIELDS)


def resolve_workload(users: int | None, context_tokens: int | None, workload: dict | None) -> tuple[int | None, int]:
    """Check a workload's fields against each other; return (users, context_tokens) with context = input + output.

    Args:
        users: concurrent requests, or None when ``request_rate_per_s`` is given.
        context_tokens: tokens a sequence holds at its end, or None when input and output are given.
        workload: :data:`WORKLOAD_FIELDS` by name (tokens, samples, requests per second; None = not given).

    Raises:
        UsageError: neither or both of users and a request rate; no context and no input + output; a context
            that is not input + output; a request rate without output tokens; a shared prefix not shorter than
            the input (or the context); a non-positive figure.
    """
    w = {k: v for k, v in (workload or {}).items() if v is not None}
    unknown = set(w) - set(WORKLOAD_FIELDS)
    if unknown:
        raise UsageError(f"unknown workload {f.noun_for(len(unknown), 'field')} {', '.join(sorted(unknown))} (known: {', '.join(WORKLOAD_FIELDS)})")
    rate, inp, out, prefix = (w.get(k) for k in ("request_rate_per_s", "input_tokens", "output_tokens",
                                                  "shared_prefix_tokens"))
    if (users is None) == (rate is None):
        raise UsageError("give either users (concurrent requests) or a request rate (requests per second), not both"
                         " and not neither")
    if rate is not None and not rate > 0:
        raise UsageError(f"request rate {rate} must be positive")
    if rate is not None and out is None:
        raise UsageError("a request rate needs the output length (output tokens): Little's law counts the time a"
                         " request decodes")
    for name in ("input_tokens", "output_tokens", "parallel_samples"):
        if w.get(name) is not None and w[name] < 1:
            raise UsageError(f"{name.replace('_', ' ')} {w[name]} must be at least 1")
    if prefix is not None and prefix < 0:
        raise UsageError(f"shared prefix tokens {prefix} must be 0 or more")
    if inp is not None and out is not None:
        if context_tokens is not None and context_tokens != inp + out:
            raise UsageError(f"context {context_tokens:,} is not input + output = {inp + out:,}: give the context or"
                             " the two lengths")
        context_tokens = inp + out
    if context_tokens is None:
        raise UsageError("give the context, or the input and output lengths (context = input + output)")
    from kvreg.units import MAX_CONTEXT_TOKENS

    if context_tokens > MAX_CONTEXT_TOKENS:
        raise UsageError(f"input + output = {context_tokens:,} tokens is more than {MAX_CONTEXT_TOKENS:,} (2^34)")
    if inp is None and out is not None and out >= context_tokens:
        raise UsageError(f"output tokens {out:,} must be shorter than the context {context_tokens:,}")
    if inp is not None and out is None and inp >= context_tokens:
        raise UsageError(f"input tokens {inp:,} must be shorter than the context {context_tokens:,}")
    prompt = inp if inp is not None else (context_tokens - out if out is not None else context_tokens)
    if prefix and prefix >= prompt:
        raise UsageError(f"shared prefix {prefix:,} tokens must be shorter than the input ({prompt:,} tokens): the"
                         " prefix is the start of every prompt")
    return users, context_tokens


def plan(con, model: str, *, users: int | None, context_tokens: int | None, tpot_s: float,
         ttft_s: float | None = None, weights_dtypes: list[str] | None = None, kv_dtypes: list[str] | None = None,
         engine: str = "first-principles", hardware: list[str] | None = None,
         knobs: dict | None = None, workload: dict | None = None,
         efficiency_basis: str = "fitted") -> PlanResult:
    """Every hardware × precision × TP configuration for the workload, ranked by ``ranked_plans``.

    Args:
        con: a connection to a built database.
        model: a registry model id.
        users: concurrent requests (> 0; each of ``parallel_samples`` sequences), or None with a request rate.
        context_tokens: tokens each sequence holds at its end (> 0), or None when input and output are given
            (context = input + output).
        tpot_s: time per output token each sequence needs, seconds (> 0).
        ttft_s: optional prefill (time to first token) target, seconds; checked against the prefill floor.
        weights_dtypes: weight precisions to consider; default the model's own dtype.
        kv_dtypes: KV-cache precisions to consider; default bf16.
        engine: engine id whose memory model sizes the plan (a release with accounting rules: its pool and
            admission; first-principles: the simple budget).
        hardware: hardware ids to compare; default every hardware entry.
        knobs: engine settings by name (:data:`KNOBS`); a missing or None value is the release default.
        workload: :data:`WORKLOAD_FIELDS` by name (see :func:`resolve_workload`); None values are not given.
        efficiency_basis: the ``plans`` macro's: 'fitted' (speed_efficiency's figures) or 'vendor_measured' (a
            device's stated bandwidth efficiency replaced by the same vendor's lowest measured one, 274).

    Returns:
        A :class:`PlanResult`.

    Raises:
        UsageError: an unknown id or dtype, a non-positive workload figure, an out-of-range setting or an
            efficiency basis other than 'fitted' and 'vendor_measured'.
    """
    from kvreg.plan_levers import EFFICIENCY_BASES, levers_for, vendor_replaced

    if efficiency_basis not in EFFICIENCY_BASES:
        raise UsageError(f"efficiency basis {efficiency_basis!r} is not one of {', '.join(EFFICIENCY_BASES)}"
                         " ('fitted': the measured fits; 'vendor_measured': a stated figure replaced by the same"
                         " vendor's lowest measured one)")
    users, context_tokens = resolve_workload(users, context_tokens, workload)
    if ((users is not None and users < 1) or context_tokens < 1 or not 0 < tpot_s < math.inf
            or (ttft_s is not None and not 0 < ttft_s < math.inf)):   # NaN fails both comparisons
        raise UsageError(f"users, context, TPOT (and TTFT when given) must be positive, finite numbers (got users"
                         f" {users}, context {context_tokens}, TPOT {tpot_s} s, TTFT {ttft_s} s)")
    given = {k: v for k, v in (workload or {}).items() if v is not None}
    if users is None:   # Little's law, the one formula (workload_requests, 272), checked before it sizes anything
        import duckdb

        try:
            (n_req,) = con.execute("SELECT workload_requests(?, ?, ?, ?)",
                                   [given["request_rate_per_s"], ttft_s, given["output_tokens"], tpot_s]).fetchone()
        except duckdb.Error:
            n_req = None
        if n_req is None or not 1 <= n_req <= 10**9:
            raise UsageError(f"request rate {given['request_rate_per_s']:g}/s at these targets is not 1 to 10^9"
                             " concurrent requests (Little's law: rate × (TTFT + (output − 1) × TPOT))")
    check_known(con, "models", "model_id", model, "model")
    check_servable(con, model, "plan")
    check_known(con, "engines", "engine_id", engine, "engine")
    check_knobs(knobs)
    check_block_size(con, [engine], (knobs or {}).get("block_size"), model=model)
    if not weights_dtypes:
        weights_dtypes = [con.execute("SELECT dtype FROM models WHERE model_id = ?", [model]).fetchone()[0]]
    kv_dtypes = kv_dtypes or ["bf16"]
    for d in weights_dtypes:
        check_known(con, "precisions WHERE for_weights", "dtype", d, "weights dtype")
    for d in kv_dtypes:
        check_known(con, "precisions WHERE for_kv", "dtype", d, "KV dtype")
    for h in hardware or []:
        check_known(con, "hardware", "hardware_id", h, "hardware")
    params = [users, context_tokens, tpot_s, ttft_s, [model], [engine], list(weights_dtypes), list(kv_dtypes),
              list(hardware) if hardware else None, *knob_params(knobs), *(given.get(k) for k in WORKLOAD_FIELDS)]
    ranked_sql = ("SELECT * FROM ranked_plans(?, ?, ?, ttft_s := ?, models := ?, engines := ?, weights_dtypes := ?,"
                  f" kv_dtypes := ?, hardware := ?, {_KNOB_SQL}, {_WORKLOAD_SQL}, efficiency_basis := {{basis}})")
    # kept as temp tables: plan_levers and plan_measured_basis (kvreg/sql/284, 286) read the same rows
    both = efficiency_basis == "fitted" and bool(vendor_replaced(con, engine, list(hardware) if hardware else None))
    with plan_settings(con, engine, (knobs or {}).get("block_size")), \
            search_first(con, admission := plan_admission(con, model, engine, context_tokens, hardware, knobs)):
        if both:
            # a † call (kvreg/plan_levers.py) is sized again at 'vendor_measured', which moves the rows of these
            # devices: both rankings in one statement, ranked_plans bound once for the two bases (LATERAL) instead of
            # twice — the same rows as two calls, ~0.15 s CPU less (the binding is most of a ranking's cost)
            con.execute("CREATE OR REPLACE TEMP TABLE plan_ranked_bases AS SELECT b.basis AS ranked_basis, r.*"
                        " FROM (VALUES ('fitted'), ('vendor_measured')) b(basis),"
                        f" LATERAL ({ranked_sql.format(basis='b.basis')}) r", params)
            for table, basis in (("plan_ranked", "fitted"), ("plan_ranked_measured", "vendor_measured")):
                con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * EXCLUDE (ranked_basis)"
                            " FROM plan_ranked_bases WHERE ranked_basis = ?", [basis])
            con.execute("DROP TABLE plan_ranked_bases")
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE plan_ranked AS {ranked_sql.format(basis='?')}",
                        params + [efficiency_basis])
            con.execute("DROP TABLE IF EXISTS plan_ranked_measured")
        rows = dict_rows(con.execute("SELECT * FROM plan_ranked ORDER BY rank_in_model"))
        # the levers' re-admission is the ranking's admission chain at other settings: under the same settings
        levers = levers_for(con, rows, knobs, efficiency_basis, measured_ranked=both,
                            admission="plan_admission_rows" if admission else None)
    by_list: dict[str, list[dict]] = {"priced": [], "no price": [], "other basis": [], "infeasible": []}
    for r in rows:
        by_list[r["rank_list"]].append(r)
    basis = rows[0]["rate_basis_ranked"] if rows else "expected"
    if rows:   # Little's law is computed in SQL (workload_requests, 272): the requests it came to
        users = rows[0]["workload_users"]
    return PlanResult(model, engine, users, context_tokens, tpot_s, ttft_s, list(weights_dtypes), list(kv_dtypes),
                      by_list["priced"], by_list["infeasible"], by_list["other basis"], basis, by_list["no price"],
                      {k: v for k, v in (knobs or {}).items() if v is not None}, given,
                      con.execute("SELECT native_context_tokens FROM models WHERE model_id = ?", [model]).fetchone()[0],
                      engine != "first-principles" and not con.execute(
                          "SELECT count(*) FROM engine_platforms WHERE engine_id = ?", [engine]).fetchone()[0],
                      [] if rows else [n for d in kv_dtypes for n in unmodelled_layout(con, model, engine, d)],
                      efficiency_basis, *levers)


def settings_line(row: dict, engine: str) -> str | None:
    """One line naming the engine settings a row was sized with and whether each is the release default.

    None for a first-principles row (no engine settings besides the utilization, shown only when set).
    """
    if row.get("pool_basis") != "engine":
        if row.get("util_is_default") is False:
            return f"Settings: gpu_memory_utilization {row['gpu_memory_utilization']:g} (set)"
        return None
    parts = [f"gpu_memory_utilization {row['gpu_memory_utilization']:g}"
             f" ({'release default' if row['util_is_default'] else 'set'})",
             f"max_num_seqs {row['max_num_seqs']:,} ({'release default' if row['max_num_seqs_is_default'] else 'set'})",
             f"max_num_batched_tokens {row['max_num_batched_tokens']:,}"
             f" ({'release default' if row['default_batched'] else 'set'})",
             f"enforce_eager {str(bool(row['enforce_eager'])).lower()}"
             f" ({'set' if row['enforce_eager'] else 'default'})"]
    spec = row.get("num_speculative_tokens")
    parts.append(f"num_speculative_tokens {spec} (set; no effect on this release's pool yet)" if spec is not None
                 else "num_speculative_tokens: the served model's own")
    if row.get("block_size") is not None:
        forced = " — the MLA layers keep the backend's own block (the release overrides it)" \
            if row.get("mla_block_size_forced") else ""
        parts.append(f"block_size {row['block_size']}"
                     f" ({'release default' if row.get('block_size_is_default') else 'set'}){forced}")
    return f"Engine {engine} settings: " + " · ".join(parts)


def plan_json(r: PlanResult) -> dict:
    """The plan as JSON-ready data: the workload, the settings given, and every row in rank order."""
    return {"model": r.model_id, "engine": r.engine_id, "users": r.users, "context_tokens": r.context_tokens,
            "workload": {k: r.workload.get(k) for k in WORKLOAD_FIELDS},
            "tpot_s": r.tpot_s, "ttft_s": r.ttft_s, "weights_dtypes": r.weights_dtypes, "kv_dtypes": r.kv_dtypes,
            "settings": r.knobs, "rate_basis": r.basis, "efficiency_basis": r.efficiency_basis,
            "stated_efficiency_hardware": sorted(r.stated), "what_would_change": r.levers,
            "measured_basis": r.measured, "options": r.ranked, "warnings": plan_warnings(r)}


def plan_warnings(r: PlanResult) -> list[str]:
    """Plain-language warnings: a context beyond the model's native context; a recommendation sized on decode speed
    at a stated (unmeasured) bandwidth efficiency, with the count at the vendor's measured figure (†); why the engine
    gives no row at all when
    it does not model the model's cache layout (DeepSeek-V4's compressed attention, engine_fit); an engine release
    whose platform support is not recorded (engine_support, 058: its devices and precisions are then not checked)."""
    out = []
    if r.native_context_tokens and r.context_tokens and r.context_tokens > r.native_context_tokens:
        out.append(f"Warning: {r.context_tokens:,} tokens is beyond {r.model_id}'s native context"
                   f" ({r.native_context_tokens:,} tokens); the model was not trained for it.")
    out += [f"Warning: {n}." for n in r.layout_notes]
    if r.measured is not None:   # the report's † (kvreg/sql/286 plan_measured_basis)
        from kvreg.plan_levers import measured_warning

        out.append("Warning: " + measured_warning(r.measured))
    if r.support_unchecked:
        out.append(f"Warning: {r.engine_id} records no platform support (no support: block in its entry), so"
                   " kvreg did not check that it runs each device and precision (engine_support.checked = false).")
    return out


def workload_lines(r: PlanResult) -> list[str]:
    """The workload beyond users × context, one line, as ``plans`` sized it (empty when nothing else was given):
    input + output, the shared prefix and what it saves, the samples per request, and how many concurrent
    requests a request rate became (Little's law)."""
    w = r.workload
    if not w:
        return []
    parts = []
    if w.get("input_tokens") or w.get("output_tokens"):
        inp = w.get("input_tokens", r.context_tokens - w.get("output_tokens", 0))
        out = w.get("output_tokens", r.context_tokens - inp)
        parts.append(f"input {inp:,} + output {out:,} tokens: admitted at {r.context_tokens:,} held,"
                     f" decode reads at input + output/2 = {inp + out / 2:,.0f}")
    if w.get("shared_prefix_tokens"):
        parts.append(f"shared prefix {w['shared_prefix_tokens']:,} tokens held once per replica (full blocks only)")
    if w.get("parallel_samples", 1) > 1:
        parts.append(f"n = {w['parallel_samples']} samples per request sharing its prompt:"
                     f" {r.users * w['parallel_samples']:,} sequences (capacity, rate limit and batch below count"
                     f" sequences; replicas = ceil(users ÷ ⌊min(capacity, rate limit) ÷ n⌋))")
    if w.get("request_rate_per_s") is not None:
        out = w.get("output_tokens", 1)
        stay = (r.ttft_s or 0) + max(out - 1, 0) * r.tpot_s
        how = (f"TTFT {f.ms(r.ttft_s)} + " if r.ttft_s is not None else "") + f"(output − 1) × TPOT"
        note = "" if r.ttft_s is not None else "; no TTFT target: the prefill is not counted"
        parts.append(f"{w['request_rate_per_s']:g} requests/s × {how} = {stay:,.2f} s in the system{note}"
                     f" → {r.users:,} concurrent requests (Little's law)")
    return ["Workload: " + " · ".join(parts)] if parts else []


def _table(rows: list[tuple]) -> list[str]:
    widths = [max(len(str(t[i])) for t in rows) for i in range(len(rows[0]))]
    out = []
    for i, t in enumerate(rows):
        out.append("  ".join(str(c).rjust(w) if j else str(c).ljust(w) for j, (c, w) in enumerate(zip(t, widths))))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def ttft_miss(p: dict) -> str | None:
    """"the prefill floor 1.67 s exceeds the 30.0 ms TTFT" for a ``plans`` row whose prefill floor misses the
    workload's TTFT target (``prefill_floor_s`` > ``workload_ttft_s``, seconds), whatever reason the row is refused
    for; None when it meets it, or there is no target or no floor."""
    floor, ttft = p.get("prefill_floor_s"), p.get("workload_ttft_s")
    if floor is None or ttft is None or floor <= ttft:
        return None
    return f"the prefill floor {f.duration(floor)} exceeds the {f.duration(ttft)} TTFT"


def no_context_reasons(p: dict) -> list[tuple[str, str]]:
    """Why no context is short enough for a ``plans`` row (``max_context_tokens`` 0), as (short, long) texts.

    The one place the binding constraint behind a 0 is put in words (``context_note`` takes the short texts, the
    plan's "No context is short enough" line the long ones): the weights (and any fixed-size state) alone take
    longer per decode step than the TPOT (``empty_context_step_s`` > ``workload_tpot_s``); a one-token prompt's
    prefill floor exceeds the TTFT (``one_token_prefill_floor_s`` > ``workload_ttft_s``, 275 via
    prompt_prefill_floor_s, 105); else the KV pool holds no sequence.  Seconds in, milliseconds or seconds out."""
    out = []
    step, tpot = p.get("empty_context_step_s"), p.get("workload_tpot_s")
    if step is not None and tpot is not None and step > tpot:
        out.append((f"the weights alone take {f.ms(step)} per decode step",
                    f"the weights (and any fixed-size state) alone take {f.ms(step)} per decode step, more than"
                    f" the {f.ms(tpot)} TPOT"))
    one, ttft = p.get("one_token_prefill_floor_s"), p.get("workload_ttft_s")
    if one is not None and ttft is not None and one > ttft:
        out.append((f"a one-token prompt's prefill floor is {f.duration(one)}",
                    f"a one-token prompt's prefill floor (the weights read once) is {f.duration(one)}, more than"
                    f" the {f.duration(ttft)} TTFT"))
    return out or [("the KV pool holds no sequence of any length",) * 2]


def context_note(p: dict) -> str:
    """What context a refused configuration (a ``plans`` row) would serve, or why none would, in words.

    From ``max_context_tokens`` (kvreg/sql/275_plans.sql: memory's, the TPOT's and, for a row that misses the
    TTFT, the prefill floor's bound): N > 0 "longest context that would: N"; 0 no context is short enough
    (:func:`no_context_reasons`); NULL the refusal is one no context mends (platform, TP, weights), or a TTFT that
    cannot be checked (no FLOP figure).
    """
    mc = p["max_context_tokens"]
    if mc:
        return f"longest context that would: {mc:,}"
    if mc == 0:
        return "no context would: " + "; ".join(short for short, _ in no_context_reasons(p))
    if (p.get("reason") or "").startswith("ttft: no FLOP"):
        return "no context can be checked against the TTFT"
    return "no shorter context mends it"


def _reason_groups(rows: list[dict]) -> list[str]:
    """One line per hardware × precisions × reason, its TPs joined (``h: TP 2, 4, 8 bf16/bf16: reason``).

    Hardware in the order it first appears in ``rows``, its lines together, each line where
    its reason first appears; the longest servable context is given per TP when the reason
    has one (``max_context_tokens`` not NULL), and a TTFT miss gives the prefill floor per TP
    against the target (``prefill_floor_s``, ``workload_ttft_s``, seconds), which the reason text
    leaves out so that the TPs failing alike share one line.
    """
    first = {}
    groups: dict[tuple, list[dict]] = {}
    for p in rows:
        first.setdefault(p["hardware_id"], len(first))
        groups.setdefault((p["hardware_id"], p["weights_dtype"], p["kv_dtype"], p["reason"]), []).append(p)
    out = []
    for (hw, w, kv, reason), ps in sorted(groups.items(), key=lambda g: first[g[0][0]]):
        ps = sorted(ps, key=lambda p: p["tp"])
        # every TP says what context would serve, or why none would (plans' max_context_tokens, computed in SQL)
        notes = [context_note(p) for p in ps]
        if all(p["max_context_tokens"] for p in ps):
            tail = " (longest context that would: " + "; ".join(
                f"{p['max_context_tokens']:,}" + (f" at TP {p['tp']}" if len(ps) > 1 else "") for p in ps) + ")"
        elif len(set(notes)) == 1:
            tail = f" ({notes[0]})"
        elif all(n.startswith("no context would: ") for n in notes):
            tail = " (no context would: " + "; ".join(f"{n.removeprefix('no context would: ')} at TP {p['tp']}"
                                                      for n, p in zip(notes, ps)) + ")"
        else:
            tail = " (" + "; ".join(f"{n} at TP {p['tp']}" for n, p in zip(notes, ps)) + ")"
        # the prefill floor against the TTFT for every TP that misses it, also when it is refused first for memory
        # or the TPOT (its longest context is then the TTFT's too, 275)
        # (not where no context mends it, nor where none is short enough anyway: context_note says why)
        floors = [p for p in ps if ttft_miss(p) and (reason.startswith("ttft:") or p["max_context_tokens"])]
        if floors:
            at = (f.duration(floors[0]["prefill_floor_s"]) if len(ps) == 1 else
                  "; ".join(f"{f.duration(p['prefill_floor_s'])} at TP {p['tp']}" for p in floors))
            also = "" if reason.startswith("ttft:") else "the TTFT binds too: "
            tail += f" ({also}prefill floor {at} > TTFT {f.duration(floors[0]['workload_ttft_s'])})"
        out.append(f"  {hw} TP {', '.join(str(p['tp']) for p in ps)} {w}/{kv}: {reason}{tail}")
    return out


def replicas_wording(replicas: int, tp: int, devices: int) -> str:
    """"R replicas × TP t = G devices": how a plan's size is written in `kvreg plan`'s Best line and in the
    report's decision line (the same words; the report's template spells them out, kvreg/templates/_summary.html.j2)."""
    return (f"{replicas:,} replica{'' if replicas == 1 else 's'} × TP {tp} = {devices:,} device"
            f"{'' if devices == 1 else 's'}")


def _plan_table(rows: list[dict], stated: set | frozenset = frozenset()) -> list[str]:
    """The options as a text table; ``tpot†`` marks a row whose decode speed binds at a stated (unmeasured)
    bandwidth efficiency (``stated``: those hardware ids), as the report marks its summary."""
    table = [("hardware", "weights", "KV", "TP", "capacity/replica", "rate limit", "replicas", "batch",
              "devices", "$/hour", "binding", "TPOT at batch", "rate basis")]
    for p in rows:
        dagger = "†" if p["binding_constraint"] == "tpot" and p["hardware_id"] in stated else ""
        table.append((p["hardware_id"], p["weights_dtype"], p["kv_dtype"], p["tp"],
                      f.count(p["max_seqs_per_replica"]), f.count(p["rate_max_batch"]), f.count(p["replicas"]),
                      f.count(p["batch_per_replica"]), f.count(p["gpus"]), f.usd(p["usd_per_hour"]),
                      p["binding_constraint"] + dagger, f.ms(p["tpot_at_batch_s"]), p["rate_basis"]))
    return _table(table)


def render_plan(r: PlanResult, top: int = 10, max_reasons: int = 12) -> str:
    """A terminal report: the workload and engine settings, the cheapest ``top`` priced configurations, the
    feasible ones without a price (ranked on device count), those left unranked because their rate is on
    another basis, then why the others fail (one line per hardware and reason, at most ``max_reasons``
    lines, then ``(N more)``)."""
    ttft = f" · TTFT ≤ {f.ms(r.ttft_s)}" if r.ttft_s is not None else ""
    out = [f"{r.model_id} · {f.counted(r.users, 'user')} × {f.tokens(r.context_tokens)} · TPOT ≤ {f.ms(r.tpot_s)}{ttft}"
           f" · engine {r.engine_id} · weights {'/'.join(r.weights_dtypes)} · KV {'/'.join(r.kv_dtypes)}"]
    out += workload_lines(r)
    first = next(iter(r.ranked), None)
    best = r.feasible[0] if r.feasible else (r.unpriced[0] if r.unpriced else None)
    rule = "replicas = ceil(users ÷ min(capacity, rate limit)); rate limit = largest batch whose decode step ≤ TPOT."
    unpriced_hw = ", ".join(sorted({p["hardware_id"] for p in r.unpriced}))
    if r.feasible:
        out.append(f"Cheapest first. {rule}")
        out += _plan_table(r.feasible[:top], r.stated)
        if len(r.feasible) > top:
            out.append(f"({f.counted(len(r.feasible) - top, 'more priced configuration')} not shown)")
    if r.unpriced:
        out.append(f"No price in the registry for {unpriced_hw}: ranked on their own, fewest devices first"
                   f" (not comparable in $/hour).{'' if r.feasible else ' ' + rule}")
        out += _plan_table(r.unpriced[:top], r.stated)
        if len(r.unpriced) > top:
            out.append(f"({f.counted(len(r.unpriced) - top, 'more configuration')} without a price not shown)")
    if best is not None:
        if r.basis == "ceiling":
            out.append("Note: no hardware here states a bandwidth efficiency: every rate is the bandwidth ceiling"
                       " (optimistic).")
        price = (f"at {f.usd(best['usd_per_hour'])}/hour" if best["usd_per_hour"] is not None
                 else "(no price in the registry)")
        # one wording with the report's decision line (kvreg/templates/_summary.html.j2): "N ×" was replicas here
        # and devices there
        out.append(f"Best: {best['hardware_id']}, {replicas_wording(best['replicas'], best['tp'], best['gpus'])}"
                   f" {price}; binding constraint: {best['binding_constraint']}.")
        # Every plan states the efficiency its rates used and the evidence (speed_efficiency, kvreg/sql/254).
        shown = {p["hardware_id"]: p.get("efficiency_evidence") for p in (r.feasible or r.unpriced)[:top]}
        out.append("Efficiency used: " + "; ".join(f"{hw}: {ev or 'none (bandwidth ceiling)'}"
                                                   for hw, ev in shown.items()) + ".")
        out.append("Efficiency basis: " + ("fitted (the measured fits; a device with none at its entry's stated figure)"
                                           if r.efficiency_basis == "fitted" else
                                           "vendor_measured (a stated figure replaced by the same vendor's lowest"
                                           " measured one)") + ".")
        # the legend of every table printed above (the priced one and the one without a price): a † in the
        # second table alone had none
        if any(p["binding_constraint"] == "tpot" and p["hardware_id"] in r.stated
               for p in r.feasible[:top] + r.unpriced[:top]):
            out.append("† decode speed binds at a bandwidth efficiency nobody has measured on this device, its"
                       " architecture or its other engines (the hardware entry's stated figure).")
        from kvreg.plan_levers import lever_lines

        out += lever_lines(r.levers)
    else:
        out.append("No configuration serves this workload.")
        worst = r.infeasible[0] if r.infeasible else None
        if worst is not None and worst["max_context_tokens"] is not None:
            also = ttft_miss(worst) if not worst["reason"].startswith("ttft:") else None
            out.append(f"Best option: {worst['hardware_id']} TP {worst['tp']} ({worst['weights_dtype']} weights,"
                       f" {worst['kv_dtype']} KV): {worst['reason']}" + (f"; {also}" if also else "") + ".")
            if worst["max_context_tokens"] == 0:
                # "longest context: 0 tokens" read as a context limit; say which target no context meets and why
                out.append("No context is short enough: " + "; ".join(long for _, long in no_context_reasons(worst))
                           + f"; one sequence at this context takes {f.ms(worst['single_seq_tpot_s'])}"
                           + (f" per decode step and {f.duration(worst['prefill_floor_s'])} to prefill"
                              if r.ttft_s is not None and worst["prefill_floor_s"] is not None else "")
                           + ".")
            else:
                within = "the TPOT and the TTFT" if r.ttft_s is not None else "the TPOT"
                out.append(f"Longest context one sequence could have there within {within}:"
                           f" {f.tokens(worst['max_context_tokens'])}; one sequence alone decodes at"
                           f" {f.ms(worst['single_seq_tpot_s'])} per token at this context"
                           + (f" and its prefill floor is {f.duration(worst['prefill_floor_s'])}"
                              if r.ttft_s is not None and worst["prefill_floor_s"] is not None else "") + ".")
    if r.unranked:
        out.append(f"Not ranked: no stated bandwidth efficiency for {', '.join(sorted({p['hardware_id'] for p in r.unranked}))};"
                   " their rates are the bandwidth ceiling, not comparable with the expected rates above:")
        out += [f"  {p['hardware_id']} TP {p['tp']} {p['weights_dtype']}/{p['kv_dtype']}: {f.counted(p['replicas'], 'replica')},"
                f" {f.counted(p['gpus'], 'device')}, {f.usd(p['usd_per_hour'])}/hour at the ceiling"
                for p in r.unranked[:top]]
        if len(r.unranked) > top:
            out.append(f"  ({len(r.unranked) - top} more)")
    settings = settings_line(first, r.engine_id) if first else None
    if settings:
        out.append(settings)
    if first is not None and first.get("pool_basis") == "engine":
        out.append(f"Capacity = the sequences {r.engine_id} admits at this context (its KV pool, blocks and"
                   " max_num_seqs): the engine_capacity figure.")
    if r.infeasible:
        out.append("Cannot serve it:")
        groups = _reason_groups(r.infeasible)
        out += groups[:max_reasons]
        if len(groups) > max_reasons:
            out.append(f"  ({len(groups) - max_reasons} more)")
    out += plan_warnings(r)
    return "\n".join(out)
