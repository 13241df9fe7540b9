"""Why the naive plan is wrong, per explanation kind (naive_gap.sql + _naive_gap.html.j2): each sentence
names the term that decides and prints the scenario's own numbers."""

from __future__ import annotations

import html as htmllib
import re

import pytest
import yaml

from tests.report_tools import copy_project

REPORTS = {
    # H100 TP 8, fp8: Qwen3-235B's 4 KV heads are replicated across 8 ranks; gpt-oss keeps W = 128 tokens;
    # Gemma 4 keeps W = 1,024; Llama 4 Scout's chunks C = 8,192 against vLLM storing them in full.
    "gaps-tp8": dict(models=["qwen3-235b-a22b", "gpt-oss-120b", "gemma-4-31b", "llama-4-scout-17b-16e"],
                     hardware=["h100-sxm-80gb"], engines=["vllm-0.33"], weights_dtypes=["fp8"], kv_dtypes=["fp8"],
                     tp=[8], contexts=["32Ki"], workload={"users": 200, "context": "32Ki", "tpot_ms": 50}),
    # B200 bf16 at 8Ki: DeepSeek-V3's MLA latent; Qwen3.6's recurrent state under first principles and the
    # engine admission under vLLM.
    "gaps-b200": dict(models=["deepseek-v3", "qwen3.6-27b"], hardware=["b200"], engines=["vllm-0.33"],
                      weights_dtypes=["bf16"], kv_dtypes=["bf16"], tp=[1, 8], contexts=["8Ki"],
                      workload={"users": 400, "context": "8Ki", "tpot_ms": 100}),
    # DeepSeek-V3 in fp8 on B200 TP 8: the weights leave a real pool, so the MLA latent decides the gap
    # (in bf16 the 1.34 TB of weights leave under 1 GiB per device and the pool term decides instead).
    "gaps-mla": dict(models=["deepseek-v3"], hardware=["b200"], engines=["vllm-0.33"],
                     weights_dtypes=["fp8"], kv_dtypes=["bf16"], tp=[8], contexts=["8Ki"],
                     workload={"users": 400, "context": "8Ki", "tpot_ms": 100}),
    "gaps-state": dict(models=["qwen3.6-27b"], hardware=["b200"], engines=["first-principles"],
                       weights_dtypes=["bf16"], kv_dtypes=["bf16"], tp=[1], contexts=["8Ki"],
                       workload={"users": 400, "context": "8Ki", "tpot_ms": 100}),
    # Qwen3 8B at a 50 ms TPOT on an MI300X (192 GB): decode speed, which the naive plan ignores, sets the count.
    "gaps-tpot": dict(models=["qwen3-8b"], hardware=["mi300x"], engines=["vllm-0.33"],
                      weights_dtypes=["bf16"], kv_dtypes=["fp8"], tp=[1], contexts=["32Ki"],
                      workload={"users": 200, "context": "32Ki", "tpot_ms": 50}),
}


@pytest.fixture(scope="module")
def sentences(tmp_path_factory):
    from kvreg.report.make import render

    root = copy_project(tmp_path_factory.mktemp("gaps") / "proj")
    for rid, body in REPORTS.items():
        (root / "reports" / f"{rid}.yaml").write_text(yaml.safe_dump(
            {"id": rid, "title": rid, "period": "test", **body}, sort_keys=False))
    out = {}
    for rid in REPORTS:
        page = render(root, rid, ["html"])["html"].decode()
        sec = page[page.index("What would change the answer"):]
        sec = sec[:sec.index("</ul>")]
        for li in re.findall(r"<li[^>]*>(.*?)</li>", sec, re.S):
            text = re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", "", li)))
            name, rest = text.split(":", 1)
            out[(rid, name)] = rest
    return out


def test_kv_head_replication_at_tp8(sentences):
    s = sentences[("gaps-tp8", "Qwen3 235B-A22B")]
    assert "The naive plan buys 16 devices, too few: at TP 8 its 4 KV heads cannot be split 8 ways: each device keeps" \
           " 1 whole head per layer (256 B per token per layer where the naive formula divides to 128 B)" in s
    assert "reserve, the GB/GiB gap or constant state" not in s


def test_sliding_window_prints_the_models_own_window(sentences):
    gpt = sentences[("gaps-tp8", "gpt-oss-120b")]
    assert "its 18 sliding-window layers keep only the last W = 128 tokens of the T = 32,768 tokens" in gpt
    gemma = sentences[("gaps-tp8", "Gemma 4 31B")]
    assert "The naive plan buys 48 devices, too many: its 50 sliding-window layers keep only the last W = 1,024" \
           " tokens of the T = 32,768 tokens" in gemma


def test_chunked_attention_and_the_engine_gap_with_its_reason(sentences):
    s = sentences[("gaps-tp8", "Llama 4 Scout 17B-16E Instruct")]
    assert "36 chunked-attention layers keep only the last C = 8,192 tokens" in s
    # plans now size on the engine's own pool (main, 2026-12-01): the engine's block accounting is inside the
    # capacity, so no separate engine clause, and never a generic "refuses to start"
    assert "refuses to start" not in s


def test_mla_decompression(sentences):
    s = sentences[("gaps-mla", "DeepSeek-V3")]
    assert "too many: its 61 MLA layers cache one 1,152 B latent per token where the naive formula decompresses K" \
           " and V to 10 KiB" in s


def test_recurrent_state_decides_under_the_engine_too(sentences):
    s = sentences[("gaps-b200", "Qwen3.6-27B")]
    assert ("The naive plan buys 2 devices, too few: its 48 recurrent layers hold 149.62 MiB of state per sequence"
            " per device, which the naive formula leaves out") in s


def test_recurrent_state(sentences):
    s = sentences[("gaps-state", "Qwen3.6-27B")]
    assert "too few: its 48 recurrent layers hold 149.62 MiB of state per sequence per device, which the naive" \
           " formula leaves out" in s


def test_decode_speed(sentences):
    s = sentences[("gaps-tpot", "Qwen3 8B")]
    # MI300X × vLLM at its fitted bandwidth efficiency 0.297 (AMD's pages, with the kernel classes; it was 0.230):
    # weights 16.38 GB ÷ (5.3 TB/s × 0.297) = 10.41 ms of the 50 ms, each sequence's fp8 KV 2·36·8·128 B × 32,768
    # = 2.42 GB another 1.535 ms, so floor((50 − 10.41) ÷ 1.535) = 25 sequences (42 at the stated 0.45) while the
    # pool admits 70.
    assert ("too few: decode speed binds, which the naive plan (memory alone) ignores: within the 50.0 ms TPOT a"
            " replica runs 25 sequences, though memory and the engine would hold 70") in s
