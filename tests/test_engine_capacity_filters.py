"""The admission chain's id filters (kvreg/sql/205, 215, 220, 240, 245: only_models / only_hardware / only_engines,
NULL = all) give exactly the unfiltered macro's rows restricted to the lists: they only cut the first tables the chain
reads, so the report and plan queries stop computing the whole registry's admission (issue 12 item 7)."""

from __future__ import annotations

import pytest

# an MLA model, a sliding-window hybrid, a recurrent hybrid with its MTP served set, a dense model with an EAGLE
# draft (its served id differs from the model id), on Hopper, Blackwell and CDNA3, under vLLM (two MLA-backend rule
# sets), SGLang and TensorRT-LLM
MODELS = ["deepseek-v3", "gemma-3-27b", "qwen3.6-27b+qwen3.6-27b-mtp+spec3",
          "llama-3.1-8b+eagle-llama3.1-instruct-8b", "llama-3.1-8b"]
HARDWARE = ["h100-sxm-80gb", "b200", "mi300x"]
ENGINES = ["vllm-0.33", "vllm-0.17-0.19", "sglang-0.5", "trtllm-pytorch"]


def _same(con, filtered: str, unfiltered: str, params: dict) -> int:
    """Rows of ``filtered``; asserts both queries hold the same multiset of rows (EXCEPT ALL both ways)."""
    used = {k: v for k, v in params.items() if f"${k}" in filtered + unfiltered}
    n = con.execute(f"SELECT count(*) FROM ({filtered})", {k: v for k, v in used.items() if f"${k}" in filtered}
                    ).fetchone()[0]
    extra = con.execute(f"SELECT (SELECT count(*) FROM (({unfiltered}) EXCEPT ALL ({filtered}))), "
                        f"(SELECT count(*) FROM (({filtered}) EXCEPT ALL ({unfiltered})))", used).fetchone()
    assert extra == (0, 0), f"rows only in the unfiltered / only in the filtered query: {extra}"
    return n


@pytest.fixture(scope="module")
def lists(con):
    got = {r[0] for r in con.execute("SELECT served_id FROM served_models UNION SELECT hardware_id FROM hardware "
                                     "UNION SELECT engine_id FROM engines").fetchall()}
    missing = sorted(set(MODELS + HARDWARE + ENGINES) - got)
    assert not missing, f"test ids no longer in the registry: {missing}"
    return {"m": MODELS, "h": HARDWARE, "e": ENGINES}


def test_engine_capacity_at_filtered_is_the_unfiltered_slice(con, lists):
    n = _same(con,
              "SELECT * FROM engine_capacity_at([32768], only_models := $m, only_hardware := $h, only_engines := $e)",
              "SELECT * FROM engine_capacity_at([32768]) WHERE list_contains($m, model_id) "
              "AND list_contains($h, hardware_id) AND list_contains($e, engine_id)", lists)
    # every model × device × release of the slice has rows (all three batched defaults' worth at most)
    assert n >= len(MODELS) * len(HARDWARE) * len(ENGINES)
    keys = con.execute("SELECT count(DISTINCT (model_id, hardware_id, engine_id)) FROM engine_capacity_at([32768], "
                       "only_models := $m, only_hardware := $h, only_engines := $e)", lists).fetchone()[0]
    assert keys == len(MODELS) * len(HARDWARE) * len(ENGINES)


def test_engine_capacity_at_given_memory_filtered_is_the_unfiltered_slice(con, lists):
    n = _same(con,
              "SELECT * FROM engine_capacity_at([32768], available_kv_bytes := 50 * 2^30, only_models := $m, "
              "only_engines := $e)",
              "SELECT * FROM engine_capacity_at([32768], available_kv_bytes := 50 * 2^30) "
              "WHERE list_contains($m, model_id) AND list_contains($e, engine_id)", lists)
    assert n > 0


def test_capacity_at_filtered_is_the_unfiltered_slice(con, lists):
    n = _same(con,
              "SELECT * FROM capacity_at([32768], only_models := $m, only_hardware := $h)",
              "SELECT * FROM capacity_at([32768]) WHERE list_contains($m, model_id) AND list_contains($h, hardware_id)",
              lists)
    engines = con.execute("SELECT count(DISTINCT engine_id) FROM capacity_at([32768], only_models := $m, "
                          "only_hardware := $h) WHERE pool_basis = 'engine'", {"m": MODELS, "h": HARDWARE}).fetchone()[0]
    assert n > 0 and engines >= len(ENGINES)   # engine rows (the filtered admission) really compared


def test_memory_pools_at_filtered_is_the_unfiltered_slice(con, lists):
    n = _same(con, "SELECT * FROM memory_pools_at(only_models := $m, only_hardware := $h)",
              "SELECT * FROM memory_pools WHERE list_contains($m, model_id) AND list_contains($h, hardware_id)", lists)
    assert n > 0


@pytest.mark.parametrize("engines", [["first-principles"], ["vllm-0.33"], ["first-principles", "sglang-0.5"]])
def test_capacity_at_only_engines_is_the_unfiltered_slice(con, lists, engines):
    # one id takes in_ids' equality form (007: the branch a first-principles plan never reads is pruned), two the
    # list form; both must keep exactly the unfiltered macro's rows of those releases, nothing else
    params = dict(lists, e=engines)
    n = _same(con, "SELECT * FROM capacity_at([32768], only_models := $m, only_hardware := $h, only_engines := $e)",
              "SELECT * FROM capacity_at([32768], only_models := $m, only_hardware := $h) "
              "WHERE list_contains($e, engine_id)", params)
    got = {r[0] for r in con.execute("SELECT DISTINCT engine_id FROM capacity_at([32768], only_models := $m, "
                                     "only_hardware := $h, only_engines := $e)", params).fetchall()}
    assert n > 0 and got == set(engines)


def test_memory_pools_at_only_engines_is_the_unfiltered_slice(con, lists):
    params = dict(lists, e=["first-principles", "vllm-0.17-0.19"])
    n = _same(con, "SELECT * FROM memory_pools_at(only_models := $m, only_engines := $e)",
              "SELECT * FROM memory_pools WHERE list_contains($m, model_id) AND list_contains($e, engine_id)", params)
    assert n > 0


def test_in_ids_is_list_contains(con):
    # NULL = no filter; one id (the equality form), several, none, and a miss
    assert con.execute("SELECT in_ids(NULL, 'a'), in_ids(['a'], 'a'), in_ids(['a'], 'b'), in_ids(['a', 'b'], 'b'), "
                       "in_ids(['a', 'b'], 'c'), in_ids([]::VARCHAR[], 'a')").fetchone() \
        == (True, True, False, True, False, False)
