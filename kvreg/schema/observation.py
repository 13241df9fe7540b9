"""An observation entry: what one engine startup logged, and under which settings (registry/observations/*.yaml).

Logged figures are kept as printed (``available_kv_cache_memory_gib: 50.32``,
GiB = 2^30 bytes, the unit vLLM prints), because the printed precision bounds
how exactly the block arithmetic can be checked.  Fields the log does not
state are listed in ``unknown``; values filled in by a person (or taken from a
curated record) are explained in ``inferred``.  Nothing is guessed silently.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.columns import Column, Columns
from kvreg.schema.common import Dtype, Entry, EntryId, Strict, Tokens
from kvreg.units import GIB


class Speculative(Strict):
    """Speculative decoding as the log states it (``speculative_config``); the number of speculative
    tokens is ``settings.num_speculative_tokens``."""

    method: str | None = None
    model: str | None = None
    """The draft model's HF id or path, as logged."""


class Settings(Strict):
    """Engine settings in force for the run (defaults of the release when absent)."""

    tp: Annotated[PositiveInt, Column()] = 1
    pp: Annotated[PositiveInt, Column()] = 1
    dp: Annotated[PositiveInt | None, Column()] = None
    dtype: Annotated[Dtype | None, Column()] = None
    """Activation / unquantized-weight dtype the engine ran with (``dtype=torch.bfloat16``)."""
    max_model_len: Annotated[Tokens | None, Column()] = None
    gpu_memory_utilization: Annotated[Annotated[float, Field(gt=0, le=1)] | None, Column()] = None
    max_num_batched_tokens: Annotated[Tokens | None, Column()] = None
    max_num_seqs: Annotated[PositiveInt | None, Column()] = None
    kv_dtype: Annotated[Dtype | None, Column()] = None
    weights_dtype: Annotated[Dtype | None, Column()] = None
    block_size: PositiveInt | None = None
    enforce_eager: Annotated[bool | None, Column(fill=False)] = None
    draft_model: Annotated[EntryId | None, Column("draft_model_id")] = None
    """A speculative-decoding draft model (registry id) whose layers share the KV pool (EAGLE, an MTP head)."""
    num_speculative_tokens: Annotated[Annotated[int, Field(ge=0)] | None, Column()] = None
    """speculative_config.num_speculative_tokens: recurrent state gets that many more blocks and conv rows (vLLM MambaSpec)."""
    quantization: Annotated[str | None, Column()] = None
    """The engine's quantization method as logged (``compressed-tensors``, ``gptq_marlin``, ``fp8``)."""
    speculative: Speculative | None = None


class Logged(Strict):
    """Figures as the engine printed them (units in the names: GiB = 2^30 bytes, tokens)."""

    model_loading_gib: Annotated[Annotated[float, Field(ge=0)] | None, Column("model_loading_bytes", scale=GIB)] = None
    """"Model loading took X GiB": the weights on this rank (gpu_model_runner.py)."""
    init_free_memory_gib: Annotated[float | None, Column("init_free_bytes", scale=GIB)] = None
    """Worker init snapshot (gpu_worker.py:284): free device memory before loading."""
    init_cuda_memory_gib: float | None = None
    init_non_torch_memory_gib: float | None = None
    requested_memory_gib: Annotated[Annotated[float, Field(gt=0)] | None, Column("requested_bytes", scale=GIB)] = None
    """"worker requested memory": util × total (gpu_worker.py:285)."""
    weights_memory_gib: Annotated[float | None,
                                  Column("logged_weights_bytes", scale=GIB, fallback="model_loading_gib")] = None
    """Profiling result (gpu_worker.py:435): weights memory."""
    activation_peak_gib: Annotated[float | None, Column("logged_activation_bytes", scale=GIB)] = None
    """Profiling result: torch peak memory increase (V0: "PyTorch activation peak memory takes")."""
    non_torch_forward_gib: Annotated[float | None, Column("logged_non_torch_bytes", scale=GIB)] = None
    """Profiling result: non-torch forward increase memory (V0 0.6-0.10: "non_torch_memory takes")."""
    non_kv_memory_gib: Annotated[float | None, Column("logged_non_kv_bytes", scale=GIB)] = None
    """Profiling result: total non KV cache memory (weights + activation + non-torch, + CUDA graphs where estimated)."""
    cuda_graph_estimated_gib: Annotated[float | None, Column("logged_cuda_graph_estimated_bytes", scale=GIB)] = None
    """"Estimated CUDA graph memory: X GiB total" (gpu_model_runner.py:5955)."""
    available_kv_cache_memory_gib: Annotated[float | None, Column("available_kv_bytes", scale=GIB)] = None
    num_gpu_blocks: Annotated[Annotated[int, Field(ge=0)] | None, Column()] = None
    kv_cache_tokens: Annotated[Annotated[int, Field(ge=0)] | None, Column()] = None
    max_concurrency: Annotated[Annotated[float, Field(ge=0)] | None, Column()] = None
    max_concurrency_tokens: Annotated[Tokens | None, Column()] = None
    total_gpu_memory_gib: Annotated[Annotated[float, Field(gt=0)] | None, Column("total_gpu_memory_bytes", scale=GIB)] = None
    cuda_graph_memory_gib: Annotated[float | None, Column("logged_cuda_graph_bytes", scale=GIB)] = None
    """CUDA graph memory actually taken ("CUDA graph pool memory: X GiB (actual)", "Graph capturing ... took X GiB")."""
    started: Annotated[bool | None, Column()] = None

    @model_validator(mode="after")
    def _kv_memory_is_a_startup(self):
        """The pool figures must be those of one startup (trial11 #4: "-47.00 GiB" with a 241,568-token cache).

        vLLM computes the KV memory as requested − non-KV memory (v1/worker/gpu_worker.py 0.19.0:424-436,
        ``determine_available_memory``), with requested = util × total and non-KV ≥ 0, so it lies in
        [requested − total, requested]; and ``check_enough_kv_cache_memory`` (v1/core/kv_cache_utils.py) raises "No
        available memory for the cache blocks" at ≤ 0 before any cache size is printed.  So a figure ≤ 0 (or a
        pool of 0 blocks or tokens) belongs to a start that failed (``started: false``) and that logged no cache
        size; and no figure lies beyond the device's total memory or above the requested memory (0.01 GiB
        slack: both are printed to two decimals).

        Raises:
            PydanticCustomError: ``kv_pool_not_a_start``, naming the figure (``available_kv_cache_memory_gib …``)
                and the figure it contradicts.
        """
        a, tot, req = self.available_kv_cache_memory_gib, self.total_gpu_memory_gib, self.requested_memory_gib
        pool = [(k, v) for k, v in (("kv_cache_tokens", self.kv_cache_tokens), ("num_gpu_blocks", self.num_gpu_blocks),
                                    ("max_concurrency", self.max_concurrency)) if v]
        if a is not None and a <= 0 and pool:
            raise _not_a_start(f"available_kv_cache_memory_gib {a} is not positive, yet {pool[0][0]} is {pool[0][1]}: "
                             "vLLM stops before it sizes a cache when the KV memory is not positive ('No available "
                             "memory for the cache blocks'); a corrupted line?")
        empty = [k for k, v in (("available_kv_cache_memory_gib", a), ("kv_cache_tokens", self.kv_cache_tokens),
                                ("num_gpu_blocks", self.num_gpu_blocks)) if v is not None and v <= 0]
        if empty and self.started is not False:
            raise _not_a_start(f"{empty[0]} is {getattr(self, empty[0])}: a pool that holds nothing means the engine "
                             "did not start ('No available memory for the cache blocks'); set started: false if "
                             "the log shows the failure, else the figure is a corrupted line")
        if a is not None and tot is not None and abs(a) > tot + 0.01:
            raise _not_a_start(f"available_kv_cache_memory_gib {a} is beyond the device's total memory "
                             f"(total_gpu_memory_gib {tot}): the KV memory is requested − non-KV memory, within "
                             "± the total")
        if a is not None and req is not None and a > req + 0.01:
            raise _not_a_start(f"available_kv_cache_memory_gib {a} exceeds requested_memory_gib {req}: the KV memory "
                             "is what is left of the requested memory after the non-KV memory")
        return self


def _not_a_start(message: str) -> PydanticCustomError:
    """The problem ``kv-pool-not-a-start`` (docs/validation.md) with ``message``."""
    return PydanticCustomError("kv_pool_not_a_start", "{message}", {"message": message})


class ObservationEntry(Entry):
    """One engine startup: model, hardware, engine release, settings, logged figures, source."""

    engine: Annotated[EntryId | None, Column("engine_id")] = None
    """Engine release range id (registry/engines), e.g. ``vllm-0.9-0.16``."""
    engine_version: Annotated[str | None, Column()] = None
    model: Annotated[EntryId | None, Column("model_id")] = None
    """Registry model id; may name a model not (yet) in the registry (``kvreg import-hf``)."""
    model_hf_id: Annotated[str | None, Column()] = None
    hardware: Annotated[EntryId | None, Column("hardware_id")] = None
    gpu_name: str | None = None
    settings: Annotated[Settings, Columns()] = Settings()
    logged: Annotated[Logged, Columns()]
    unknown: list[str] = []
    """Settings the log does not determine, left for a person to fill."""
    inferred: dict[str, str] = {}
    """Field → why a value not printed in the log was filled in."""
    reproducible: Annotated[bool, Column()] = True
    """False when the record lacks a setting needed to reproduce it; ``notes`` says which."""
    release_confidence: Annotated[Literal["stated", "derived", "format", "token-rule", "given"] | None,
                                  Column()] = None
    """How ``engine`` was determined: ``stated`` (the log's version banner), ``derived`` (a banner version newer
    than any release the registry names: the last range assumed), ``format`` (V0 log format, no
    version), ``token-rule`` (only releases whose printed token rule fits the logged figures), ``given``
    (set by a person or the curated record)."""
    excerpt: str | None = None
    """The lines the figures and settings were read from, ``<line>: <text>`` (not the whole log)."""
    figures_disagree: Annotated[str | None, Column()] = None
    """Why the log is kept although its own figures disagree (kvreg/checks/208_observation_figures_disagree.sql):
    ``kvreg ingest-log --force`` writes the disagreement it overrode; a person replaces it with the reason (e.g.
    "unedited log; kvreg's layout of this model is wrong at this release, issue N").  The check then skips the
    entry; calibration still reads its figures."""
