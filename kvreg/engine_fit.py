"""The engine section of ``kvreg fit --engine <release>``: what the release logs and admits, and why.

All numbers come from the ``engine_capacity`` view (default max_num_batched_tokens
for the device) and the quirk sentences from ``engine_quirks`` (engine data); this
module only picks rows and lays them out.
"""

from __future__ import annotations

from kvreg import formats as f
from kvreg.fit import dict_rows

QUIRK_COLUMNS = ("sliding_stored_as_full", "chunked_stored_as_full", "grouped_min_block_report",
                 "padding_layers_wasted", "recurrent_page_alignment", "recurrent_outside_pool",
                 "k_eq_v_stored_twice", "mla_block_size", "swa_pool_ratio", "does_not_start", "sliding_prefill_reserve")
_TRIGGER = {"padding_layers": "padding_layers_wasted"}


def has_accounting(con, engine: str) -> bool:
    """True when ``engine`` is a release range with accounting data (not first-principles)."""
    return con.execute("SELECT count(*) FROM engine_accounting WHERE engine_id = ?", [engine]).fetchone()[0] > 0


def known_engines(con) -> list[str]:
    """Engine release ids with accounting, sorted."""
    return [r[0] for r in con.execute("SELECT engine_id FROM engine_accounting ORDER BY 1").fetchall()]


def engine_fit(con, model: str, hardware: str, engine: str, weights_dtype: str, kv_dtype: str, tp: int,
               contexts: list[int]) -> tuple[list[dict], list[str]]:
    """Engine rows (one per context that is on the max_model_len axis) and the quirks that apply.

    Returns:
        (rows of ``engine_capacity`` as dicts, quirk sentences whose trigger is true in any row).
    """
    cur = con.execute(
        "SELECT * FROM engine_capacity WHERE model_id = ? AND hardware_id = ? AND engine_id = ? AND weights_dtype = ?"
        " AND kv_dtype = ? AND tp = ? AND default_batched AND list_contains(?, max_model_len) ORDER BY max_model_len",
        [model, hardware, engine, weights_dtype, kv_dtype, tp, contexts])
    rows = dict_rows(cur)
    quirks = []
    for trigger, text in con.execute("SELECT trigger, text FROM engine_quirks WHERE engine_id = ? ORDER BY quirk_idx",
                                     [engine]).fetchall():
        col = _TRIGGER.get(trigger, trigger)
        if any(r.get(col) for r in rows):
            quirks.append(text)
    return rows, quirks


def off_axis_note(con, engine: str, contexts: list[int]) -> str | None:
    """A sentence naming the contexts the engine figures skip and the max_model_len axis they use.

    The engine views (engine_capacity, 220) are computed on the ``max_model_lens`` axis table
    only — the block arithmetic per request depends on max_model_len — so a context off that
    axis (``kvreg fit --context 32K``) has first-principles figures but no engine figures.

    Returns:
        None when every context is on the axis, else the sentence.
    """
    axis = [r[0] for r in con.execute("SELECT max_model_len FROM max_model_lens ORDER BY 1").fetchall()]
    missing = sorted(set(contexts) - set(axis))
    if not missing:
        return None
    return (f"Engine {engine}: no engine figures at {', '.join(f'{c:,}' for c in missing)} tokens — the engine"
            f" views are computed on the max_model_len axis only ({', '.join(f'{c:,}' for c in axis)} tokens);"
            " pass one of those with --context for the engine's figures.")


def render_engine(engine: str, rows: list[dict], quirks: list[str], fp_rows: list[dict],
                  note: str | None = None) -> str:
    """Engine figures beside naive and first principles, one line per context, then the quirks named.

    ``note`` (from :func:`off_axis_note`) is printed first: contexts without engine figures.
    """
    if not rows:
        return note or f"Engine {engine}: no rows for this configuration"
    r0 = rows[0]
    out = [f"Engine {engine}: usable {f.gib(r0['usable_bytes'])} × util {r0['gpu_memory_utilization']:g}"
           f" − weights {f.gib(r0['weights_bytes'])} − reserve {f.gib(r0['reserve_bytes'])}"
           f" (max_num_batched_tokens {r0['max_num_batched_tokens']:,}, max_num_seqs {r0['max_num_seqs']:,})"
           f" = available KV {f.gib(r0['available_kv_bytes'])}",
           f"Layout: block {r0['block_size_tokens']} tokens · page {f.bytes_binary(r0['page_bytes'])} · "
           f"{r0['num_groups']} group(s) × {r0['group_size']} layers · {r0['padding_layers']} padding layers · "
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
                      f"{r['logged_max_concurrency']:,.2f}x", f.ratio(r["first_principles_ratio"])))
    widths = [max(len(str(t[i])) for t in table) for i in range(len(header))]
    for i, t in enumerate(table):
        out.append("  ".join(str(c).rjust(w) if j else str(c).ljust(w) for j, (c, w) in enumerate(zip(t, widths))))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    out.append("First principles here use the engine's available KV memory, so the ratio is the accounting alone.")
    if note:
        out.append(note)
    if quirks:
        out.append("Why the engine figure differs:")
        out.extend(f"  - {q}" for q in quirks)
    return "\n".join(out)
