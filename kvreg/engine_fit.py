"""The engine section of ``kvreg fit --engine <release>``: what the release logs and admits, and why.

All numbers come from the ``engine_capacity_at`` table macro (kvreg/sql/220_engine_capacity.sql: the
``engine_capacity`` view is that macro over the axis tables, so ``kvreg sql`` on the view and this
section agree) at any context, with the engine settings the user gave (None = the release default for
the device), and the quirk sentences from ``engine_quirks`` (engine data); this module only picks rows
and lays them out.
"""

from __future__ import annotations

from kvreg import formats as f
from kvreg.fit import dict_rows

QUIRK_COLUMNS = ("sliding_stored_as_full", "chunked_stored_as_full", "grouped_min_block_report",
                 "padding_layers_wasted", "recurrent_page_alignment", "recurrent_outside_pool",
                 "k_eq_v_stored_twice", "mla_block_size", "swa_pool_ratio", "does_not_start", "request_len_capped",
                 "sliding_prefill_reserve")
_TRIGGER = {"padding_layers": "padding_layers_wasted"}


def has_accounting(con, engine: str) -> bool:
    """True when ``engine`` is a release range with accounting data (not first-principles)."""
    return con.execute("SELECT count(*) FROM engine_accounting WHERE engine_id = ?", [engine]).fetchone()[0] > 0


def known_engines(con) -> list[str]:
    """Engine release ids with accounting, sorted."""
    return [r[0] for r in con.execute("SELECT engine_id FROM engine_accounting ORDER BY 1").fetchall()]


def engine_fit(con, model: str, hardware: str, engine: str, weights_dtype: str, kv_dtype: str, tp: int,
               contexts: list[int], knobs: dict | None = None) -> tuple[list[dict], list[str]]:
    """Engine rows (one per context, any positive context) and the quirks that apply.

    Args:
        con: a connection to a built database.
        model, hardware, engine, weights_dtype, kv_dtype, tp: one scenario (registry ids).
        contexts: max_model_len values, tokens.
        knobs: engine settings by name (kvreg.plan.KNOBS); None or missing = the release default.

    Returns:
        (rows of ``engine_capacity_at(contexts, knobs)`` as dicts sorted by max_model_len, quirk sentences
        whose trigger is true in any row).
    """
    from kvreg.plan import KNOBS, knob_params

    cur = con.execute(
        f"SELECT * FROM engine_capacity_at(?::BIGINT[], {', '.join(f'{k} := ?' for k in KNOBS)})"
        " WHERE model_id = ? AND hardware_id = ? AND engine_id = ? AND weights_dtype = ? AND kv_dtype = ? AND tp = ?"
        " ORDER BY max_model_len",
        [contexts, *knob_params(knobs), model, hardware, engine, weights_dtype, kv_dtype, tp])
    rows = dict_rows(cur)
    quirks = []
    if not rows:
        quirks += unmodelled_layout(con, model, engine, kv_dtype)
    for trigger, text in con.execute("SELECT trigger, text FROM engine_quirks WHERE engine_id = ? ORDER BY quirk_idx",
                                     [engine]).fetchall():
        col = _TRIGGER.get(trigger, trigger)
        if any(r.get(col) for r in rows):
            quirks.append(text)
    return rows, quirks


def tp_heads_quirk(con, row):
    """The report's quirk row for the refusal ``tp_heads`` (engine_quirks.sql: text NULL), with its sentence said of
    the model's own numbers: the heads, the division at the first listed TP that is not whole, and the TP sizes at
    which they split — the sentence ``kvreg fit`` prints (:func:`kvreg.fit.tp_refusal`, one builder).  Any other
    row is returned as it is.  ``row``: a namedtuple with model_id, engine_id, trigger, text, at_tp."""
    from kvreg.fit import tp_refusal

    if row.trigger != "tp_heads":
        return row
    said, split = tp_refusal(con, row.model_id, row.at_tp)
    where = (f"the heads split at TP {', '.join(map(str, split))}" if split
             else "no TP size on the axis splits its heads")
    return row._replace(text=f"the engine refuses to load {row.model_id} at TP {row.at_tp} (it stops while building"
                             f" the model, before any KV pool): {said}; {where}")


def unmodelled_layout(con, model: str, engine: str, kv_dtype: str) -> list[str]:
    """Why a model with compressed attention (a full group with ``compress``: DeepSeek-V4) has no engine row:
    the release does not model that layout (``accounting.compressed_mla``) or not at this KV dtype; [] otherwise."""
    compressed = con.execute("SELECT count(*) FROM layer_groups WHERE model_id = ? AND compress_tokens IS NOT NULL",
                             [model]).fetchone()[0]
    if not compressed:
        return []
    where = ", ".join(f"{e} (KV {d})" for e, d in con.execute(
        "SELECT engine_id, compressed_kv_dtypes FROM engine_accounting WHERE compressed_mla_modelled ORDER BY 1"
    ).fetchall()) or "none"
    return [f"{model} has compressed attention (DeepSeek-V4): {engine} gives no figure for it at KV {kv_dtype}; "
            f"the engine family models that layout only where accounting.compressed_mla is given: {where} "
            "(docs/engine.md \"DeepSeek-V4: layer tuples\")"]


def render_engine(engine: str, rows: list[dict], quirks: list[str], fp_rows: list[dict]) -> str:
    """Engine figures beside naive and first principles, one line per context, then the quirks named.

    The settings used are not repeated here: the fit above, sized on the same release and knobs, already
    prints them (``kvreg fit`` only adds this section for an engine-sized fit, kvreg/cli.py)."""
    if not rows:
        return f"Engine {engine}: no rows for this configuration" + "".join(f"\n  - {q}" for q in quirks)
    r0 = rows[0]
    out = [f"Engine {engine}: usable {f.gib(r0['usable_bytes'])} × util {r0['gpu_memory_utilization']:g}"
           f" − weights {f.gib(r0['weights_bytes_per_rank'])} − reserve {f.gib(r0['reserve_bytes'])}"
           f" (max_num_batched_tokens {r0['max_num_batched_tokens']:,}, max_num_seqs {r0['max_num_seqs']:,})"
           f" = available KV {f.gib(r0['available_kv_bytes'])}",
           f"Layout: block {r0['block_size_tokens']} tokens · page {f.bytes_binary(r0['page_bytes'])} · "
           f"{f.counted(r0['num_groups'], 'group')} × {f.counted(r0['group_size'], 'layer')} ·"
           f" {f.counted(r0['padding_layers'], 'padding layer')} · "
           f"{f.count(r0['num_blocks'])} blocks"]
    naive = {r["context_tokens"]: r for r in fp_rows}
    header = ("context", "naive max seqs", "first-principles seqs", "engine admits", "first-principles tokens",
              "engine logged tokens", "engine concurrency", "fp ÷ engine")
    table = [header]
    for r in rows:
        n = naive.get(r["max_model_len"])
        table.append((f"{r['max_model_len']:,}", f.count(n["naive_max_seqs"]) if n else "n/a",
                      f.count(r["first_principles_seqs"]), f.count(r["admitted_seqs"]),
                      f.count(r["first_principles_tokens"]), f.count(r["logged_kv_tokens"]),
                      f.ratio(r['logged_max_concurrency']), f.ratio(r["first_principles_ratio"])))
    widths = [max(len(str(t[i])) for t in table) for i in range(len(header))]
    for i, t in enumerate(table):
        out.append("  ".join(str(c).rjust(w) if j else str(c).ljust(w) for j, (c, w) in enumerate(zip(t, widths))))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    out.append("First principles here use the engine's available KV memory, so the ratio is the accounting alone.")
    if quirks:
        out.append("Why the engine figure differs:")
        out.extend(f"  - {q}" for q in quirks)
    return "\n".join(out)
