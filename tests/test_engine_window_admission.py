"""What a vLLM V1 release keeps running for a model with sliding-window layers: its scheduler frees the blocks behind
the window as a request decodes (SlidingWindowManager.remove_skipped_blocks, accounting.frees_out_of_window_blocks), so
only the request whose prefill chunk is in flight holds the start-up figure's worst case, cdiv(min(W − 1 + T, L), bs) + 1
blocks per sliding group (kvreg/sql/213 engine_running_concurrency, 215 running_blocks_per_request).

Hand-worked on gpt-oss-20b in bf16 with 10 GiB of given KV memory at max_model_len 32,768: 12 sliding (W = 128) and 12
full layers, 8 KV heads × head_dim 64, so a layer's page for a 16-token block is 16 × 8 × 64 × 2 (K, V) × 2 B = 32 KiB and
a block of the two 12-layer groups 12 × 32 KiB = 384 KiB; 10 GiB ÷ 384 KiB = 27,306 blocks.
"""

from __future__ import annotations

import pytest

GIB = 2**30


def rows(con, engine: str, model: str = "gpt-oss-20b", available: int = 10 * GIB, context: int = 32768):
    cur = con.execute(
        "SELECT * FROM engine_capacity_at([?], available_kv_bytes := ?) WHERE model_id = ? AND kv_dtype = 'bf16'"
        " AND tp = 1 AND default_batched AND engine_id = ?", [context, available, model, engine])
    cols = [d[0] for d in cur.description]
    (r,) = cur.fetchall()
    return dict(zip(cols, r))


@pytest.mark.parametrize("engine, t, null_block", [
    # 0.22-0.26 at the small-GPU default T = 2,048; the null block is not left out (null_block_in_fit_check false)
    ("vllm-0.22-0.26", 2048, 0),
    # 0.33: async scheduling doubles T in the window formula (2 × 2,048) and the null block is left out
    ("vllm-0.33", 4096, 1),
])
def test_sliding_groups_are_charged_the_window_once_a_request_decodes(con, engine, t, null_block):
    r = rows(con, engine)
    assert (r["block_size_tokens"], r["num_groups"], r["block_bytes"]) == (16, 2, 12 * 32768)
    assert r["num_blocks"] == 10 * GIB // (12 * 32768) == 27306
    full = 32768 // 16                                   # 2,048 blocks
    worst = -(-(128 - 1 + t) // 16) + 1                  # the start-up figure's sliding group
    running = -(-(128 - 1) // 16) + 1                    # 8 + 1 = 9 blocks once decoding
    assert (r["blocks_per_request"], r["running_blocks_per_request"]) == (full + worst, full + running)
    assert r["logged_max_concurrency"] == pytest.approx(27306 / (full + worst))
    n = (27306 - null_block - (full + worst) + (full + running)) / (full + running)
    assert r["running_concurrency"] == pytest.approx(n)
    assert r["admitted_seqs"] == int(n) == 13 > int(r["logged_max_concurrency"])


def test_releases_without_window_freeing_admit_their_logged_figure(con):
    # vLLM 0.8 stores a model mixing sliding and full layers as full attention (sliding_as_full when_mixed): one group,
    # 2,048 blocks a request, nothing to free; SGLang sizes its sliding pool apart (its own rule) and is unchanged.
    for engine in ("vllm-0.8", "sglang-0.5"):
        r = rows(con, engine)
        assert r["running_concurrency"] == r["logged_max_concurrency"]
        assert r["admitted_seqs"] == int(r["logged_max_concurrency"])
    assert rows(con, "vllm-0.8")["running_blocks_per_request"] == rows(con, "vllm-0.8")["blocks_per_request"] == 2048


def test_full_attention_models_are_unchanged(con):
    # Llama 3.1 8B has no window-bounded layer: running = blocks_per_request, the logged concurrency stands
    r = rows(con, "vllm-0.33", model="llama-3.1-8b")
    assert r["running_blocks_per_request"] == r["blocks_per_request"] == 2048
    assert r["running_concurrency"] == r["logged_max_concurrency"]


def test_the_rule_is_release_data(con):
    frees = dict(con.execute("SELECT engine_id, frees_out_of_window_blocks FROM engine_accounting").fetchall())
    assert {e for e, f in frees.items() if f} == {"vllm-0.9-0.16", "vllm-0.17-0.19", "vllm-0.20", "vllm-0.21",
                                                  "vllm-0.22-0.26", "vllm-0.33"}
