"""``kvreg fit``: naive vs first-principles capacity for one model on one device.

All arithmetic is in SQL: the table macros ``capacity_at`` and ``capacity_for_pool`` (the
same arithmetic as the ``capacity`` view, which is ``capacity_at`` over the contexts axis), so
any context works; this module picks the rows and lays them out.
"""

from __future__ import annotations

import dataclasses

from kvreg import formats as f


class UsageError(ValueError):
    """A command-line argument names something that does not exist (exit 2)."""


@dataclasses.dataclass
class FitResult:
    """The rows of one fit: ``rows`` has one dict per context (columns of ``capacity``)."""

    model_id: str
    hardware_id: str | None
    engine_id: str
    weights_dtype: str | None
    kv_dtype: str
    tp: int
    kv_pool_bytes: float | None
    rows: list[dict]
    native_context_tokens: int = 0
    min_tp_that_fits: int | None = None
    knobs: dict = dataclasses.field(default_factory=dict)
    # dtypes of this fit the hardware entry does not list as native (hardware_precisions; empty when it lists none)
    non_native_dtypes: list = dataclasses.field(default_factory=list)
    # devices one interconnect domain links (hardware.interconnect_domain_size), when tp exceeds it
    interconnect_domain_size: int | None = None
    # why the engine release does not run (or is not sized on) this device at these precisions (engine_support)
    support_reason: str | None = None
    # --kv-pool with an engine release that has accounting: the engine's blocks and admission are not shown
    # (they follow from the release's own pool), so the fit says the engine was not applied
    engine_not_applied: bool = False
    # an engine-sized fit: why the release's weights per rank differ from first principles' (weights_rank_gap, 038:
    # first_principles_bytes, engine_bytes, vocab_padding_bytes, whole_bytes, buffer_bytes, mla_absorbed_bytes,
    # tensor_rule_bytes)
    weights_gap: dict | None = None
    # the heads do not split at this TP (served_tp_sharding, kvreg/sql/037): the sentence saying so with its arithmetic
    # and the engine code it rests on; None when they split.  An engine release then refuses at load (engine_capacity's
    # refusal 'tp_heads'); a first-principles fit keeps its figures with this as a warning.
    tp_refusal: str | None = None
    # the TP sizes of the axis at which the heads do split (the fix to offer), with tp_refusal
    tp_sizes_that_split: list = dataclasses.field(default_factory=list)


def check_known(con, table: str, column: str, value: str, what: str) -> None:
    """Raise :class:`UsageError` when ``value`` is not in ``table.column``, suggesting the nearest ids.

    ``table`` and ``column`` are fixed identifiers from kvreg's own code, never user input.
    """
    query = f"SELECT DISTINCT {column} FROM {table} ORDER BY 1"
    known = [r[0] for r in con.execute(query).fetchall()]
    # numbers (tp sizes) in numeric order, not as text ("1, 16, 2" reads as a bug)
    known.sort(key=lambda k: (0, int(k), "") if str(k).isdigit() else (1, 0, str(k)))
    if value not in known:
        from kvreg.suggest import near_ids

        near = near_ids(str(value), [str(k) for k in known])
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        # the very query that listed them, so the hint can be pasted as it stands
        listing = (f" (known: {', '.join(known)})" if len(known) <= 12
                   else f' ({len(known)} known; list them with kvreg sql "{query}")')
        raise UsageError(f"unknown {what} {value!r}{hint}{listing}")


def check_servable(con, model: str, command: str = "plan") -> None:
    """Raise :class:`UsageError` when ``model`` is a speculative-decoding draft head (``models.draft_for`` set).

    A draft (an EAGLE head, an MTP head) runs inside its target's engine and KV pool, never alone
    (kvreg/schema/model.py ``ModelEntry.draft_for``); sized alone, its one layer gives thousands of sequences
    per GPU.  The message names the target and how to size it.  ``command`` is ``plan`` or ``fit``.
    """
    row = con.execute("SELECT draft_for FROM models WHERE model_id = ?", [model]).fetchone()
    target = row[0] if row else None
    if target is None:
        return
    how = (f"kvreg plan --model {target} ... --num-speculative-tokens N" if command == "plan"
           else f"kvreg fit {target} HARDWARE --num-speculative-tokens N")
    raise UsageError(f"{model} is a speculative-decoding draft head for {target} (draft_for): it runs inside its"
                     f" target's engine and KV pool, never alone. Size the target: {how}; kvreg does not add the"
                     f" draft's layers and weights there yet (only observed pairings carry them: served_models"
                     f" {target}+{model})")


def dict_rows(cur) -> list[dict]:
    """Every row of an executed cursor as a ``{column: value}`` dict."""
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _check_types(**args) -> None:
    """UsageError for an argument of the wrong type (the Python API passes what it is given: ``tp="2"`` was a
    TypeError deep in :func:`fit`); ids are strings (hardware and weights_dtype may be None), tp a whole number."""
    for name, v in args.items():
        if name == "tp":
            if isinstance(v, bool) or not isinstance(v, int):
                raise UsageError(f"tp must be a whole number (1, 2, 4, 8 ...), got {v!r}")
        elif not (isinstance(v, str) or (v is None and name in ("hardware", "weights_dtype"))):
            raise UsageError(f"{name} must be an id (a string), got {v!r}")


def fit(con, model: str, hardware: str | None, *, engine: str = "first-principles", weights_dtype: str | None = None,
        kv_dtype: str = "bf16", tp: int = 1, contexts: list[int] | None = None,
        kv_pool_bytes: float | None = None, knobs: dict | None = None) -> FitResult:
    """Capacity of ``model`` on ``hardware`` at each context.

    Args:
        con: a connection to a built database.
        model, hardware, engine: registry ids (hardware may be None with ``kv_pool_bytes``).
        weights_dtype: weight precision; default the model's own dtype.
        kv_dtype: KV cache precision.
        tp: tensor-parallel size (per-rank figures).
        contexts: context lengths in tokens, any positive whole counts (on the contexts axis
            or not; beyond the native context they are computed and warned about); default the
            model's contexts ≤ native from the ladder (8Ki, 32Ki, 128Ki) plus its native context.
        kv_pool_bytes: when given, the KV pool per device in bytes ("I have this much
            free"), replacing the hardware/engine budget.
        knobs: engine settings by name (kvreg.plan.KNOBS: gpu_memory_utilization, max_num_seqs,
            max_num_batched_tokens, enforce_eager, num_speculative_tokens, block_size); None or missing = the
            release default; a block size the engine does not accept is a UsageError.  For an engine release with accounting rules the rows are sized on its
            pool and admission (capacity_at: max_seqs = what the engine admits).

    Returns:
        A :class:`FitResult` (rows sorted by context).

    Raises:
        UsageError: an id, dtype or tp value that the database does not know, a context
            that is not a positive whole number of tokens, or an out-of-range setting.
    """
    from kvreg.plan import KNOBS, POOL_KNOBS, check_block_size, check_knobs, knob_params

    _check_types(model=model, hardware=hardware, engine=engine, weights_dtype=weights_dtype, kv_dtype=kv_dtype,
                 tp=tp)
    check_knobs(knobs)
    knob_sql = ", ".join(f"{k} := ?" for k in KNOBS)
    pool_knob_sql = ", ".join(f"{k} := ?" for k in POOL_KNOBS)
    check_known(con, "models", "model_id", model, "model")
    check_servable(con, model, "fit")
    check_known(con, "precisions WHERE for_kv", "dtype", kv_dtype, "KV dtype")
    check_known(con, "tp_sizes", "tp::VARCHAR", str(tp), "tp size")
    if weights_dtype is None:
        weights_dtype = con.execute("SELECT dtype FROM models WHERE model_id = ?", [model]).fetchone()[0]
    if contexts is None:
        contexts = [r[0] for r in con.execute(
            "SELECT context_tokens FROM contexts, models WHERE model_id = ? AND (context_tokens IN (8192, 32768, 131072)"
            " OR context_tokens = native_context_tokens) AND context_tokens <= native_context_tokens ORDER BY 1",
            [model]).fetchall()]
    bad = [c for c in contexts if not isinstance(c, int) or c < 1]
    if bad:
        raise UsageError(f"{f.noun_for(len(bad), 'context').capitalize()} {', '.join(map(str, bad))} {'is not a positive whole token count' if len(bad) == 1 else 'are not positive whole token counts'}")
    # Any context, on the contexts axis or not: the table macros hold the arithmetic the views apply
    # to the axis (kv_sequence_costs_at, capacity_at), so both give the same figures.
    if kv_pool_bytes is not None and not kv_pool_bytes > 0:
        raise UsageError(f"the KV pool must be a positive size, got {kv_pool_bytes:g} bytes")
    if kv_pool_bytes is not None:
        cur = con.execute(
            "SELECT * FROM capacity_for_pool(?, context_list := ?::BIGINT[]) WHERE model_id = ? AND kv_dtype = ?"
            " AND tp = ? ORDER BY context_tokens",
            [kv_pool_bytes, contexts, model, kv_dtype, tp])
    else:
        if hardware is None:
            raise UsageError("give a HARDWARE id or --kv-pool SIZE")
        check_known(con, "hardware", "hardware_id", hardware, "hardware")
        check_known(con, "engines", "engine_id", engine, "engine")
        check_known(con, "precisions WHERE for_weights", "dtype", weights_dtype, "weights dtype")
        check_block_size(con, [engine], (knobs or {}).get("block_size"), model=model)
        cur = con.execute(
            f"SELECT * FROM capacity_at(?::BIGINT[], {knob_sql}) WHERE model_id = ? AND hardware_id = ?"
            " AND engine_id = ? AND weights_dtype = ? AND kv_dtype = ? AND tp = ? ORDER BY context_tokens",
            [contexts, *knob_params(knobs), model, hardware, engine, weights_dtype, kv_dtype, tp])
    rows = dict_rows(cur)
    native = con.execute("SELECT native_context_tokens FROM models WHERE model_id = ?", [model]).fetchone()[0]
    min_tp = None
    if kv_pool_bytes is None and rows and rows[0]["pool_bytes"] < 0:
        min_tp = con.execute(
            f"SELECT min(tp) FROM memory_pools_at({pool_knob_sql}) WHERE model_id = ? AND hardware_id = ?"
            " AND engine_id = ? AND weights_dtype = ? AND pool_bytes > 0",
            [*knob_params(knobs, POOL_KNOBS), model, hardware, engine, weights_dtype]).fetchone()[0]
    non_native, domain = [], None
    if kv_pool_bytes is None:
        listed = {r[0] for r in con.execute("SELECT dtype FROM hardware_precisions WHERE hardware_id = ?",
                                            [hardware]).fetchall()}
        # fp16 and bf16 cost the same bytes; a device listing either runs 16-bit weights
        if listed:
            non_native = [d for d in dict.fromkeys([weights_dtype, kv_dtype])
                          if d not in listed and not (d in ("bf16", "fp16") and listed & {"bf16", "fp16"})]
        size = con.execute("SELECT interconnect_domain_size FROM hardware WHERE hardware_id = ?", [hardware]).fetchone()
        if size and size[0] is not None and tp > size[0]:
            domain = int(size[0])
        support = con.execute("SELECT reason FROM engine_support WHERE engine_id = ? AND hardware_id = ?"
                              " AND weights_dtype = ? AND kv_dtype = ? AND NOT runs",
                              [engine, hardware, weights_dtype, kv_dtype]).fetchone()
    gap = None
    if kv_pool_bytes is None and rows and rows[0].get("pool_basis") == "engine":
        gap = next(iter(dict_rows(con.execute(
            "SELECT * FROM weights_rank_gap([?], for_engine := ?) WHERE model_id = ? AND weights_dtype = ?",
            [tp, engine, model, weights_dtype]))), None)
    refusal, split = tp_refusal(con, model, tp)
    return FitResult(model, hardware, engine, weights_dtype, kv_dtype, tp, kv_pool_bytes, rows, native, min_tp,
                     {k: v for k, v in (knobs or {}).items() if v is not None}, non_native, domain,
                     support[0] if kv_pool_bytes is None and support else None,
                     kv_pool_bytes is not None and _has_accounting(con, engine), gap, refusal, split)


# the code the rule is read from (kvreg/sql/037_tp_sharding.sql, docs/engine.md "TP sizes whose heads do not split")
TP_SPLIT_CITE = ("vLLM QKVParallelLinear, model_executor/layers/linear.py 0.19.0:1010-1017, `divide` asserts;"
                 " SGLang's srt/layers/linear.py, adapted from it")


def tp_refusal(con, model: str, tp: int) -> tuple[str | None, list]:
    """Why no engine loads ``model`` (a registry model or a served set) at ``tp``, and the TP sizes that split.

    Reads ``served_tp_sharding`` and ``tp_sharding_reason`` (kvreg/sql/037_tp_sharding.sql, the one rule); the sentence
    adds the division that is not whole, e.g. ``10 KV heads ÷ TP 4 = 2.5``, or for fewer KV heads than ranks
    ``TP 16 ÷ 10 KV heads = 1.6`` (the replicas each head would need).

    Returns:
        (sentence, [tp, …]): sentence None when the heads split (or the entry states no head count); the list holds
        the axis' TP sizes (tp_sizes) at which they do, ascending.
    """
    row = con.execute("SELECT shards, refused_model_id, attention_heads, bad_kv_heads,"
                      " tp_sharding_reason(attention_heads, bad_kv_heads) FROM served_tp_sharding"
                      " WHERE served_id = ? AND tp = ?", [model, tp]).fetchone()
    if row is None or row[0] is not False:
        return None, []
    _, member, heads, kv, reason = row
    if kv is not None:
        arith = (f"{kv:,} KV heads ÷ TP {tp} = {kv / tp:g}" if kv >= tp
                 else f"TP {tp} ÷ {kv:,} KV heads = {tp / kv:g} replicas of each")
    else:
        arith = f"{heads:,} attention heads ÷ TP {tp} = {heads / tp:g}"
    whose = "" if member == model else f" (its member {member})"
    split = [r[0] for r in con.execute("SELECT tp FROM served_tp_sharding WHERE served_id = ? AND shards ORDER BY tp",
                                       [model]).fetchall()]
    said = reason.replace("its", f"{model}'s{whose}", 1)
    return f"{said}: {arith}, not a whole number ({TP_SPLIT_CITE})", split


def _has_accounting(con, engine: str) -> bool:
    return con.execute("SELECT count(*) FROM engine_accounting WHERE engine_id = ?", [engine]).fetchone()[0] > 0


def _weights_gap_line(r: FitResult) -> str | None:
    """Why the engine's weights per rank are not first principles' checkpoint ÷ TP, term by term (``weights_gap``,
    kvreg/sql/038_weights_rank_gap.sql); None when they agree within 1 MiB or the fit has no such row.  Both
    engines count what a rank allocates while loading (vLLM's "Model loading took", SGLang's load-weight
    "mem usage"), so these bytes are not in their KV pool."""
    g = r.weights_gap
    if not g or abs(g["engine_bytes"] - g["first_principles_bytes"]) < 2**20:
        return None
    terms = [(g["vocab_padding_bytes"], "vocab padded to 64 rows"),
             (g["whole_bytes"], "held whole on every rank (norms, router gates, MLA q_a/kv_a projections, k/v past the KV heads)"),
             (g["buffer_bytes"], "rotary cos/sin cache"),
             (g["mla_absorbed_bytes"], "16-bit copy of the quantized MLA kv_b_proj (absorbed W_UK_T / W_UV)"),
             (g["tensor_rule_bytes"], "the checkpoint's own tensor precisions (16-bit embeddings, norms, scales)")]
    said = " ".join(f"{'+' if b >= 0 else '−'} {f.bytes_binary(abs(b))} {what}" for b, what in terms
                    if abs(b) >= 2**20)
    return (f"Weights per rank as {r.engine_id} loads them: {f.gib(g['engine_bytes'])} ="
            f" {f.gib(g['first_principles_bytes'])} (first principles: the checkpoint ÷ TP {r.tp}) {said}")


def _pool_text(pool_bytes: float) -> str:
    """A pool in GiB and GB; a negative one (the weights do not fit) as the shortfall, never as "-58 GiB"."""
    if pool_bytes < 0:
        return f"none (short by {f.gib(-pool_bytes)}, {f.gb(-pool_bytes)})"
    return f"{f.gib(pool_bytes)} ({f.gb(pool_bytes)})"


def _naive_pool_line(row: dict) -> str:
    """The naive planner's subtraction: marketed memory − the checkpoint's weights ÷ tp (the same for every engine;
    an engine row's own weights figure adds what the release loads beside the checkpoint: memory_pools_at)."""
    naive_w = row["naive_weights_bytes"]
    return (f"Naive pool: marketed {f.gb(row['naive_pool_bytes'] + naive_w)} − weights {f.gb(naive_w)}"
            f" = {_naive_pool_text(row['naive_pool_bytes'])}")


def _naive_pool_text(pool_bytes: float) -> str:
    """The naive pool in GB (the marketed unit), a negative one as the shortfall."""
    return f"none (short by {f.gb(-pool_bytes)})" if pool_bytes < 0 else f.gb(pool_bytes)


def render_fit(r: FitResult) -> str:
    """A terminal table: per-sequence bytes and max concurrency, naive beside first principles."""
    out = []
    where = f"on {r.hardware_id} · engine {r.engine_id} · weights {r.weights_dtype}" if r.kv_pool_bytes is None \
        else "in a given KV pool"
    out.append(f"{r.model_id} {where} · KV {r.kv_dtype} · TP {r.tp}")
    if not r.rows:
        return out[0] + "\n(no rows)"
    first, last = r.rows[0], r.rows[-1]
    # the bounded part grows with context up to the window, so it is shown at the longest context of the table
    at = f"{last['context_tokens']:,} token{'s' if last['context_tokens'] != 1 else ''}"
    out.append(f"Per sequence: growing part {f.bytes_binary(first['growing_bytes'] / first['context_tokens'])}/token"
               f" · bounded (window) part {f.bytes_binary(last['bounded_bytes'])}"
               f" at {at}{' (the longest shown)' if len(r.rows) > 1 else ''}"
               f" · recurrent state {f.bytes_binary(first['state_bytes'])}"
               f" (of which conv {f.bytes_binary(first['conv_state_bytes'])})"
               f" · naive {f.bytes_binary(first['naive_seq_bytes'] / first['context_tokens'])}/token")
    engine_sized = r.kv_pool_bytes is None and first.get("pool_basis") == "engine"
    if engine_sized and r.tp_refusal:
        # the release stops while building the model: no pool, blocks or admission to show (engine_capacity's
        # refusal 'tp_heads'), only why and where it would load
        out.append(f"{r.engine_id} refuses to load {r.model_id} at TP {r.tp}: {r.tp_refusal}.")
        out.append(f"No KV pool, blocks or admission: it stops while building the model; {_tp_fix(r)}.")
        out.extend(w for w in fit_warnings(r) if "refuses to load" not in w)
        return "\n".join(out)
    if engine_sized:
        # one memory model per engine id: the release's own pool arithmetic (engine_memory_pools_at)
        out.append(f"Memory per device ({r.engine_id}'s memory model): usable {f.gib(first['usable_bytes'])}"
                   f" × util {first['gpu_memory_utilization']:g} − weights {f.gib(first['weights_bytes_per_rank'])}"
                   f" ({first['weights_basis']}) − reserve {f.gib(first['reserve_bytes'])}"
                   f" = available KV {_pool_text(first['pool_bytes'])};"
                   " max seqs = what the engine admits")
        gap = _weights_gap_line(r)
        if gap:
            out.append(gap)
        from kvreg.plan import settings_line

        out.append(settings_line(first, r.engine_id))
        out.append(_naive_pool_line(first))
    elif r.kv_pool_bytes is None:
        util = first.get("gpu_memory_utilization")
        util = "" if util is None else f" {util:g}"
        out.append(f"Memory per device: usable {f.gib(first['usable_bytes'])} × util{util}"
                   f" = {f.gib(first['claimed_bytes'])} − reserve {f.gib(first['reserve_bytes'])}"
                   f" − residents {f.gib(first['resident_bytes'])} − weights {f.gib(first['weights_bytes_per_rank'])}"
                   f" ({first['weights_basis']}) = KV pool {_pool_text(first['pool_bytes'])}")
        out.append(_naive_pool_line(first))
    else:
        out.append(f"KV pool (given): {f.gib(r.kv_pool_bytes)} ({f.gb(r.kv_pool_bytes)})")
    header = ("context", "per seq (first principles)", "per seq (naive)",
              "max seqs (engine admits)" if engine_sized else "max seqs", "naive max seqs",
              # the ratio is against the max seqs column: the engine's admission when engine-sized
              "naive ÷ engine" if engine_sized else "naive ÷ fp")
    table = [header]
    for row in r.rows:
        ratio = row["naive_max_seqs"] / row["max_seqs"] if row["max_seqs"] else None
        table.append((f"{row['context_tokens']:,}", f.bytes_binary(row["seq_bytes"]), f.bytes_binary(row["naive_seq_bytes"]),
                      f.count(row["max_seqs"]), f.count(row["naive_max_seqs"]), f.ratio(ratio)))
    widths = [max(len(str(t[i])) for t in table) for i in range(len(header))]
    for i, t in enumerate(table):
        out.append("  ".join(str(c).rjust(w) if j else str(c).ljust(w) for j, (c, w) in enumerate(zip(t, widths))))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    out.extend(fit_warnings(r))
    return "\n".join(out)


def fit_warnings(r: FitResult) -> list[str]:
    """Plain-language warnings: weights that do not fit, contexts beyond native, nothing fitting, an engine release
    that does not run this device at these precisions (engine_support: kvreg/sql/058_engine_support.sql)."""
    out = []
    first = r.rows[0]
    refused = r.tp_refusal and r.kv_pool_bytes is None and first.get("pool_basis") == "engine"
    if refused:
        out.append(f"Warning: {r.engine_id} refuses to load {r.model_id} at TP {r.tp}: {r.tp_refusal}; {_tp_fix(r)}"
                   " (`kvreg plan` does not plan it).")
    elif r.tp_refusal:
        out.append(f"Warning: no engine loads {r.model_id} at TP {r.tp}: {r.tp_refusal}; the figures are first"
                   f" principles as if the heads split, and `kvreg plan` does not plan it; {_tp_fix(r)}.")
    if not refused:   # a refused release stops before it sizes memory: no pool or admission to speak of
        if r.kv_pool_bytes is None and first["pool_bytes"] < 0:
            fix = (f"try --tp {r.min_tp_that_fits}" if r.min_tp_that_fits
                   else "no TP size on the axis fits them; try a smaller --weights-dtype")
            out.append(f"Warning: the weights ({f.gib(first['weights_bytes_per_rank'])} per device) do not fit beside the"
                       f" reserve and residents in {f.gib(first['claimed_bytes'])}: no sequence fits at any context;"
                       f" {fix}.")
        elif all(row["max_seqs"] == 0 for row in r.rows):
            out.append("Warning: not even one sequence fits at any context shown.")
        elif any(row["max_seqs"] == 0 for row in r.rows):
            out.append("Warning: at some contexts not even one sequence fits.")
    if r.kv_pool_bytes is not None and r.hardware_id:
        out.append(f"Note: the given KV pool replaces {r.hardware_id}'s memory budget; the hardware entry is not used.")
    if r.engine_not_applied:
        out.append(f"Note: with --kv-pool the figures are first principles in that pool; {r.engine_id}'s blocks and"
                   " admission are not applied (they follow from the release's own memory budget: drop --kv-pool, or"
                   " give the available KV memory a log prints to engine_capacity_at(available_kv_bytes := …)"
                   " in kvreg sql, docs/sql.md).")
    if r.support_reason:
        out.append(f"Warning: {r.support_reason}; the figures are computed as if it ran, and `kvreg plan` does not"
                   f" plan it.")
    for d in r.non_native_dtypes:
        out.append(f"Warning: {r.hardware_id} does not list {d} as a native precision (hardware_precisions): an engine"
                   f" may run it through other kernels or refuse it; the memory figures assume it runs.")
    if r.interconnect_domain_size is not None:
        out.append(f"Warning: TP {r.tp} is wider than {r.hardware_id}'s interconnect domain"
                   f" ({f.counted(r.interconnect_domain_size, 'device')}); `kvreg plan` does not plan it.")
    beyond = [row["context_tokens"] for row in r.rows if row["context_tokens"] > r.native_context_tokens]
    if beyond:
        out.append(f"Warning: {', '.join(f'{c:,}' for c in beyond)} tokens is beyond {r.model_id}'s native context"
                   f" ({r.native_context_tokens:,} tokens); the model was not trained for it.")
    return out


def _tp_fix(r: FitResult) -> str:
    """The TP sizes to try instead, from ``tp_sizes_that_split`` (tp_sharding, kvreg/sql/037)."""
    if not r.tp_sizes_that_split:
        return "no TP size on the axis splits its heads"
    return f"the heads split at --tp {', '.join(map(str, r.tp_sizes_that_split))}"
