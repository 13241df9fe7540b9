"""engine_capacity_at at the release defaults computes blocks per request only at the batched settings a release can
default to (kvreg/sql/215 ``release_batched``; 220 passes it when neither batched knob is set): the same rows as the
batched-axis call at each pool's default setting, where every setting of the axis is computed.  md5 over every column
of every row, on the shipped registry's accelerators that default differently (a large GPU, a small one, an SGLang
mem-fraction tier) under releases with one, two and tiered default settings."""

from __future__ import annotations

HARDWARE = ["h100-sxm-80gb", "l4", "mi300x"]
ENGINES = ["vllm-0.33", "vllm-0.17-0.19", "sglang-0.5", "trtllm-pytorch"]
LENS = [4096, 32768, 131072]


def _digest(con, sql: str, params: list) -> tuple[int, str]:
    return con.execute(f"SELECT count(*), md5(string_agg(r::VARCHAR, '|' ORDER BY r::VARCHAR)) FROM ({sql}) r",
                       params).fetchone()


def test_default_call_is_the_axis_call_at_the_default_setting(con):
    got = {r[0] for r in con.execute("SELECT hardware_id FROM hardware UNION SELECT engine_id FROM engines").fetchall()}
    assert not sorted(set(HARDWARE + ENGINES) - got), "test ids no longer in the registry"
    axis = [r[0] for r in con.execute(
        "SELECT DISTINCT t FROM (SELECT unnest([max_num_batched_tokens, max_num_batched_tokens_large_gpu]) AS t "
        "FROM engine_accounting UNION ALL SELECT chunked_prefill_tokens FROM engine_mem_fraction_tiers) "
        "WHERE t IS NOT NULL ORDER BY t").fetchall()]
    assert len(axis) >= 3  # the releases default to different settings: the cut has rows to drop
    default = _digest(con, "SELECT * FROM engine_capacity_at(?::BIGINT[], only_hardware := ?, only_engines := ?)",
                      [LENS, HARDWARE, ENGINES])
    on_axis = _digest(con, "SELECT * FROM engine_capacity_at(?::BIGINT[], batched_axis := ?::BIGINT[], "
                           "only_hardware := ?, only_engines := ?) WHERE default_batched",
                      [LENS, axis, HARDWARE, ENGINES])
    assert default[0] > 1000
    assert default == on_axis
    # and the macro itself: with the flag, exactly the unflagged rows at a release's own settings
    flagged = _digest(con, "SELECT * FROM engine_request_blocks_at(?::BIGINT[], ?::BIGINT[], release_batched := true)",
                      [LENS, axis])
    own = _digest(con, "SELECT r.* FROM engine_request_blocks_at(?::BIGINT[], ?::BIGINT[]) r "
                       "JOIN engine_accounting a ON a.engine_id = r.engine_id "
                       "WHERE r.max_num_batched_tokens IN (a.max_num_batched_tokens, a.max_num_batched_tokens_large_gpu) "
                       "OR r.max_num_batched_tokens IN (SELECT y.chunked_prefill_tokens FROM engine_mem_fraction_tiers y "
                       "WHERE y.engine_id = r.engine_id)", [LENS, axis])
    assert flagged == own and flagged[0] < _digest(
        con, "SELECT * FROM engine_request_blocks_at(?::BIGINT[], ?::BIGINT[])", [LENS, axis])[0]
