"""logparse on the 18 real vLLM 0.19.0 H100 startup logs: every budget line and setting, with its line.

Expected values are the sweep's own results.csv (parsed independently of kvreg, shared/data), so a
pattern that reads the wrong line or the wrong number fails here.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from kvreg.ingest import infer_release
from kvreg.logparse import LogError, parse_log, parse_speculative

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT.parent / "shared/data/vllm-0.19-h100-startups"   # the raw logs (outside the project)
RESULTS = ROOT / "tests/fixtures/vllm-0.19-h100/results.csv"   # the sweep's own parse, copied (SOURCES.md)
ROWS = list(csv.DictReader(open(RESULTS)))
needs_sweep = pytest.mark.skipif(not (SWEEP / "logs").is_dir(), reason="../shared/data/vllm-0.19-h100-startups absent")

FIGURES = {  # ParsedLog field → results.csv column
    "init_free_memory_gib": "init_free_memory_gib", "total_gpu_memory_gib": "init_total_memory_gib",
    "init_cuda_memory_gib": "init_cuda_memory_gib", "init_non_torch_memory_gib": "init_non_torch_memory_gib",
    "requested_memory_gib": "requested_memory_gib", "model_loading_gib": "weight_memory_gib",
    "weights_memory_gib": "weights_memory_gib", "activation_peak_gib": "activation_memory_gib",
    "non_torch_forward_gib": "non_torch_forward_gib", "non_kv_memory_gib": "total_non_kv_cache_gib",
    "cuda_graph_estimated_gib": "cuda_graph_estimated_gib", "cuda_graph_memory_gib": "cuda_graph_actual_gib",
    "available_kv_cache_memory_gib": "kv_cache_memory_gib", "kv_cache_tokens": "kv_cache_tokens",
    "num_gpu_blocks": "kv_cache_blocks", "max_concurrency": "max_concurrency",
}


@pytest.mark.parametrize("row", ROWS, ids=[r["log_file"][:40] for r in ROWS])
def test_shipped_observations_hold_every_budget_line(row):
    """registry/observations/v0.19-h100-*: the figures match the sweep's parse, and re-parsing the
    stored excerpt (the lines used, numbered) gives them again."""
    import yaml

    hits = [yaml.safe_load(f.read_text()) for f in (ROOT / "registry/observations").glob("v0.19-h100-*.yaml")]
    e = next(x for x in hits if row["log_file"] in x["sources"][0].get("note", ""))
    for field, col in FIGURES.items():
        assert e["logged"][field] == pytest.approx(float(row[col])), (field, col)
    assert (e["settings"]["tp"], e["settings"]["pp"], e["settings"]["dp"]) == (int(row["tp"]), int(row["pp"]),
                                                                                int(row["dp"]))
    assert e["settings"]["max_model_len"] == int(row["max_model_len"])
    assert e["hardware"] == "h100-sxm-80gb" and e["engine"] == "vllm-0.17-0.19" and e["release_confidence"] == "stated"
    again = parse_log("\n".join(ln.partition(": ")[2] for ln in e["excerpt"].splitlines()))
    for field in FIGURES:
        assert getattr(again, field) == e["logged"][field]


@needs_sweep
@pytest.mark.parametrize("row", ROWS, ids=[r["log_file"][:40] for r in ROWS])
def test_every_budget_line_of_the_real_logs(row):
    text = (SWEEP / "logs" / row["log_file"]).read_text()
    p = parse_log(text)
    for field, col in FIGURES.items():
        assert getattr(p, field) == pytest.approx(float(row[col])), (field, col)
    assert p.version == "0.19.0" and p.engine_generation == "V1"
    assert p.model == row["model"]
    a = p.args
    assert (a["tp"], a["pp"], a["dp"]) == (int(row["tp"]), int(row["pp"]), int(row["dp"]))
    assert a["max_model_len"] == int(row["max_model_len"])
    assert a["dtype"] == row["dtype"]
    assert a.get("quantization", "None") == row["quantization"]
    assert a["kv_cache_dtype"] == row["kv_cache_dtype"]
    assert a["gpu_memory_utilization"] == float(row["gpu_memory_utilization"])
    assert a["enforce_eager"] is False and a["speculative_config"] == "None"
    assert (a["max_num_seqs"], a["max_num_batched_tokens"]) == (1024, 8192)   # "Defaulting ..." lines
    # every figure names the line it came from, and that line holds the figure
    lines = text.splitlines()
    for field in FIGURES:
        hit = p.hits[field]
        assert lines[hit.line - 1] == hit.text
    # the excerpt is the lines used, numbered, not the log
    ex = p.excerpt()
    assert len(ex) < 8000 < len(text)
    for row_ in ex.splitlines():
        n, _, t = row_.partition(": ")
        assert lines[int(n) - 1].startswith(t.split(" … [read:")[0])


@needs_sweep
def test_tp_ranks_printing_the_same_figure_are_not_a_conflict():
    text = (SWEEP / "logs/fp8dyn-llama-3-3-70b--h100-80gb--tp4pp1dp1--8192.log").read_text()
    assert text.count("Total non KV cache memory: 21.14GiB") == 4       # one per TP rank
    p = parse_log(text)
    assert p.non_kv_memory_gib == 21.14 and p.notes == []


def test_two_different_token_lines_are_a_conflict_naming_both():
    text = ("(EngineCore pid=1) INFO [kv_cache_utils.py:1319] GPU KV cache size: 126,256 tokens\n"
            "(EngineCore pid=1) INFO x\n"
            "(EngineCore pid=1) INFO [kv_cache_utils.py:1319] GPU KV cache size: 130,000 tokens\n")
    with pytest.raises(LogError) as e:
        parse_log(text)
    assert "line 1 says 126256" in str(e.value) and "line 3 says 130000" in str(e.value)


def test_ranks_that_differ_keep_the_first_and_say_so():
    text = ("(Worker_TP0 pid=1) INFO [gpu_worker.py:435] Memory profiling takes 1 seconds. Total non KV cache "
            "memory: 21.14GiB; torch peak memory increase: 1.97GiB; non-torch forward increase memory: 2.21GiB; "
            "weights memory: 16.96GiB.\n"
            "(Worker_TP1 pid=2) INFO [gpu_worker.py:435] Memory profiling takes 1 seconds. Total non KV cache "
            "memory: 21.20GiB; torch peak memory increase: 1.97GiB; non-torch forward increase memory: 2.27GiB; "
            "weights memory: 16.96GiB.\n")
    p = parse_log(text)
    assert p.non_kv_memory_gib == 21.14 and p.non_torch_forward_gib == 2.21
    assert any("differs between ranks" in n and "line 2" in n for n in p.notes)


def test_tensor_parallel_size_1_in_the_config_line_is_read():
    text = ("(EngineCore pid=9) INFO [core.py:105] Initializing a V1 LLM engine (v0.11.0) with config: "
            "model='Qwen/Qwen3-8B', speculative_config=SpeculativeConfig(method='eagle3', model='x/eagle', "
            "num_spec_tokens=3), tokenizer='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=32768, "
            "tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1, quantization=fp8, "
            "enforce_eager=True, kv_cache_dtype=fp8_e4m3, device_config=cuda\n"
            "(EngineCore pid=9) INFO [kv_cache_utils.py:1] GPU KV cache size: 100,000 tokens\n")
    p = parse_log(text)
    assert p.args["tp"] == 1 and p.args["pp"] == 1 and p.args["max_model_len"] == 32768
    assert p.args["quantization"] == "fp8" and p.args["enforce_eager"] is True
    assert p.args["kv_cache_dtype"] == "fp8_e4m3" and p.version == "0.11.0"
    assert parse_speculative(p.args["speculative_config"]) == {"method": "eagle3", "model": "x/eagle",
                                                               "num_speculative_tokens": 3}
    assert parse_speculative({"method": "mtp", "num_speculative_tokens": 2}) == {"method": "mtp",
                                                                                "num_speculative_tokens": 2}


class _E:
    def __init__(self, first, rule):
        self.engine = "vllm"
        self.accounting = type("A", (), {"release_first": first,
                                         "logged_tokens_rule": type("C", (), {"value": rule})()})()


ENGINES = {"vllm-v0": _E("0.2", "blocks_x_block_size"), "vllm-0.9-0.19": _E("0.9", "blocks_per_group_x_min_block_size"),
           "vllm-0.22-0.26": _E("0.22", "concurrency_x_len")}


def test_release_from_the_version_banner_is_stated():
    p = parse_log("INFO vLLM API server version 0.19.0\n(EngineCore pid=1) INFO GPU KV cache size: 1,600 tokens\n")
    assert infer_release(ENGINES, p)[:2] == ("vllm-0.9-0.19", "stated")


def test_a_version_past_every_registered_release_is_derived_not_stated():
    # trial11 #4: v9.99.0 was mapped to the last range with confidence "stated"; the registry names no release
    # past 0.22 here (0.33 in the shipped engines), so the last range is an assumption
    p = parse_log("INFO vLLM API server version 9.99.0\n(EngineCore pid=1) INFO GPU KV cache size: 1,600 tokens\n")
    eid, conf, why = infer_release(ENGINES, p)
    assert (eid, conf) == ("vllm-0.22-0.26", "derived")
    assert "9.99.0 printed at line 1 is newer than any registered release (newest 0.22)" in why
    for inside in ("0.22.0", "0.22.7.dev3+gabc"):                  # the newest named release itself is stated
        p = parse_log(f"INFO vLLM API server version {inside}\n(EngineCore pid=1) INFO GPU KV cache size: 1,600 tokens\n")
        assert infer_release(ENGINES, p)[:2] == ("vllm-0.22-0.26", "stated")


def test_release_from_the_v0_format():
    p = parse_log("INFO [worker.py:1] # GPU blocks: 1952, # CPU blocks: 2048\n")
    eid, conf, why = infer_release(ENGINES, p)
    assert (eid, conf) == ("vllm-v0", "format") and "line 1" in why


def test_release_from_the_printed_token_rule():
    p = parse_log("(EngineCore pid=1) INFO [kv_cache_utils.py:1] GPU KV cache size: 366,407 tokens\n")
    eid, conf, why = infer_release(ENGINES, p)
    assert (eid, conf) == ("vllm-0.22-0.26", "token-rule") and "not a multiple of 16" in why
    p = parse_log("(EngineCore pid=1) INFO [kv_cache_utils.py:1] GPU KV cache size: 366,400 tokens\n")
    assert infer_release(ENGINES, p)[:2] == ("vllm-0.9-0.19", "token-rule")
    del ENGINES["vllm-0.9-0.19"]
    try:
        ENGINES["vllm-0.8"] = _E("0.8", "blocks_x_block_size")
        ENGINES["vllm-0.9-0.19"] = _E("0.9", "blocks_per_group_x_min_block_size")
        eid, conf, why = infer_release(ENGINES, p)
        assert eid is None and conf is None and "fits vllm-0.8, vllm-0.9-0.19" in why
    finally:
        del ENGINES["vllm-0.8"]


def test_two_kinds_of_line_for_one_figure_keep_the_preferred_and_note():
    text = ("(EngineCore pid=1) INFO [gpu_model_runner.py:6046] Graph capturing finished in 4 secs, took 0.88 GiB\n"
            "(EngineCore pid=1) INFO [gpu_worker.py:597] CUDA graph pool memory: 0.89 GiB (actual), 0.84 GiB "
            "(estimated), difference: 0.05 GiB (5.5%).\n")
    p = parse_log(text)
    assert p.cuda_graph_memory_gib == 0.89 and p.hits["cuda_graph_memory_gib"].line == 2
    assert p.notes == ["cuda_graph_memory_gib: line 1 says 0.88, line 2 says 0.89; kept line 2"]


def test_0_33_prints_tokens_and_concurrency_on_one_line():
    # vllm 0.33.0 v1/core/kv_cache_utils.py:1147 ("%s KV cache size: %s tokens, Maximum concurrency for ...")
    p = parse_log("(EngineCore pid=7) INFO [kv_cache_utils.py:1147] GPU KV cache size: 1,210,272 tokens, "
                  "Maximum concurrency for 8,192 tokens per request: 147.74x\n"
                  "(EngineCore pid=7) INFO [offload.py:1] CPU KV cache size: 99 tokens\n")
    assert (p.kv_cache_tokens, p.max_concurrency_tokens, p.max_concurrency) == (1210272, 8192, 147.74)


def test_v0_memory_profiling_summary_lines():
    # vLLM 0.6-0.10 V0 worker.py: the three-line "Memory profiling takes" report
    p = parse_log("INFO 01-01 [worker.py:1] Memory profiling takes 5.20 seconds\n"
                  "the current vLLM instance can use total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90) "
                  "= 71.27GiB\n"
                  "model weights take 14.99GiB; non_torch_memory takes 0.12GiB; PyTorch activation peak memory takes "
                  "1.26GiB; the rest of the memory reserved for KV Cache is 54.90GiB.\n"
                  "INFO 01-01 [executor_base.py:1] # GPU blocks: 28108, # CPU blocks: 2048\n")
    assert (p.total_gpu_memory_gib, p.weights_memory_gib, p.non_torch_forward_gib, p.activation_peak_gib,
            p.available_kv_cache_memory_gib, p.num_gpu_blocks) == (79.19, 14.99, 0.12, 1.26, 54.90, 28108)
    assert p.args["gpu_memory_utilization"] == 0.90 and p.engine_generation == "V0"


def test_a_decimal_point_in_a_token_count_is_refused_naming_the_line():
    # attack trial (issue 15): "157.936 tokens" (a locale's thousands separator) was read as 157 tokens, 1000x off.
    # vLLM prints the count as f"{num_tokens:,}" (0.19.0 v1/core/kv_cache_utils.py:1319)
    with pytest.raises(LogError, match=r"line 2: kv_cache_tokens '157\.936' has a decimal point"):
        parse_log("INFO vLLM API server version 0.19.0\n"
                  "(EngineCore pid=1) INFO [kv_cache_utils.py:1319] GPU KV cache size: 157.936 tokens\n")
    with pytest.raises(LogError, match=r"line 1: num_gpu_blocks '7891\.5'"):
        parse_log("(EngineCore pid=1) INFO [loggers.py:273] num_gpu_blocks is: 7891.5\n")


def test_separators_only_in_groups_of_three_and_never_in_the_concurrency_factor():
    # "1,20x" was read as 120 (commas deleted): vLLM prints the factor as %.2f ("...: 19.31x"), no separator
    p = parse_log("(EngineCore pid=1) INFO [kv_cache_utils.py:1319] GPU KV cache size: 157,936 tokens\n"
                  "(EngineCore pid=1) INFO [kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per "
                  "request: 1,20x\n")
    assert p.kv_cache_tokens == 157936 and p.max_concurrency is None and p.max_concurrency_tokens is None
    assert p.notes and p.notes[0].startswith("line 2: 'Maximum concurrency for 8,192 tokens per request: 1,20x'")
    # "157,93" is no grouping vLLM prints: the figure is left out, and said so, never read as 15793
    p = parse_log("(EngineCore pid=1) INFO GPU KV cache size: 157,93 tokens\n"
                  "(EngineCore pid=1) INFO Available KV cache memory: 51.63 GiB\n")
    assert p.kv_cache_tokens is None and p.available_kv_cache_memory_gib == 51.63
    assert p.notes[0].startswith("line 1: kv_cache_tokens '157,93' is not a number as vLLM prints one")
    assert parse_log("GPU KV cache size: 1,210,272 tokens\n").kv_cache_tokens == 1210272
