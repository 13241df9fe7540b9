"""Fresh public vLLM startup logs (session 16, holdout2) through kvreg calibrate: the block arithmetic of
vllm-project/vllm#24577 (A100, Qwen3-0.6B) and the RTX 5090 memory chain of noonghunna/club-3090#1087
(Qwen3.8-27B-FP8, TP 2), each against the log's own figures and a hand-worked term."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvreg.cli import main
from tests.conftest import copy_db

ROOT = Path(__file__).resolve().parents[1]
GIB = 2 ** 30


@pytest.fixture(scope="module")
def rows(tmp_path_factory, built_db):
    r = CliRunner().invoke(main, ["calibrate", "--format", "json", "--project", str(ROOT),
                                  "--db", copy_db(built_db, tmp_path_factory.mktemp("cal2"))])
    assert r.exit_code == 0, r.output
    return {o["observation_id"]: o for o in json.loads(r.output)["observations"]}


def test_qwen3_0_6b_a100_block_arithmetic_is_the_log(rows):
    """vllm#24577: 69.66 GiB of bf16 KV at 28 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 112 KiB a token
    is 652,176 tokens (hand-worked), the log's 652,144 up to the two-decimal print of the pool; the
    concurrency is tokens / 4,096 = 159.21x."""
    o = rows["vllm-gh-24577-a100-qwen3-0.6b"]
    per_token = 28 * 8 * 128 * 2 * 2
    assert per_token == 112 * 1024
    assert int(69.66 * GIB // per_token) == 652_176
    assert o["block_within_rounding"], o
    assert abs(o["block_tokens"] - 652_144) <= 16 * 2          # within two 16-token blocks of the log
    # two blocks (32 tokens) of 4,096 a request plus the 0.005 print rounding of the logged 159.21x
    assert o["block_concurrency"] == pytest.approx(159.21, abs=32 / 4096 + 0.005)


def test_qwen3_0_6b_a100_weights_as_logged(rows):
    """The bf16 checkpoint per rank is the logged "Model loading took 1.1201 GiB" (tied embeddings once)."""
    o = rows["vllm-gh-24577-a100-qwen3-0.6b"]
    assert o["weights_bytes_per_rank"] / GIB == pytest.approx(1.1201, abs=0.01)
    assert abs(o["weights_error_bytes"]) < 0.01 * GIB


def test_rtx_5090_usable_memory_is_the_cuda_total_vllm_logs(rows):
    """club-3090#1087: vLLM prints the CUDA-visible total 31.4 GiB on both RTX 5090s and requests
    0.92 x 31.4 = 28.888 GiB, printed 28.88 GiB (two decimals): kvreg's requested memory is the log's
    within that rounding (it was 0.92 x 32607 MiB = 29.29 GiB from the nvidia-smi total)."""
    o = rows["vllm-gh-club3090-1087"]
    assert o["usable_bytes"] / GIB == pytest.approx(31.4, abs=0.005)
    assert 0.92 * 31.4 == pytest.approx(28.888)
    assert abs(o["requested_error_bytes"]) <= 0.01 * GIB


def test_club3090_1087_pool_is_requested_minus_non_kv_minus_graph_estimate():
    """The log's own split, as the release computes it (available = requested − non-KV − applied CUDA-graph
    estimate, the printed "peak activation" being the transient peak + that estimate): 28.88 − 15.03 (weights +
    non-torch) − 1.46 (transient peak) − 0.13 (estimate) = 12.26 GiB, the "kv cache memory in use" it prints."""
    import yaml
    obs = yaml.safe_load((ROOT / "registry/observations/vllm-gh-club3090-1087.yaml").read_text())
    lg = obs["logged"]
    assert lg["activation_peak_gib"] + lg["cuda_graph_estimated_gib"] == pytest.approx(1.59)   # the printed peak
    assert (lg["requested_memory_gib"] - 15.03 - lg["activation_peak_gib"] - lg["cuda_graph_estimated_gib"]
            == pytest.approx(lg["available_kv_cache_memory_gib"], abs=0.01))


def test_qwen3_8_fp8_checkpoint_is_what_vllm_holds_a_rank(rows, con):
    """Qwen/Qwen3.8-27B-FP8: recipes#810 logs 14.28 GiB of weights a GPU at TP 2. The entry stores the whole
    (2 × 14.28 GiB less twice the bytes every rank holds whole); the split gives back 14.28 a rank, and the
    observations that served this checkpoint (model_hf_id) are priced with it, not the lesson's 27 GB default
    (12.70 GiB a rank)."""
    r = con.execute("SELECT tp, weights_bytes_per_rank, replicated_bytes FROM model_weights_at([1, 2]) "
                    "WHERE checkpoint_id = 'Qwen/Qwen3.8-27B-FP8' ORDER BY tp").fetchall()
    (_, one_rank, replicated), (_, two_ranks, _) = r
    assert two_ranks / GIB == pytest.approx(14.28, abs=0.005)
    assert one_rank - replicated == pytest.approx(2 * (two_ranks - replicated), rel=1e-6)   # all else ÷ 2
    for oid in ("vllm-gh-club3090-1085", "vllm-gh-club3090-1086", "vllm-gh-club3090-1087", "vllm-gh-mitchross-1995"):
        assert rows[oid]["weights_bytes_per_rank"] / GIB == pytest.approx(14.28, abs=0.005), oid
