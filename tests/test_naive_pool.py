"""The naive pool is one figure per model, device, weights dtype and TP: marketed − the checkpoint's weights ÷ tp.

An engine release loads more than the checkpoint (vLLM's "Model loading took" counts the rotary cos/sin cache
buffer and vocab padding: model_weights_per_rank, kvreg/sql/035), and its pool subtracts that; the naive planner
knows only the checkpoint, so its pool must not change with the engine (issue 14: 16.06 vs 16.09 GB before).
"""

from __future__ import annotations

from tests.conftest import one


def test_every_engine_gives_the_same_naive_pool(con):
    spread = one(con, "SELECT count(*) AS n, (SELECT count(*) FROM memory_pools) AS rows FROM ("
                      "SELECT model_id, hardware_id, weights_dtype, tp FROM memory_pools "
                      "GROUP BY ALL HAVING count(DISTINCT naive_pool_bytes) > 1)")
    assert spread["n"] == 0 and spread["rows"] > 0


def test_the_naive_weights_are_the_checkpoint_and_the_engine_weights_add_the_rotary_cache(con):
    # llama-3.1-8b bf16: the measured checkpoint, 16,060,522,496 B (model_weights); vLLM loads besides it one
    # cos/sin cache of max_position_embeddings 131,072 × head_dim 128 × 2 B (bf16) = 33,554,432 B.
    rows = con.execute("SELECT engine_id, weights_bytes_per_rank, naive_weights_bytes, naive_pool_bytes, marketed_bytes "
                       "FROM memory_pools WHERE model_id = 'llama-3.1-8b' AND hardware_id = 'h100-sxm-80gb' "
                       "AND weights_dtype = 'bf16' AND tp = 1 ORDER BY engine_id").fetchall()
    by_engine = {r[0]: r[1:] for r in rows}
    assert by_engine["first-principles"][:2] == (16_060_522_496, 16_060_522_496)
    vllm = by_engine["vllm-0.17-0.19"]
    assert vllm[0] - vllm[1] == 131_072 * 128 * 2
    assert vllm[2] == by_engine["first-principles"][2] == 80e9 - 16_060_522_496 == vllm[3] - vllm[1]
