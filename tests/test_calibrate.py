"""kvreg calibrate on the shipped observations: JSON shape, per-release and overall rows, and the
18 vLLM 0.19.0 H100 logs (block arithmetic within print rounding, budget lines as logged)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from tests.conftest import copy_db, one

ROOT = Path(__file__).resolve().parents[1]
GIB = 2 ** 30


@pytest.fixture(scope="module")
def cal(tmp_path_factory, built_db):
    r = CliRunner().invoke(main, ["calibrate", "--format", "json", "--project", str(ROOT),
                                  "--db", copy_db(built_db, tmp_path_factory.mktemp("cal"))])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_json_shape(cal):
    assert cal["format"] == "kvreg-calibration" and cal["version"] == 1
    n = len(list((ROOT / "registry/observations").glob("*.yaml")))
    assert len(cal["observations"]) == n
    overall = [s for s in cal["summary"] if s["overall"]]
    per = [s for s in cal["summary"] if not s["overall"]]
    assert len(overall) == 1 and overall[0]["observations"] == n == sum(s["observations"] for s in per)
    for key in ("block_median_abs_error_pct", "e2e_median_abs_error_pct", "e2e_concurrency_median_abs_error_pct",
                "available_median_abs_error_bytes", "weights_median_abs_error_bytes",
                "activation_median_abs_error_bytes", "non_torch_median_abs_error_bytes",
                "cuda_graph_median_abs_error_bytes", "non_kv_median_abs_error_bytes"):
        assert key in overall[0]
    from kvreg.calibrate import JSON_OBSERVATION_KEYS
    assert list(cal["observations"][0]) == JSON_OBSERVATION_KEYS


def test_overall_median_is_the_median_of_the_rows(cal):
    rows = [o for o in cal["observations"] if o["reproducible"] and o["e2e_error_pct"] is not None]
    overall = next(s for s in cal["summary"] if s["overall"])
    assert overall["e2e_checked"] == len(rows)
    assert overall["e2e_median_abs_error_pct"] == pytest.approx(statistics.median(abs(o["e2e_error_pct"]) for o in rows))
    av = [abs(o["e2e_available_error_bytes"]) for o in cal["observations"]
          if o["reproducible"] and o["e2e_available_error_bytes"] is not None]
    assert overall["available_worst_abs_error_bytes"] == pytest.approx(max(av))


def test_h100_0_19_logs_block_arithmetic_within_print_rounding(cal):
    rows = [o for o in cal["observations"] if o["observation_id"].startswith("v0.19-h100-")]
    assert len(rows) == 18
    predicted = [o for o in rows if o["block_tokens"] is not None]
    assert len(predicted) >= 12                                     # every model already in the registry
    for o in predicted:
        assert o["block_within_rounding"], (o["observation_id"], o["block_tokens"], o["logged_tokens"])
        assert abs(o["block_concurrency_error_pct"]) < 0.2, o["observation_id"]
    for o in rows:   # each unreproduced one says why
        assert o["block_tokens"] is not None or "not in registry" in o["missing"]


def test_h100_0_19_budget_lines_as_logged(cal):
    o = next(x for x in cal["observations"] if x["observation_id"] == "v0.19-h100-gemma-2-9b-tp1")
    assert o["logged_tokens"] == 168880 and o["logged_concurrency"] == 20.6
    assert o["logged_available_kv_bytes"] == pytest.approx(54.12 * GIB)
    assert o["logged_requested_bytes"] == pytest.approx(75.23 * GIB)
    assert o["logged_weights_bytes"] == pytest.approx(17.22 * GIB)
    assert o["logged_activation_bytes"] == pytest.approx(3.65 * GIB)
    assert o["logged_non_torch_bytes"] == pytest.approx(0.25 * GIB)
    assert o["logged_cuda_graph_bytes"] == pytest.approx(1.09 * GIB)
    assert o["logged_non_kv_bytes"] == pytest.approx(21.11 * GIB)
    # H100 SXM usable memory × 0.95 is the logged request to its print rounding (79.19 GiB × 0.95)
    assert abs(o["requested_error_bytes"]) <= 0.005 * GIB
    # kvreg's non-KV budget is its weights + reserve: the error adds up from the terms
    assert o["non_kv_error_bytes"] == pytest.approx(
        o["weights_error_bytes"] + o["activation_error_bytes"] + o["non_torch_error_bytes"]
        + o["e2e_cuda_graph_bytes"] + (o["logged_activation_bytes"] + o["logged_non_torch_bytes"]
                                       + o["logged_weights_bytes"] - o["logged_non_kv_bytes"]), abs=1e3)


def test_markdown_and_table_have_the_overall_row_and_budget_lines(root_db, monkeypatch):
    monkeypatch.setenv("KVREG_PROGRESS", "1")
    r = CliRunner().invoke(main, ["calibrate", "--project", str(ROOT), "--db", root_db])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "(all releases)" in out and "Budget lines per engine release" in out
    # each budget line of the log beside kvreg's error, "logged (predicted − logged)" GiB, in one cell
    row = next(ln for ln in out.splitlines() if ln.startswith("v0.19-h100-gemma-2-9b-tp1 ") and "17.22" in ln)
    assert row.split()[1:] == ["17.22", "(-0.00)", "3.65", "(+0.01)", "0.25", "(+0.00)", "1.09", "(-1.09)",
                               "21.11", "(+0.02)", "-0.02"]
    md = (ROOT / "docs/calibration.md").read_text()
    assert "## JSON" in md and "`kvreg calibrate --format json`" in md


def test_calibrate_table_fits_a_terminal_and_says_why(root_db, monkeypatch):
    """The terminal table was 1,376 characters wide (every column of the Markdown); it keeps the columns a reader
    scans, wraps long headers, lists why an observation is not reproduced below the table, and names the
    formats that hold every column.  Progress goes to stderr only (docs/json.md "Progress")."""
    from kvreg.calibrate import TEXT_WIDTH

    monkeypatch.setenv("KVREG_PROGRESS", "1")
    r = CliRunner().invoke(main, ["calibrate", "--project", str(ROOT), "--db", root_db])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert TEXT_WIDTH == 120 and max(map(len, lines)) <= TEXT_WIDTH
    assert "  vllm-log-14: hardware unknown" in lines        # registry/observations/vllm-log-14.yaml's missing
    assert "… predicting every observation's startup (the calibration view)" in r.stderr
    assert "…" not in r.stdout
    assert lines[-1] == "  --format markdown (docs/calibration.md) or --format json."
    gemma = next(ln for ln in lines if ln.startswith("v0.19-h100-gemma-2-9b-tp1 ") and "168,880" in ln)
    # engine, TP, logged tokens, (a) error %, (b) tokens, (b) error %, (b) available error GiB
    assert gemma.split()[1:] == ["vllm-0.17-0.19", "1", "168,880", "+0.00", "168,832", "-0.03", "-0.02"]


def test_calibration_is_evaluated_once_and_leaves_no_table(root_db):
    """render holds the calibration view's rows in a temp table for its queries (the view ran four times: ~7 s
    CPU each on the shipped registry) and drops it: the connection answers from the view again."""
    import duckdb

    from kvreg.calibrate import _CalibrationOnce, render

    con = duckdb.connect(root_db, read_only=True)
    try:
        with _CalibrationOnce(con):
            assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = 'calibration'"
                               ).fetchone()[0] == 1
            held = con.execute("SELECT * FROM calibration_summary ORDER BY ALL").fetchall()
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone()[0] == 0
        assert con.execute("SELECT * FROM calibration_summary ORDER BY ALL").fetchall() == held
        render(con, "table")
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone()[0] == 0
    finally:
        con.close()


def test_quantized_run_without_a_weights_dtype_says_so_instead_of_a_number(tmp_path):
    """compressed-tensors does not fix the weights dtype: no end-to-end figure from the model's bf16."""
    import shutil

    from tests.test_ingest_safety import FULL

    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    (tmp_path / "registry/models").mkdir(parents=True)
    for ext in (".yaml", ".config.json"):
        shutil.copy(ROOT / f"registry/models/phi-4{ext}", tmp_path / f"registry/models/phi-4{ext}")
    log = tmp_path / "q.log"
    log.write_text(FULL.replace("quantization=None", "quantization=compressed-tensors"))
    r = CliRunner().invoke(main, ["ingest-log", str(log), "--project", str(tmp_path), "--hardware", "h100-sxm-80gb"])
    assert r.exit_code == 0, r.output
    assert "settings.weights_dtype" in r.output and "does not fix the weights dtype" in r.output
    r = CliRunner().invoke(main, ["calibrate", "--format", "json", "--project", str(tmp_path),
                                  "--db", str(tmp_path / "k.duckdb")])
    assert r.exit_code == 0, r.output
    o = json.loads(r.output)["observations"][0]
    assert o["missing"] == "weights dtype unknown (quantization compressed-tensors)"
    assert o["e2e_tokens"] is None and o["e2e_available_kv_bytes"] is None
    assert o["block_within_rounding"] is True and o["block_tokens"] is not None   # (a) needs no weights


def test_every_observation_is_reproduced_or_says_what_is_missing(cal):
    """Issue 14 item 6: each shipped observation resolves to a model, hardware and release (and gets an
    end-to-end figure), or its `missing` names the fact the log does not give."""
    for o in cal["observations"]:
        reproduced = o["e2e_tokens"] is not None or o["e2e_available_kv_bytes"] is not None
        assert reproduced or o["missing"], o["observation_id"]
        if o["missing"]:
            assert not reproduced or not o["reproducible"] or "not in registry" not in o["missing"], o
    covered = [o for o in cal["observations"] if o["e2e_tokens"] is not None or o["e2e_available_kv_bytes"] is not None]
    assert len(covered) >= 30


@pytest.mark.parametrize("basis, expected", [
    # usable 80 GiB, util 0.9, weights 16 GiB, reserve 3 GiB of which non-torch 1 GiB
    ("total", 80 * 0.9 - 16 - 3),                   # vLLM: 53.0
    ("free", (80 - 16 - 3) * 0.9),                  # TRT-LLM: 54.9
    ("free_before_load", (80 - 1) * 0.9 - 16 - 2),  # SGLang: 53.1
])
def test_available_memory_rule_per_basis(con, basis, expected):
    got = con.execute("SELECT engine_available_kv_bytes(?, 80 * 2^30, 0.9, 16 * 2^30, 3 * 2^30, 2^30) / 2^30",
                      [basis]).fetchone()[0]
    assert got == pytest.approx(expected, abs=1e-9)


def test_calibration_end_to_end_is_the_engine_pool_at_the_same_settings(con):
    """One memory model: where an observation sets no knob that changes the reserve, the calibration's
    end-to-end available memory is the engine pool's, row for row (the two once drifted: SGLang's basis).
    The pool prices the precision's default checkpoint, so rows whose log served another one (model_hf_id,
    observation_weights) are left out: the checkpoint is a knob too."""
    rows = con.execute("""
        SELECT c.observation_id, c.e2e_available_kv_bytes, p.available_kv_bytes
        FROM calibration c JOIN observations o USING (observation_id)
        JOIN observation_weights ow USING (observation_id)
        JOIN engine_memory_pools p ON p.engine_id = c.engine_id AND p.model_id = c.served_id
             AND p.hardware_id = c.hardware_id AND p.weights_dtype = c.weights_dtype AND p.tp = c.tp
             AND p.default_batched
        WHERE c.e2e_available_kv_bytes IS NOT NULL AND o.pp = 1 AND o.max_num_seqs IS NULL
          AND o.max_num_batched_tokens IS NULL AND o.gpu_memory_utilization IS NULL
          AND NOT coalesce(o.enforce_eager, false)
          AND NOT EXISTS (SELECT 1 FROM checkpoints ck WHERE ck.model_id = ow.model_id
                          AND ck.checkpoint_id = ow.checkpoint_id AND NOT ck.is_default)""").fetchall()
    assert len(rows) >= 5
    for oid, cal_bytes, pool_bytes in rows:
        assert cal_bytes == pytest.approx(pool_bytes, abs=1.0), oid


def test_calibration_weighs_the_checkpoint_the_log_served():
    """An observation whose model_hf_id names a listed checkpoint is priced with that checkpoint, not the
    precision's default: a second int8 Llama-3.1-8B checkpoint measured 1 GiB larger than the default's rule moves the end-to-end
    available memory by exactly that 1 GiB (TP 1: nothing to split)."""
    from kvreg.build import memory_connection

    c = memory_connection(ROOT)
    try:
        c.execute("""INSERT INTO checkpoints
                     SELECT model_id, 'test/bigger-w8a8', 'test/bigger-w8a8', weights_dtype, listed, false, method,
                            weight_bits, group_size, scale_dtype, zero_points,
                            -- measured bytes hold no buffers: the default's rule bytes without them + 1 GiB
                            (SELECT weights_bytes_per_rank - buffer_bytes FROM model_weights_at([1]) w
                             WHERE w.checkpoint_id = c.checkpoint_id) + 2^30, 'test'
                     FROM checkpoints c WHERE checkpoint_id LIKE 'RedHatAI/Meta-Llama-3.1-8B-Instruct-quan%'
                       AND weights_dtype = 'int8'""")
        base = one(c, "SELECT e2e_available_kv_bytes AS a, weights_bytes_per_rank AS w FROM calibration "
                      "WHERE observation_id = 'v0.19-h100-llama-3.1-8b-w8a8-tp1'")
        c.execute("UPDATE observations SET model_hf_id = 'Test/Bigger-W8A8' "
                  "WHERE observation_id = 'v0.19-h100-llama-3.1-8b-w8a8-tp1'")
        moved = one(c, "SELECT e2e_available_kv_bytes AS a, weights_bytes_per_rank AS w FROM calibration "
                       "WHERE observation_id = 'v0.19-h100-llama-3.1-8b-w8a8-tp1'")
    finally:
        c.close()
    assert moved["w"] - base["w"] == pytest.approx(GIB, abs=1.0)
    assert base["a"] - moved["a"] == pytest.approx(GIB, abs=1.0)
