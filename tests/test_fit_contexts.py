"""Capacity at any context: one definition of the per-context arithmetic.

The table macros ``kv_sequence_costs_at`` and ``capacity_at`` (and ``capacity_for_pool``'s
``context_list``) hold the arithmetic; the views ``kv_sequence_costs`` and ``capacity`` are those
macros applied to the ``contexts`` axis table.  ``kvreg fit --context`` takes any positive count
(``32K`` = 32,000, ``32Ki`` = 32,768, ``20000``), parsed the same way as ``kvreg plan --context``.
Expected values are worked out by hand below from the registry entries, not read back from kvreg.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from kvreg.fit import UsageError, fit
from kvreg.tables import context_label
from kvreg.units import UnitError, parse_context_tokens
from tests.conftest import copy_db

ROOT = Path(__file__).resolve().parents[1]
KiB, MiB, GiB = 2**10, 2**20, 2**30
LADDER = [2**k for k in range(10, 21)]           # 1Ki … 1Mi

# --- Llama-3.1-70B on h100-sxm-80gb, TP 4, bf16 weights and KV, engine first-principles -------------
# usable 81089 MiB (torch total_memory) × util 1.0 − reserve 6 GiB − weights 70,553,706,496 params × 2 B ÷ 4
L70_WEIGHTS_RANK = 70_553_706_496 * 2 // 4                   # 35,276,853,248 B
L70_POOL = 81089 * MiB - 6 * GiB - L70_WEIGHTS_RANK          # 85,027,979,264 − 6,442,450,944 − 35,276,853,248
L70_NAIVE_POOL = 80 * 10**9 - L70_WEIGHTS_RANK               # marketed 80 GB − weights per rank
# 80 layers × (K + V) × max(1, 8 KV heads ÷ TP 4) × head_dim 128 × 2 B; the naive formula
# 2·L·n_kv·d_h·p ÷ TP = 80 × 2 × 8 × 128 × 2 ÷ 4 gives the same for a dense GQA model
L70_TOKEN = 80 * 2 * 2 * 128 * 2                             # 81,920 B = 80 KiB per token per rank

# --- Qwen3.8-27B on generic-80gb (the budget lesson's card), TP 1, bf16 weights and KV -------------
# usable 79.6 GiB (stored in whole bytes: 85,469,849,190) − reserve 6 GiB − checkpoint 54 GB
Q27_POOL = round(79.6 * GiB) - 6 * GiB - 54 * 10**9          # 25,027,398,246 B
Q27_NAIVE_POOL = 80 * 10**9 - 54 * 10**9                     # 26 GB
Q27_TOKEN = 16 * 2 * 4 * 256 * 2                             # 16 full layers × (K+V) × 4 heads × 256 × 2 B = 64 KiB
Q27_STATE = 48 * 48 * 128 * 128 * 4 + 48 * 3 * 10240 * 2     # 48 DeltaNet layers: 3 MiB fp32 ssm + 60 KiB bf16 conv
# naive: every attention layer (recurrent left out) at the common shape = the same 64 KiB, no state


def test_hand_arithmetic():
    """The worked figures above, spelled out, so a typo in them cannot pass silently."""
    assert (L70_WEIGHTS_RANK, L70_POOL, L70_NAIVE_POOL, L70_TOKEN) == (
        35_276_853_248, 43_308_675_072, 44_723_146_752, 80 * KiB)
    assert Q27_POOL == 25_027_398_246
    assert (Q27_TOKEN, Q27_STATE) == (64 * KiB, 150_994_944 + 2_949_120)


# (model, hardware, tp, context, seq_bytes, max_seqs, naive_max_seqs), each worked out in the comment
CASES = [
    # 81,920 × 32,000 = 2,621,440,000 B; 43,308,675,072 ÷ that = 16.52 → 16; 44,723,146,752 ÷ that = 17.06 → 17
    ("llama-3.1-70b", "h100-sxm-80gb", 4, 32_000, L70_TOKEN * 32_000, 16, 17),
    # 81,920 × 20,000 = 1,638,400,000 B; 26.43 → 26; naive 27.30 → 27
    ("llama-3.1-70b", "h100-sxm-80gb", 4, 20_000, L70_TOKEN * 20_000, 26, 27),
    # 65,536 × 32,000 + 153,944,064 = 2,251,096,064 B; 25,027,398,246 ÷ that = 11.12 → 11;
    # naive 26e9 ÷ 2,097,152,000 = 12.40 → 12
    ("qwen3.8-27b", "generic-80gb", 1, 32_000, Q27_TOKEN * 32_000 + Q27_STATE, 11, 12),
    # 65,536 × 20,000 + 153,944,064 = 1,464,664,064 B; 17.09 → 17; naive 26e9 ÷ 1,310,720,000 = 19.84 → 19
    ("qwen3.8-27b", "generic-80gb", 1, 20_000, Q27_TOKEN * 20_000 + Q27_STATE, 17, 19),
]


@pytest.mark.parametrize("model,hw,tp,context,seq_bytes,max_seqs,naive_max_seqs", CASES)
def test_fit_off_the_contexts_axis(con, model, hw, tp, context, seq_bytes, max_seqs, naive_max_seqs):
    on_axis = con.execute("SELECT count(*) FROM contexts WHERE context_tokens = ?", [context]).fetchone()[0]
    r = fit(con, model, hw, tp=tp, contexts=[context])
    (row,) = r.rows
    assert row["context_tokens"] == context and row["within_native"]
    assert row["seq_bytes"] == seq_bytes
    assert (row["max_seqs"], row["naive_max_seqs"]) == (max_seqs, naive_max_seqs)
    pool = L70_POOL if model == "llama-3.1-70b" else Q27_POOL
    assert row["pool_bytes"] == pool
    if context == 32_000:
        assert not on_axis, "32,000 must stay off the axis for this test to mean anything"


def test_fit_at_32k_equals_32000_and_32ki_is_the_ladder_row(con):
    r = fit(con, "llama-3.1-70b", "h100-sxm-80gb", tp=4, contexts=[parse_context_tokens("32K"),
                                                                     parse_context_tokens("32Ki")])
    assert [(x["context_tokens"], x["context_label"], x["max_seqs"]) for x in r.rows] == [
        (32_000, "32,000", 16), (32_768, "32Ki", 16)]    # 43,308,675,072 ÷ (81,920 × 32,768) = 16.13 → 16


def test_fit_beyond_native_is_computed_and_warned(con):
    from kvreg.fit import fit_warnings

    r = fit(con, "llama-3.1-70b", "h100-sxm-80gb", tp=4, contexts=[200_000])
    (row,) = r.rows
    # 81,920 × 200,000 = 16,384,000,000 B; 43,308,675,072 ÷ that = 2.64 → 2
    assert (row["seq_bytes"], row["max_seqs"], row["within_native"]) == (16_384_000_000, 2, False)
    assert any("200,000 tokens is beyond llama-3.1-70b's native context (131,072 tokens)" in w
               for w in fit_warnings(r))


def test_the_beyond_native_warning_does_not_depend_on_a_sequence_fitting(con):
    # attack trial (issue 15): `--context 1e9` (nothing fits) was said to omit the warning 256Ki shows; both carry it
    from kvreg.fit import fit_warnings

    r = fit(con, "llama-3.1-70b", "h100-sxm-80gb", tp=4, contexts=[10**9])
    assert r.rows[0]["max_seqs"] == 0
    warnings = fit_warnings(r)
    assert "Warning: not even one sequence fits at any context shown." in warnings
    assert any("1,000,000,000 tokens is beyond llama-3.1-70b's native context (131,072 tokens)" in w for w in warnings)


def test_fit_in_a_given_pool_off_the_axis(con):
    # Gemma 4 31B in the seed's 40 GiB pool at 20,000 tokens: 40 KiB/token × 20,000 = 819,200,000 B growing
    # + 800 MiB bounded (sliding window 1,024 < 20,000) = 1,658,060,800 B; 42,949,672,960 ÷ that = 25.9 → 25
    r = fit(con, "gemma-4-31b", None, kv_pool_bytes=40 * GiB, contexts=[20_000])
    (row,) = r.rows
    assert (row["seq_bytes"], row["max_seqs"]) == (40 * KiB * 20_000 + 800 * MiB, 25)


def test_fit_refuses_a_non_positive_context(con):
    with pytest.raises(UsageError, match="^Context 0 is not a positive whole token count$"):
        fit(con, "llama-3.1-70b", "h100-sxm-80gb", contexts=[0])
    with pytest.raises(UsageError, match="^Contexts 0, -5 are not positive whole token counts$"):
        fit(con, "llama-3.1-70b", "h100-sxm-80gb", contexts=[0, -5])


@pytest.mark.parametrize("text,tokens", [("32K", 32_000), ("32Ki", 32_768), ("20000", 20_000), ("1.5K", 1_500),
                                         ("1Mi", 1_048_576), ("128k", 128_000)])
def test_parse_context_tokens(text, tokens):
    assert parse_context_tokens(text) == tokens


@pytest.mark.parametrize("text", ["0", "1.5", "32 GB", "-5", "lots"])
def test_parse_context_tokens_refuses(text):
    with pytest.raises(UnitError):
        parse_context_tokens(text)


# --- the command line --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def db(tmp_path_factory, built_db) -> Path:
    return Path(copy_db(built_db, tmp_path_factory.mktemp("db")))


def run(db: Path, *args: str):
    return CliRunner().invoke(main, [*args, "--project", str(ROOT), "--db", str(db)])


def test_cli_fit_at_32k_and_20000(db):
    r = run(db, "fit", "llama-3.1-70b", "h100-sxm-80gb", "--tp", "4", "--context", "32K", "--context", "20000")
    assert r.exit_code == 0, r.output
    rows = {ln.split()[0]: ln.split() for ln in r.output.splitlines() if ln[:1].isdigit()}
    assert rows["32,000"][-3:-1] == ["16", "17"] and rows["32,000"][1:3] == ["2,500", "MiB"]
    assert rows["20,000"][-3:-1] == ["26", "27"]


@pytest.mark.parametrize("command", [["fit", "qwen3.8-27b", "generic-80gb"],
                                     ["plan", "--model", "qwen3.8-27b", "--users", "1", "--tpot-ms", "50"]])
@pytest.mark.parametrize("context", ["0", "1.5", "8 GB"])
def test_cli_fit_and_plan_refuse_the_same_contexts(db, command, context):
    r = run(db, *command, "--context", context)
    assert r.exit_code == 2, r.output
    assert "'--context'" in r.output


@pytest.mark.parametrize("command", ["fit", "plan"])
def test_help_says_k_is_1000_and_ki_is_1024(command):
    out = CliRunner().invoke(main, [command, "--help"]).output
    flat = " ".join(out.split())
    assert "32K = 32,000 (K is 1,000), 32Ki = 32,768 (Ki is 1,024)" in flat


def test_cli_fit_engine_gives_engine_figures_at_any_context(db):
    # engine_capacity_at (220) holds the block arithmetic at any max_model_len: 32K (off the axis) has
    # engine figures as 32Ki does, and needs more tokens' blocks than 32,000 / 16 rounds to.
    r = run(db, "fit", "gemma-4-31b", "b300", "--weights-dtype", "fp8", "--kv-dtype", "fp8",
            "--engine", "vllm-0.22-0.26", "--context", "32K", "--context", "32Ki")
    assert r.exit_code == 0, r.output
    assert "no engine figures" not in r.output
    engine_rows = [ln for ln in r.output.split("Engine vllm-0.22-0.26:", 1)[1].splitlines() if ln[:1].isdigit()]
    assert [ln.split()[0] for ln in engine_rows] == ["32,000", "32,768"]
    admits = [int(ln.split()[3].replace(",", "")) for ln in engine_rows]
    assert admits[0] >= admits[1] > 0


# --- one definition: the views are the macros over the axis ---------------------------------------

def test_kv_sequence_costs_view_equals_macro_on_the_ladder(con):
    """Offending rows: in the view but not from the macro, or the reverse (every model, kv dtype, tp)."""
    view = "SELECT * FROM kv_sequence_costs WHERE list_contains(?, context_tokens)"
    macro = "SELECT * FROM kv_sequence_costs_at(?)"
    bad = con.execute(f"({view} EXCEPT ALL {macro}) UNION ALL ({macro} EXCEPT ALL {view})",
                      [LADDER, LADDER, LADDER, LADDER]).fetchall()
    assert bad == []
    models = con.execute("SELECT count(DISTINCT model_id) FROM kv_sequence_costs_at(?)", [LADDER]).fetchone()[0]
    assert models == con.execute("SELECT count(*) FROM models").fetchone()[0]


def test_capacity_view_equals_macro_on_the_ladder(con):
    """Offending (model, context) cells: row count or the hash of every column differs."""
    # m (one row per (model, context) cell of the macro) is computed once for both answers: the whole grid is
    # ~50 s of CPU a pass on a 2-core machine (benchmarks/README.md, "Test suite")
    bad, cells = con.execute("""
        WITH v AS (SELECT model_id, context_tokens, count(*) AS n, sum(hash(c)) AS h FROM capacity c
                   WHERE list_contains($1, context_tokens) GROUP BY ALL),
             m AS MATERIALIZED (SELECT model_id, context_tokens, count(*) AS n, sum(hash(c)) AS h
                                FROM capacity_at($1) c GROUP BY ALL),
             offending AS (SELECT * FROM v FULL JOIN m USING (model_id, context_tokens)
                           WHERE v.n IS DISTINCT FROM m.n OR v.h IS DISTINCT FROM m.h)
        SELECT (SELECT list(o) FROM offending o), (SELECT count(DISTINCT (model_id, context_tokens)) FROM m)""",
                             [LADDER]).fetchone()
    assert bad is None   # no offending cell (list() of no rows is NULL)
    assert cells == len(LADDER) * con.execute("SELECT count(*) FROM models").fetchone()[0]


def test_capacity_for_pool_defaults_to_the_axis(con):
    got = con.execute("SELECT count(*), sum(seq_bytes) FROM capacity_for_pool(40 * 2^30)").fetchone()
    assert got == con.execute("SELECT count(*), sum(seq_bytes) FROM kv_sequence_costs").fetchone()


def test_macro_agrees_with_the_decode_read_at_any_context(con):
    """seq_bytes (kv_sequence_costs_at) = kv_read_bytes (roofline's macro) at off-axis contexts; offending rows."""
    contexts = [1, 1000, 20_000, 32_000, 100_000, 3_000_000]
    bad = con.execute("""
        SELECT s.model_id, s.kv_dtype, s.tp, s.context_tokens, s.seq_bytes,
               kv_read_bytes(k.growing_token_bytes, k.bounded_groups, k.state_bytes, s.context_tokens) AS read_bytes
        FROM kv_sequence_costs_at(?) s JOIN decode_coefficients k USING (model_id, kv_dtype, tp)
        WHERE abs(s.seq_bytes - read_bytes) > 1e-9 * s.seq_bytes""", [contexts]).fetchall()
    assert bad == []


def test_macro_drops_bad_contexts_and_duplicates(con):
    got = con.execute("SELECT DISTINCT context_tokens FROM kv_sequence_costs_at([32000, 32000, NULL, 0, -5])"
                      " ORDER BY 1").fetchall()
    assert got == [(32_000,)]


def test_sql_context_label_matches_python(con):
    contexts = [r[0] for r in con.execute("SELECT context_tokens FROM contexts").fetchall()]
    contexts += [1, 1000, 1536, 20_000, 32_000, 1_000_000, 3 * 2**20]
    got = dict(con.execute("SELECT DISTINCT context_tokens, context_label FROM kv_sequence_costs_at(?)",
                           [contexts]).fetchall())
    assert got == {c: context_label(c) for c in contexts}
    axis = dict(con.execute("SELECT context_tokens, label FROM contexts").fetchall())
    assert all(got[c] == label for c, label in axis.items())
