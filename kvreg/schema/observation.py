"""An observation entry: what one engine startup logged, and under which settings (registry/observations/*.yaml).

Logged figures are kept as printed (``available_kv_cache_memory_gib: 50.32``,
GiB = 2^30 bytes, the unit vLLM prints), because the printed precision bounds
how exactly the block arithmetic can be checked.  Fields the log does not
state are listed in ``unknown``; values filled in by a person (or taken from a
curated record) are explained in ``inferred``.  Nothing is guessed silently.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PositiveInt

from kvreg.schema.common import Dtype, Entry, EntryId, Strict, Tokens


class Speculative(Strict):
    """Speculative decoding as the log states it (``speculative_config``); the number of speculative
    tokens is ``settings.num_speculative_tokens``."""

    method: str | None = None
    model: str | None = None
    """The draft model's HF id or path, as logged."""


class Settings(Strict):
    """Engine settings in force for the run (defaults of the release when absent)."""

    tp: PositiveInt = 1
    pp: PositiveInt = 1
    dp: PositiveInt | None = None
    dtype: Dtype | None = None
    """Activation / unquantized-weight dtype the engine ran with (``dtype=torch.bfloat16``)."""
    max_model_len: Tokens | None = None
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    max_num_batched_tokens: Tokens | None = None
    max_num_seqs: PositiveInt | None = None
    kv_dtype: Dtype | None = None
    weights_dtype: Dtype | None = None
    block_size: PositiveInt | None = None
    enforce_eager: bool | None = None
    draft_model: EntryId | None = None
    """A speculative-decoding draft model (registry id) whose layers share the KV pool (EAGLE, an MTP head)."""
    num_speculative_tokens: Annotated[int, Field(ge=0)] | None = None
    """speculative_config.num_speculative_tokens: recurrent state gets that many more blocks and conv rows (vLLM MambaSpec)."""
    quantization: str | None = None
    """The engine's quantization method as logged (``compressed-tensors``, ``gptq_marlin``, ``fp8``)."""
    speculative: Speculative | None = None


class Logged(Strict):
    """Figures as the engine printed them (units in the names: GiB = 2^30 bytes, tokens)."""

    model_loading_gib: float | None = None
    """"Model loading took X GiB": the weights on this rank (gpu_model_runner.py)."""
    init_free_memory_gib: float | None = None
    """Worker init snapshot (gpu_worker.py:284): free device memory before loading."""
    init_cuda_memory_gib: float | None = None
    init_non_torch_memory_gib: float | None = None
    requested_memory_gib: float | None = None
    """"worker requested memory": util × total (gpu_worker.py:285)."""
    weights_memory_gib: float | None = None
    """Profiling result (gpu_worker.py:435): weights memory."""
    activation_peak_gib: float | None = None
    """Profiling result: torch peak memory increase (V0: "PyTorch activation peak memory takes")."""
    non_torch_forward_gib: float | None = None
    """Profiling result: non-torch forward increase memory (V0 0.6-0.10: "non_torch_memory takes")."""
    non_kv_memory_gib: float | None = None
    """Profiling result: total non KV cache memory (weights + activation + non-torch, + CUDA graphs where estimated)."""
    cuda_graph_estimated_gib: float | None = None
    """"Estimated CUDA graph memory: X GiB total" (gpu_model_runner.py:5955)."""
    available_kv_cache_memory_gib: float | None = None
    num_gpu_blocks: Annotated[int, Field(ge=0)] | None = None
    kv_cache_tokens: Annotated[int, Field(ge=0)] | None = None
    max_concurrency: Annotated[float, Field(ge=0)] | None = None
    max_concurrency_tokens: Tokens | None = None
    total_gpu_memory_gib: float | None = None
    cuda_graph_memory_gib: float | None = None
    """CUDA graph memory actually taken ("CUDA graph pool memory: X GiB (actual)", "Graph capturing ... took X GiB")."""
    started: bool | None = None


class ObservationEntry(Entry):
    """One engine startup: model, hardware, engine release, settings, logged figures, source."""

    engine: EntryId | None = None
    """Engine release range id (registry/engines), e.g. ``vllm-0.9-0.19``."""
    engine_version: str | None = None
    model: EntryId | None = None
    """Registry model id; may name a model not (yet) in the registry (``kvreg import-hf``)."""
    model_hf_id: str | None = None
    hardware: EntryId | None = None
    gpu_name: str | None = None
    settings: Settings = Settings()
    logged: Logged
    unknown: list[str] = []
    """Settings the log does not determine, left for a person to fill."""
    inferred: dict[str, str] = {}
    """Field → why a value not printed in the log was filled in."""
    reproducible: bool = True
    """False when the record lacks a setting needed to reproduce it; ``notes`` says which."""
    release_confidence: Literal["stated", "format", "token-rule", "given"] | None = None
    """How ``engine`` was determined: ``stated`` (the log's version banner), ``format`` (V0 log format, no
    version), ``token-rule`` (only releases whose printed token rule fits the logged figures), ``given``
    (set by a person or the curated record)."""
    excerpt: str | None = None
    """The lines the figures and settings were read from, ``<line>: <text>`` (not the whole log)."""
