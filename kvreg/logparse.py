"""Parse a vLLM startup log (V0 and V1 formats) into the figures it states.

Recognised lines (engine_accounting.md §1, §4; vLLM prints them from gpu_worker.py,
gpu_model_runner.py, kv_cache_utils.py, gpu_executor.py):

- ``Model loading took 14.2474 GiB`` (V1) / ``Loading model weights took 14.9888 GB`` (V0; GiB in fact)
- ``Available KV cache memory: 51.63 GiB`` (V1) / ``kv_cache_size=3.81GiB`` in V0's
  ``Memory profiling results`` line, which also gives ``total_gpu_memory`` and ``gpu_memory_utilization``
- ``# GPU blocks: 1952, # CPU blocks: 2048`` (V0)
- ``GPU KV cache size: 410,128 tokens``
- ``Maximum concurrency for 131,072 tokens per request: 3.13x``
- ``Initializing a V1 LLM engine (v0.24.0)`` / ``vLLM API server version 0.9.2`` (version banner)
- ``non-default args: {...}`` and command lines (``vllm serve MODEL --tensor-parallel-size 4 ...``)
- ``The model's max seq len (29000) is larger than ... (23648)`` and ``EngineCore failed to start`` (did not start)

Only what the text states is returned; :func:`parse_log` never guesses.
"""

from __future__ import annotations

import ast
import dataclasses
import re

NUM = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)"


def _num(s: str) -> float:
    return float(s.replace(",", ""))


@dataclasses.dataclass
class ParsedLog:
    """Figures found in a log; ``None`` where the log is silent.  GiB = 2^30 bytes."""

    version: str | None = None
    engine_generation: str | None = None  # "V0" or "V1" when the format tells
    model: str | None = None
    model_loading_gib: float | None = None
    available_kv_cache_memory_gib: float | None = None
    total_gpu_memory_gib: float | None = None
    num_gpu_blocks: int | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens: int | None = None
    started: bool | None = None
    args: dict = dataclasses.field(default_factory=dict)
    matched: list[str] = dataclasses.field(default_factory=list)


_PATTERNS = [
    ("model_loading_gib", re.compile(r"Model loading took " + NUM + r" ?GiB")),
    ("model_loading_gib", re.compile(r"Loading model weights took " + NUM + r" ?GB")),
    ("available_kv_cache_memory_gib", re.compile(r"Available KV cache memory: " + NUM + r" ?GiB")),
    ("available_kv_cache_memory_gib", re.compile(r"kv_cache_size=" + NUM + r" ?GiB")),
    ("total_gpu_memory_gib", re.compile(r"total_gpu_memory=" + NUM + r" ?GiB")),
    ("num_gpu_blocks", re.compile(r"# GPU blocks: " + NUM)),
    ("kv_cache_tokens", re.compile(r"GPU KV cache size: " + NUM + r" tokens")),
]
_CONC = re.compile(r"Maximum concurrency for " + NUM + r" tokens per request: " + NUM + r"x")
_VERSION = [re.compile(r"V1 LLM engine \(v([0-9][0-9A-Za-z.+\-]*)\)"),
            re.compile(r"vLLM API server version v?([0-9][0-9A-Za-z.+\-]*)"),
            re.compile(r"LLM engine \(v([0-9][0-9A-Za-z.+\-]*)\)")]
_UTIL = re.compile(r"gpu_memory_utilization=" + NUM)
_NON_DEFAULT = re.compile(r"non-default args: (\{.*\})")
_SERVE = re.compile(r"vllm serve (\S+)((?: +--?[A-Za-z0-9\-_]+(?:[ =](?!--)\S+)?)*)")
_FLAG = re.compile(r"--([A-Za-z0-9\-_]+)(?:[ =](?!--)(\S+))?")
_NOT_STARTED = [re.compile(r"max seq len \(" + NUM + r"\) is larger than the maximum number of tokens"),
                re.compile(r"EngineCore failed to start"),
                re.compile(r"No available memory for the cache blocks"),
                re.compile(r"is larger than the available KV cache memory")]
_SEEN_V1 = re.compile(r"EngineCore|gpu_worker\.py|kv_cache_utils\.py|V1 LLM engine")
_SEEN_V0 = re.compile(r"# GPU blocks:|Memory profiling results|Loading model weights took")

ARG_KEYS = {  # CLI flag / engine arg → observation setting
    "tensor-parallel-size": "tp", "tensor_parallel_size": "tp", "tp": "tp",
    "pipeline-parallel-size": "pp", "pipeline_parallel_size": "pp",
    "max-model-len": "max_model_len", "max_model_len": "max_model_len",
    "gpu-memory-utilization": "gpu_memory_utilization", "gpu_memory_utilization": "gpu_memory_utilization",
    "max-num-batched-tokens": "max_num_batched_tokens", "max_num_batched_tokens": "max_num_batched_tokens",
    "max-num-seqs": "max_num_seqs", "max_num_seqs": "max_num_seqs",
    "kv-cache-dtype": "kv_cache_dtype", "kv_cache_dtype": "kv_cache_dtype",
    "block-size": "block_size", "block_size": "block_size",
    "enforce-eager": "enforce_eager", "enforce_eager": "enforce_eager",
    "quantization": "quantization", "dtype": "dtype", "model": "model",
}


class LogError(ValueError):
    """The text is not a vLLM startup log kvreg can read (message says what is missing)."""


def _coerce(v):
    if v is None:
        return True
    if isinstance(v, (int, float, bool)):
        return v
    s = str(v).strip("'\"")
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def parse_log(text: str) -> ParsedLog:
    """Extract the startup figures from ``text``.

    Returns:
        A :class:`ParsedLog` (figures in the units vLLM prints: GiB, tokens).

    Raises:
        LogError: no recognised figure at all (not a vLLM startup log), or a figure
            line cut off mid-number (a truncated log).
    """
    out = ParsedLog()
    for field, rx in _PATTERNS:
        found = list(rx.finditer(text))  # the last one: a log (or a before/after excerpt) ends with the final figure
        m = found[-1] if found else None
        if m and getattr(out, field) is None:
            v = _num(m.group(1))
            setattr(out, field, int(v) if field in ("num_gpu_blocks", "kv_cache_tokens") else v)
            out.matched.append(field)
    found = list(_CONC.finditer(text))
    m = found[-1] if found else None
    if m:
        out.max_concurrency_tokens, out.max_concurrency = int(_num(m.group(1))), _num(m.group(2))
        out.matched.append("max_concurrency")
    for rx in _VERSION:
        m = rx.search(text)
        if m:
            out.version = m.group(1).rstrip(".")
            break
    if _SEEN_V1.search(text):
        out.engine_generation = "V1"
    elif _SEEN_V0.search(text):
        out.engine_generation = "V0"
    m = _UTIL.search(text)
    if m:
        out.args["gpu_memory_utilization"] = _num(m.group(1))
    m = _NON_DEFAULT.search(text)
    if m:
        try:
            d = ast.literal_eval(m.group(1))
        except (ValueError, SyntaxError):
            raise LogError("the 'non-default args' line is not a complete Python dict (truncated log?)")
        for k, v in d.items():
            if k in ARG_KEYS:
                out.args[ARG_KEYS[k]] = _coerce(v)
    m = _SERVE.search(text)
    if m:
        out.model = m.group(1)
        for fm in _FLAG.finditer(m.group(2)):
            if fm.group(1) in ARG_KEYS:
                out.args[ARG_KEYS[fm.group(1)]] = _coerce(fm.group(2))
    if "model" in out.args and out.model is None:
        out.model = str(out.args.pop("model"))
    out.args.pop("model", None)
    for rx in _NOT_STARTED:
        if rx.search(text):
            out.started = False
    if out.available_kv_cache_memory_gib is not None and out.available_kv_cache_memory_gib < 0:
        out.started = False
    if not out.matched:
        raise LogError("no vLLM startup figure found (looked for 'Model loading took', 'Available KV cache memory', "
                       "'# GPU blocks', 'GPU KV cache size', 'Maximum concurrency for N tokens per request')")
    last = text.rstrip().splitlines()[-1] if text.strip() else ""
    if re.search(r"(GPU KV cache size:|tokens per request:|Available KV cache memory:)\s*[0-9,.\-]*$", last):
        raise LogError(f"the last line is cut off mid-figure: {last.strip()!r} (truncated log?)")
    return out
