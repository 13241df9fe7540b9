"""Turn published vLLM startup logs into observations (registry/observations/).

Run by hand:
    python tools/import_vllm_logs.py PATH/TO/vllm_startup_logs.jsonl   # curated records (completeness: full)
    python tools/import_vllm_logs.py --sweep PATH/TO/vllm-0.19-h100-startups  # 18 complete vLLM 0.19.0 logs

The sweep logs are complete startups, so everything but the GPU and the registry model comes from
the log's own lines through ``kvreg ingest-log``'s parser (figures, settings, the version); the
stored excerpt is only the lines read, with their line numbers.
Each record's excerpt goes through the same parser as ``kvreg ingest-log``; where the
excerpt is a table rather than a raw log, or the log is silent (model, GPU, release),
the curated record's fields are used and each such value is explained under ``inferred``.
The mappings below (record names → registry ids) are this import's data, reviewed by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvreg.ingest import KV_DTYPES, QUANT_WEIGHTS, engine_for_version, observation_from_log, write_observation  # noqa: E402
from kvreg.logparse import LogError  # noqa: E402
from kvreg.registry import load_registry  # noqa: E402

MODELS = {  # record model (or inferred model) → registry model id (may not exist yet: the entry then says so)
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "meta-llama/Llama-3.1-8B-Instruct + EAGLE draft (yuhuili/EAGLE-LLaMA3.1-Instruct-8B)": "llama-3.1-8b",
    "deepseek-ai/deepseek-coder-6.7b-instruct": "deepseek-coder-6.7b",
    "meta-llama/Llama-2-7b-hf": "llama-2-7b", "meta-llama/Llama-2-70b-hf": "llama-2-70b",
    "bigcode/starcoder2-3b": "starcoder2-3b", "Qwen/Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b-fp8", "Qwen/Qwen3-14B": "qwen3-14b", "Qwen/Qwen3-8B": "qwen3-8b",
    "Qwen/Qwen3-32B": "qwen3-32b", "Qwen/Qwen3-14B-AWQ": "qwen3-14b",
    "Qwen3.6-27B (AutoRound int4 community quant)": "qwen3.6-27b", "Qwen3.6-35B-A3B (NVFP4)": "qwen3.6-35b-a3b",
    "Qwen3.8-Flash-Next (NVFP4 experts + FP8 dense checkpoint)": "qwen3.8-flash-next",
    "Qwen3.5-122B-A10B (int4 AutoRound)": "qwen3.5-122b-a10b", "MiniMaxAI/MiniMax-M2": "minimax-m2",
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2": "nemotron-nano-9b-v2", "Qwen/Qwen2.5-0.5B-Instruct": "qwen2.5-0.5b",
    "openai/gpt-oss-120b": "gpt-oss-120b",
}
DRAFTS = {"vllm-log-12": "eagle-llama3.1-instruct-8b"}
HARDWARE = {"RTX 3090": "rtx-3090", "H100 80GB": "h100-sxm-80gb", "H100": "h100-sxm-80gb", "L40S": "l40s",
            "L4": "l4", "A100 80GB": "a100-sxm-80gb", "RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000",
            "RTX 5090": "rtx-5090", "Tesla T4": "t4"}
ALSO_PARTIAL = {"vllm-log-53",  # partial record kept as evidence: gpt-oss-120b does not start on one H100
                # partial records without a token line whose available memory kvreg can reproduce end to end
                "vllm-log-51", "vllm-log-52", "vllm-log-54"}
E2E_NOTES = {
    "vllm-log-28": "end to end: the NVFP4 checkpoint size is not in the registry (weights derived from 35e9 nominal "
                   "parameters × 0.5625 B, while attention, embeddings and the vision tower are not fp4) and the "
                   "RTX 5090 usable memory is the nvidia-smi total; the block arithmetic (a) is exact",
    "vllm-log-53": "partial record: no token line (the engine did not start); util 0.9 and the release are inferred",
    "vllm-log-51": "partial record: no token line, so only the available memory is compared end to end",
    "vllm-log-52": "partial record: no token line, so only the available memory is compared end to end",
    "vllm-log-54": "partial record: no token line (the engine did not start); only the available memory is compared",
}
NOT_REPRODUCIBLE = {
    "vllm-log-13": "the logged 8.11 GiB is one rank's memory; num_blocks is the min over the 4 TP workers (§3), not logged",
    "vllm-log-35": "the GGUF checkpoint (dense or MoE Qwen3.5) is not named, so the layer geometry is unknown",
    "vllm-log-41": "tokens = conc × L (not multiples of 16) contradicts the 'V0 0.10.0' label; release and GPU unknown",
    "vllm-log-42": "tokens = conc × L (not multiples of 16) contradicts the 'V0 0.10.0' label; release and GPU unknown",
    "vllm-log-43": "tokens = conc × L (not multiples of 16) contradicts the 'V0 0.10.0' label; release and GPU unknown",
    "vllm-log-44": "tokens = conc × L (not multiples of 16) contradicts the 'V0 0.10.0' label; release and GPU unknown",
    "vllm-log-30": "fork build 0.1.dev: the release's accounting is unknown",
    "vllm-log-31": "fork build 0.1.dev: the release's accounting is unknown",
}


SWEEP_MODELS = {  # served checkpoint (HF id, as logged) → (registry model id, weights dtype where the log's
    # quantization method does not fix it, why).  compressed-tensors covers fp8, int8 and int4 schemes.
    "codellama/CodeLlama-7b-hf": ("codellama-7b", None, None),
    "deepseek-ai/DeepSeek-V2-Lite-Chat": ("deepseek-v2-lite", None, None),
    "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic": ("llama-3.3-70b", "fp8", "checkpoint name: fp8-dynamic (FP8 weights)"),
    "RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic": ("qwen2.5-7b", "fp8", "checkpoint name: fp8-dynamic (FP8 weights)"),
    "google/gemma-2-9b-it": ("gemma-2-9b", None, None),
    "google/gemma-3-12b-it": ("gemma-3-12b", None, None),
    "google/gemma-3-27b-it": ("gemma-3-27b", None, None),
    "ibm-granite/granite-3.3-8b-instruct": ("granite-3.3-8b", None, None),
    "ibm-granite/granite-vision-3.3-2b": ("granite-vision-3.3-2b", None, None),
    "microsoft/phi-2": ("phi-2", None, None),
    "microsoft/phi-4": ("phi-4", None, None),
    "moonshotai/Kimi-Dev-72B": ("kimi-dev-72b", None, None),
    "Qwen/Qwen3-30B-A3B": ("qwen3-30b-a3b", None, None),
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16": ("llama-3.1-8b", None, None),
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8": ("llama-3.1-8b", "int8",
                                                           "checkpoint name: quantized.w8a8 (INT8 weights)"),
    "RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8": ("qwen2.5-7b", "int8", "checkpoint name: quantized.w8a8 (INT8 weights)"),
}
SWEEP_SOURCE = ("llm-d-incubation/llm-d-planner accuracy sweep, accuracy/results/v0.19.0/ (commit d3121e0): "
                "vLLM 0.19.0 on one H100 80GB HBM3")
SWEEP_HARDWARE = ("h100-sxm-80gb", "the sweep ran on one H100 80GB HBM3 (dataset README); HBM3 80 GB is the SXM "
                  "part; the log's total_memory is 79.19 GiB")


def sweep_id(model_id: str, hf_id: str, tp: int) -> str:
    """Observation id for a sweep log: v0.19-h100-<model>[-<scheme>]-tp<N> (scheme from the checkpoint name)."""
    scheme = next((q for q in ("fp8", "w8a8", "w4a16") if q in hf_id.lower()), None)
    return f"v0.19-h100-{model_id}" + (f"-{scheme}" if scheme else "") + f"-tp{tp}"


def import_sweep(folder: str) -> None:
    """Ingest every ``logs/*.log`` of the vLLM 0.19.0 H100 sweep as an observation."""
    reg = load_registry(ROOT)
    for log in sorted(Path(folder, "logs").glob("*.log")):
        src = {"title": SWEEP_SOURCE, "note": f"log {log.name} (shared/data/vllm-0.19-h100-startups/logs)"}
        entry, msgs = observation_from_log(log.read_text(errors="replace"), reg, obs_id="pending", source=src,
                                           hardware=SWEEP_HARDWARE[0])
        hf = entry["model_hf_id"]
        mid, wdtype, why = SWEEP_MODELS[hf]
        entry["id"] = sweep_id(mid, hf, entry["settings"]["tp"])
        entry["model"] = mid
        inferred = entry.setdefault("inferred", {})
        inferred["model"] = f"served checkpoint {hf} is a {mid} architecture (registry model id)"
        if mid not in reg.of("model"):
            inferred["model_missing"] = f"{mid} is not in the registry yet: add registry/models/{mid}.yaml"
        inferred["hardware"] = SWEEP_HARDWARE[1]
        settings = entry["settings"]
        if wdtype:
            settings["weights_dtype"] = wdtype
            inferred["settings.weights_dtype"] = why
        entry["unknown"] = [u for u in entry.get("unknown", []) if u not in ("hardware", "model", "settings.weights_dtype")]
        order = ["id", "engine", "engine_version", "model", "model_hf_id", "hardware", "gpu_name", "settings", "logged",
                 "unknown", "inferred", "release_confidence", "reproducible", "notes", "excerpt", "sources",
                 "confidence"]
        entry = {k: entry[k] for k in order if k in entry and entry[k] not in ({}, [], None)}
        write_observation(ROOT, entry)
        print(entry["id"], entry.get("engine"), entry["model"], entry.get("unknown"), msgs[1:] if msgs else "")


def val(rec, key):
    """A record field, or its inferred value with the reason."""
    if rec.get(key) is not None:
        return rec[key], None
    inf = (rec.get("inferred") or {}).get(key)
    return (inf["value"], inf["reason"]) if inf else (None, None)


def main(path: str, only: set[str] | None = None) -> None:
    """Import the curated records of ``path`` (all, or the cases in ``only``)."""
    reg = load_registry(ROOT)
    models = reg.of("model")
    hardware = reg.of("hardware")
    engines = reg.of("engine")
    for line in open(path):
        rec = json.loads(line)
        if rec.get("completeness") != "full" and rec["case"] not in ALSO_PARTIAL:
            continue
        if only and rec["case"] not in only:
            continue
        oid = rec["case"]
        source = {"id": "log"} | ({"url": rec["url"]} if rec.get("url") else {"title": rec["source"]})
        source["note"] = f"vllm_startup_logs.jsonl {oid}: {rec['source']}"[:300]
        try:
            entry, _ = observation_from_log(rec["excerpt"], reg, obs_id=oid, source=source)
        except LogError as exc:
            entry = {"id": oid, "settings": {}, "logged": {}, "inferred": {},
                     "excerpt": rec["excerpt"].strip() + "\n", "sources": [source], "confidence": "measured"}
            entry["inferred"]["logged"] = f"the excerpt is not a raw log ({exc}); figures from the curated record"
        inferred = entry.setdefault("inferred", {})
        settings = entry.setdefault("settings", {})
        model, why = val(rec, "model")
        mid = MODELS.get(model) if model else None
        if mid:
            entry["model"] = mid
            entry["model_hf_id"] = model
            if why:
                inferred["model"] = why
            if mid not in models:
                inferred["model_missing"] = f"{mid} is not in the registry: add registry/models/{mid}.yaml (kvreg import-hf)"
        if oid in DRAFTS:
            settings["draft_model"] = DRAFTS[oid]
            inferred["settings.draft_model"] = why or "EAGLE draft layer shares the pool"
        gpu, gwhy = val(rec, "gpu")
        inf_gpu = (rec.get("inferred") or {}).get("gpu")
        if gpu not in HARDWARE and inf_gpu and inf_gpu["value"] in HARDWARE:
            # "A100" with the record's arithmetic saying which A100 (e.g. weights + KV > 40 GiB)
            gpu, gwhy = inf_gpu["value"], f"record names '{gpu}'; {inf_gpu['value']} by {inf_gpu['reason']}"
        if gpu in HARDWARE and HARDWARE[gpu] in hardware:
            entry["hardware"] = HARDWARE[gpu]
            inferred["hardware"] = (f"GPU named '{gpu}'" + (f" ({gwhy})" if gwhy else "")
                                    + ("; SXM assumed" if HARDWARE[gpu].startswith("h100") else ""))
        elif gpu:
            entry["gpu_name"] = gpu
        version, vwhy = val(rec, "vllm_version")
        if version:
            entry["engine_version"] = str(version)
        gen = "V0" if rec.get("engine") == "V0" else "V1"
        eng = engine_for_version(engines, str(version) if version else None, gen)
        if eng:
            entry["engine"] = eng
            inferred["engine"] = f"release range for {version or gen}" + (f" ({vwhy})" if vwhy else "")
            entry["release_confidence"] = "stated" if version and not vwhy else "given"
        for key, skey in (("tensor_parallel_size", "tp"), ("pipeline_parallel_size", "pp"),
                          ("max_model_len", "max_model_len"), ("gpu_memory_utilization", "gpu_memory_utilization"),
                          ("max_num_seqs", "max_num_seqs"), ("block_size", "block_size"),
                          ("enforce_eager", "enforce_eager")):
            v, w = val(rec, key)
            if w and "default" in w and skey == "gpu_memory_utilization":
                # "not passed, default": leave it unset so the release's own default applies
                # (0.92 from 0.20, engine_accounting.md §1), and say so.
                inferred[f"settings.{skey}"] = f"not passed: the release default applies (record assumed {v})"
                continue
            if v is not None and skey not in settings:
                settings[skey] = v
                if w:
                    inferred[f"settings.{skey}"] = w
        if "pp" in rec.get("tags", []) and settings.get("pp", 1) == 1:
            settings["pp"] = 2
            inferred["settings.pp"] = "--pipeline-parallel-size 2 in the excerpt"
        kvd = rec.get("kv_cache_dtype")
        if kvd and kvd.split(" ")[0] in KV_DTYPES and KV_DTYPES[kvd.split(" ")[0]]:
            settings["kv_dtype"] = KV_DTYPES[kvd.split(" ")[0]]
        q = (rec.get("quantization") or "").split(" ")[0].lower()
        if q in QUANT_WEIGHTS:
            settings["weights_dtype"] = QUANT_WEIGHTS[q]
            settings["quantization"] = rec["quantization"]
        if gen == "V0" and settings.get("max_model_len") and settings["max_model_len"] <= 32768 \
                and "max_num_batched_tokens" not in settings:
            settings["max_num_batched_tokens"] = max(settings["max_model_len"], 2048)
            inferred["settings.max_num_batched_tokens"] = ("V0 without chunked prefill (auto only above 32K): "
                                                           "the profile batch is max(max_model_len, 2048)")
        if oid == "vllm-log-53" and "max_model_len" not in settings:
            settings["max_model_len"] = 131072
            inferred["settings.max_model_len"] = "not passed: vLLM defaults to the model's max_position_embeddings"
        if oid in ("vllm-log-49", "vllm-log-50") and "max_model_len" not in settings:
            settings["max_model_len"] = 2048
            inferred["settings.max_model_len"] = "record notes: identical at max_model_len 2k and 8k (2048 used)"
        if oid == "vllm-log-08" and "max_num_batched_tokens" not in settings:
            settings["max_num_batched_tokens"] = 8192
            inferred["settings.max_num_batched_tokens"] = (
                "not in the excerpt: 8192 is the LLM-class default on GPUs < 70 GiB and the API-server default on "
                "H100-class GPUs (arg_utils.get_batch_defaults); 2048 would give 356.90x, 8192 gives the logged 178.68x")
        logged = entry.setdefault("logged", {})
        for k, v in rec["logged"].items():
            if v is not None and k in ("model_loading_gib", "available_kv_cache_memory_gib", "num_gpu_blocks",
                                       "kv_cache_tokens", "max_concurrency", "max_concurrency_tokens",
                                       "total_gpu_memory_gib", "cuda_graph_memory_gib"):
                if k in logged and logged[k] != v:
                    inferred[f"logged.{k}"] = f"excerpt's last figure {logged[k]} replaced by the record's {v}"
                logged[k] = v
        if "startup_failure" in rec.get("tags", []):
            logged["started"] = False
        unknown = [u for u in ("model", "hardware", "engine") if u not in entry]
        unknown += [f"settings.{k}" for k in ("tp", "max_model_len") if k not in settings]
        entry["unknown"] = unknown
        if oid in NOT_REPRODUCIBLE:
            entry["reproducible"] = False
            entry["notes"] = NOT_REPRODUCIBLE[oid]
        if oid in E2E_NOTES:
            entry["notes"] = (entry.get("notes", "") + (" — " if entry.get("notes") else "") + E2E_NOTES[oid])
        if rec.get("notes"):
            entry["notes"] = (entry.get("notes", "") + (" — " if entry.get("notes") else "") + "record notes: "
                              + rec["notes"])
        order = ["id", "engine", "engine_version", "model", "model_hf_id", "hardware", "gpu_name", "settings", "logged",
                 "unknown", "inferred", "release_confidence", "reproducible", "notes", "excerpt", "field_sources",
                 "sources", "confidence"]
        entry["field_sources"] = {"log": [k for k in ("settings", "logged") if entry.get(k)]}
        entry = {k: entry[k] for k in order if k in entry and entry[k] not in ({}, [], None)}
        if not entry.get("field_sources", {}).get("log"):
            entry.pop("field_sources", None)
        write_observation(ROOT, entry)
        print(oid, entry.get("engine"), entry.get("model"), entry.get("hardware"), entry.get("unknown"))


if __name__ == "__main__":
    if sys.argv[1] == "--sweep":
        import_sweep(sys.argv[2])
    else:  # python tools/import_vllm_logs.py JSONL [CASE ...]
        main(sys.argv[1], set(sys.argv[2:]) or None)
