"""Speed across generations: leave-one-architecture-out, the carried bandwidth figure, and the fixed per-step
term of speed_step_fit (kvreg/sql/252, 253, 255, 256) checked against independent arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import one


def test_leave_one_architecture_out_fits_without_any_row_of_it(con):
    # every level of the held-out fit rests on other architectures only: no Blackwell hardware or family key
    keys = {r[0] for r in con.execute("SELECT DISTINCT key FROM speed_fit WHERE holdout = 'architecture:blackwell'"
                                      " AND level IN ('hardware', 'hardware_any', 'architecture', 'architecture_any')"
                                      ).fetchall()}
    assert keys and not keys & {"b200", "gb200", "blackwell"}
    # the pooled figure is the median over the other architectures' GPU evidence (speed_evidence)
    ev = [r[0] for r in con.execute("SELECT efficiency FROM speed_evidence WHERE holdout = ''"
                                    " AND roof = 'memory' AND architecture <> 'blackwell'").fetchall()]
    pooled = one(con, "SELECT efficiency, n FROM speed_fit WHERE holdout = 'architecture:blackwell'"
                      " AND roof = 'memory' AND level = 'all'")
    assert pooled["n"] == len(ev) and pooled["efficiency"] == pytest.approx(float(np.median(ev)))
    # a B200 row left out by architecture falls to the B200 entry's stated 0.45 (hardware/b200.yaml), as an
    # unmeasured device does; its compute figure is carried (nothing stated)
    p = one(con, "SELECT * FROM speed_calibration WHERE mode = 'leave-one-architecture-out'"
                 " AND hardware_id = 'b200' ORDER BY source_id, measurement_idx LIMIT 1")
    assert (p["bandwidth_level"], p["bandwidth_efficiency"]) == ("stated", pytest.approx(0.45))
    assert p["compute_level"] in ("engine", "all")


def test_the_carried_figure_is_the_engine_level_whatever_is_stated(con):
    # MI355X × vLLM: no measurement, 0.45 stated; the carried figure is vLLM's engine level (two architectures)
    e = one(con, "SELECT * FROM speed_efficiency_by_holdout WHERE holdout = '' AND hardware_id = 'mi355x'"
                 " AND engine_family = 'vllm'")
    f = one(con, "SELECT efficiency, n FROM speed_fit WHERE holdout = '' AND roof = 'memory' AND level = 'engine'"
                 " AND key = 'vllm'")
    assert e["bandwidth_level"] == "stated" and e["bandwidth_efficiency"] == pytest.approx(0.45)
    assert e["carried_bandwidth_level"] == "engine"
    assert (e["carried_bandwidth_efficiency"], e["carried_bandwidth_n"]) == (pytest.approx(f["efficiency"]), f["n"])
    # and the carried prediction is expected_step_s (104) at that figure, the rest as used
    c = one(con, "SELECT * FROM speed_calibration WHERE mode = 'leave-one-architecture-out' AND bound = 'memory'"
                 " AND architecture = 'cdna3' ORDER BY source_id, measurement_idx LIMIT 1")
    t = one(con, "SELECT memory_s, compute_s, allreduce_s, output_tokens FROM throughput_ceilings"
                 " WHERE source_id = ? AND measurement_idx = ?", [c["source_id"], c["measurement_idx"]])
    ar = t["allreduce_s"] or 0.0
    step = max((t["memory_s"] + ar) / c["carried_bandwidth_efficiency"], (t["compute_s"] + ar) / c["compute_efficiency"],
               (c["host_request_s"] or 0.0) / t["output_tokens"])
    assert c["carried_predicted_tok_per_s"] == pytest.approx(1 / step)
    assert c["carried_error"] == pytest.approx(1 / step / c["output_tok_per_s"] - 1)


def _evidence(con, holdout, family, roof):
    rows = con.execute(
        "SELECT e.architecture, e.roof_s, l.layers / e.batch, 1 / e.output_tok_per_s FROM speed_evidence e"
        " JOIN (SELECT DISTINCT model_id, kv_dtype, tp, layers FROM decode_coefficients) l"
        "   USING (model_id, kv_dtype, tp)"
        " WHERE e.holdout = ? AND e.engine_family = ? AND e.roof = ?", [holdout, family, roof]).fetchall()
    return rows


@pytest.mark.parametrize("family,roof", [("trtllm", "memory"), ("trtllm", "compute")])
def test_step_term_is_the_least_squares_of_its_rows(con, family, roof):
    # Independently of the SQL closed form: least squares of 1 on (x/y per architecture, z/y), i.e. relative
    # residuals of y = a_k·x + t·z, solved by numpy
    rows = _evidence(con, "", family, roof)
    archs = sorted({r[0] for r in rows})
    A = np.array([[r[1] / r[3] if r[0] == a else 0.0 for a in archs] + [r[2] / r[3]] for r in rows])
    coef, *_ = np.linalg.lstsq(A, np.ones(len(rows)), rcond=None)
    assert coef[-1] > 0                              # a positive term: no clamping at 0 in this case
    fit = {r[0]: r for r in con.execute(
        "SELECT architecture, t_layer_s, efficiency, efficiency_without, n FROM speed_step_fit"
        " WHERE holdout = '' AND engine_family = ? AND roof = ? AND architecture IS NOT NULL", [family, roof]
    ).fetchall()}
    assert set(fit) == set(archs)
    for a, c in zip(archs, coef[:-1]):
        assert fit[a][1] == pytest.approx(coef[-1], rel=1e-6)
        assert fit[a][2] == pytest.approx(1 / c, rel=1e-6)
        # without the term: Σ(x/y)² ÷ Σ(x/y), the relative least squares through the origin
        xs = [r[1] / r[3] for r in rows if r[0] == a]
        assert fit[a][3] == pytest.approx(sum(v * v for v in xs) / sum(xs), rel=1e-9)
        assert fit[a][4] == len(xs)


def test_the_fitted_step_term_cannot_be_a_fixed_cost(con):
    # The verdict of 256's header, by hand on the row it names: MLPerf v5.1 NVIDIA, Llama-2-70B (80 layers) on
    # GB200 at a stated batch of 228 (server: TPOT published).  The compute fit's fixed time per step plus the
    # step's roofline time at efficiency 1 exceeds the step the engine was measured to take.
    f = one(con, "SELECT * FROM speed_step_fit WHERE holdout = '' AND engine_family = 'trtllm'"
                 " AND roof = 'compute' AND architecture IS NULL")
    assert 300e-6 < f["t_layer_s"] < 800e-6         # tens of launches' worth per layer, not a launch
    c = one(con, "SELECT * FROM throughput_ceilings WHERE source_id = 'mlperf-v5.1-nvidia-trtllm'"
                 " AND hardware_id = 'gb200' AND concurrency = 228")
    measured_step = c["batch"] / c["output_tok_per_s"]          # 228 ÷ 7,436.4 tok/s = 30.7 ms
    assert measured_step == pytest.approx(0.03066, rel=1e-3)
    floor = f["t_layer_s"] * 80 + c["batch"] / c["ceiling_tok_per_s"]
    assert floor / measured_step > 1
    assert f["floor_share_max"] == pytest.approx(floor / measured_step) and f["floor_share_source"] == c["source_id"]


def test_step_calibration_predicts_from_the_pooled_fit_without_the_architecture(con):
    s = one(con, "SELECT * FROM speed_step_calibration WHERE architecture = 'ampere' AND roof = 'memory'"
                 " ORDER BY source_id, measurement_idx LIMIT 1")
    f = one(con, "SELECT * FROM speed_step_fit WHERE holdout = 'architecture:ampere' AND engine_family = 'trtllm'"
                 " AND roof = 'memory' AND architecture IS NULL")
    assert "ampere" not in {r[0] for r in _evidence(con, "architecture:ampere", "trtllm", "memory")}
    c = one(con, "SELECT c.*, l.layers FROM throughput_ceilings c JOIN (SELECT DISTINCT model_id, kv_dtype, tp,"
                 " layers FROM decode_coefficients) l USING (model_id, kv_dtype, tp)"
                 " WHERE source_id = ? AND measurement_idx = ?", [s["source_id"], s["measurement_idx"]])
    x = c["memory_s"] + c["allreduce_s"]
    with_term = 1 / (x / f["efficiency"] + f["t_layer_s"] * c["layers"] / c["batch"])
    assert s["error_with_term"] == pytest.approx(with_term / c["output_tok_per_s"] - 1)
    assert s["error_without_term"] == pytest.approx(f["efficiency_without"] / x / c["output_tok_per_s"] - 1)
