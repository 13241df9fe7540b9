"""How an engine release range accounts KV memory, as data (registry/engines/*.yaml ``accounting:``).

Optional block of an engine entry: the ``first-principles`` pseudo-engine has
none and is never joined by the ``engine_*`` views.  Formulas and the engine
source files they come from are in ``../shared/data/engine_accounting.md``;
each YAML field cites the section it was read from.
"""

from __future__ import annotations

from typing import Annotated, Generic, Literal, TypeVar

from pydantic import Field, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.columns import Column, Columns
from kvreg.schema.common import Bytes, BytesOrZero, Dtype, Measure, Strict, Tokens

R = TypeVar("R")


class Cited(Strict, Generic[R]):
    """A rule (not a number) with where it was read: ``{value: grouped, source: eacc, note: "§3 ..."}``.

    Unlike :class:`~kvreg.schema.common.Measure` it does not go to the numeric
    provenance table; a bare value is accepted too.
    """

    value: R
    source: str | None = None
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _wrap_bare(cls, data):
        return data if isinstance(data, dict) else {"value": data}


StorageRule = Literal["always", "when_mixed", "never"]
Trigger = Literal["sliding_stored_as_full", "chunked_stored_as_full", "grouped_min_block_report", "padding_layers",
                  "recurrent_page_alignment", "recurrent_outside_pool", "k_eq_v_stored_twice", "mla_block_size",
                  "swa_pool_ratio", "does_not_start", "request_len_capped", "sliding_prefill_reserve"]


class Quirk(Strict):
    """A named accounting quirk and the sentence kvreg prints when it applies.

    ``trigger`` names a boolean column of the ``engine_capacity`` view that says
    whether the quirk changes the figure for a scenario.
    """

    id: Annotated[str, Column("quirk_id")]
    trigger: Annotated[Trigger, Column()]
    text: Annotated[str, Column()]
    source: str | None = None


class MlaBackendRule(Strict):
    """One line of a release's MLA attention-backend choice: on these devices, for these KV dtypes, this backend
    and the block it sizes the KV cache with (docs/engine.md "The MLA block").

    The rules of ``Accounting.mla_backends`` are tried in order; the first whose ``architectures`` holds the
    device's ``architecture`` (hardware entries) and whose ``kv_dtypes`` / ``sparse`` match wins — vLLM's
    priority list per compute capability with the backends that cannot serve the model skipped
    (platforms/cuda.py ``_get_backend_priorities``, each backend's ``supports_compute_capability`` and
    ``supported_kv_cache_dtypes``).  ``block_tokens`` is the block the backend leaves at the default:
    ``get_preferred_block_size(16)`` = 16 if the backend takes 16, else its smallest kernel block
    (v1/attention/backend.py 0.19.0:189-197).
    """

    backend: Annotated[str, Column()]
    architectures: Annotated[list[str], Column(join=",")] = Field(min_length=1)
    kv_dtypes: Annotated[list[Dtype] | None, Column(join=",")] = None
    """KV-cache dtypes the backend takes (absent: any)."""
    sparse: Annotated[bool | None, Column()] = None
    """True: only DeepSeek sparse attention (an indexer, ``index_head_dim``); false: only dense MLA; absent: both."""
    block_tokens: Annotated[PositiveInt, Column()]
    note: str | None = None


class MemFractionTier(Strict):
    """One device-memory tier of SGLang's defaults: below ``below`` of device memory (absent: every larger device),
    this ``chunked_prefill_size`` and ``cuda_graph_max_bs`` (``cuda_graph_max_bs_tp4`` at tp ≥ 4)."""

    below: Annotated[Measure[Bytes] | None, Column("below_bytes")] = None
    chunked_prefill_size: Annotated[Measure[Tokens], Column("chunked_prefill_tokens")]
    cuda_graph_max_bs: Annotated[Measure[PositiveInt], Column()]
    cuda_graph_max_bs_tp4: Annotated[Measure[PositiveInt] | None, Column()] = None


class MemFractionRule(Strict):
    """SGLang's default ``mem_fraction_static`` as its server arguments compute it (docs/engine.md §5):

        reserved = base + per_prefill_token · max(chunked_prefill_size, min_prefill_tokens)
                   + per_graph_batch · cuda_graph_max_bs + per_rank · tp · pp
        reserved = max(reserved, floor) on devices of more than ``floor_above``
        mem_fraction_static = round((gpu_mem − reserved) ÷ gpu_mem, decimals)

    with ``chunked_prefill_size`` (the release's default max_num_batched_tokens there) and ``cuda_graph_max_bs``
    from the first tier the device's memory is below (``ServerArgs._handle_gpu_memory_settings``).
    """

    tiers: list[MemFractionTier] = Field(min_length=1)
    base: Annotated[Measure[Bytes], Column("base_bytes")]
    per_prefill_token: Annotated[Measure[Bytes], Column("per_prefill_token_bytes")]
    min_prefill_tokens: Annotated[Measure[Tokens], Column()]
    per_graph_batch: Annotated[Measure[Bytes], Column("per_graph_batch_bytes")]
    per_rank: Annotated[Measure[Bytes], Column("per_rank_bytes")]
    floor: Annotated[Measure[Bytes], Column("floor_bytes")]
    floor_above: Annotated[Measure[Bytes], Column("floor_above_bytes")]
    decimals: Annotated[Measure[Annotated[int, Field(ge=0)]], Column()] = Measure(value=3)
    source: str | None = None
    note: str | None = None


class CudagraphProfile(Strict):
    """vLLM's CUDA-graph memory estimate (``profile_cudagraph_memory``) as a rule (docs/engine.md §CUDA graphs).

    The arithmetic is the scalar macros ``engine_cudagraph_capture_sizes`` and
    ``engine_cudagraph_estimate_bytes`` (kvreg/sql/204_engine_reserve.sql), per TP rank, in bytes:

    sizes   = [1, 2, 4] + range(8, 256, 8) + range(256, M + 1, 16) (≤ M), M = min(2·N·q, max_capture_size, T)
    n_pw    = len(sizes); n_full = #{s in sizes: q ≤ s ≤ q·N}        # q = 1 + num_speculative_tokens
    g_pw    = max(piecewise_per_layer · layers, min_per_graph); g_full likewise
    first_pw   = torch_workspace + forward(S) + g_pw                 # S = largest size
    first_full = splits · S_full · heads/tp · v_width · 4 + g_full  # FA3 split-KV accumulators, fp32
    estimate   = max(first_pw, first_full) + (n_pw − 1)·g_pw + (n_full − 1)·g_full   (0 with enforce_eager)
    """

    subtracted: Annotated[Cited[bool], Column()]
    """The release subtracts the estimate before sizing the KV pool (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS)."""
    max_capture_size: Annotated[Measure[PositiveInt], Column()]
    """Ceiling of the default capture sizes (max_cudagraph_capture_size = min(2·N·q, this, T))."""
    append_max_num_seqs: Annotated[Cited[bool], Column()] = Cited(value=False)
    """max_num_seqs itself is captured when it fits under the ceiling (uniform decode size, ≥ 0.33)."""
    piecewise_per_layer: Annotated[Measure[BytesOrZero], Column("piecewise_per_layer_bytes")]
    """Memory each further PIECEWISE graph takes, per model layer (driver memory of its 2·layers + 1 pieces)."""
    full_per_layer: Annotated[Measure[BytesOrZero], Column("full_per_layer_bytes")]
    """Memory each further FULL graph takes, per model layer."""
    min_per_graph: Annotated[Measure[BytesOrZero], Column("min_per_graph_bytes")] = Measure(value=0)
    """The per-graph floor the profiler applies (``max(sample, 1 MiB)``)."""
    split_kv_splits: Annotated[Measure[Annotated[int, Field(ge=0)]], Column()] = Measure(value=0)
    """FlashAttention-3 split-KV accumulator splits in FULL graphs (0: none)."""
    split_kv_hardware_architectures: Annotated[list[str], Column("split_kv_hardware", join=",")] = []
    """Hardware ``architecture`` values on which the split-KV backend (FA3) is chosen."""
    split_kv_excluded_model_architectures: Annotated[list[str], Column("split_kv_excluded_models", join=",")] = []
    """Model architectures for which the backend is not FlashAttention (bidirectional multimodal prefix)."""
    split_kv_max_head_dim: Annotated[Measure[PositiveInt], Column()] = Measure(value=256)
    """Largest head size the split-KV backend supports (larger heads take another backend)."""


class ReserveModel(Strict):
    """What the engine holds back from its claim before the KV pool (engine_accounting.md §1; docs/engine.md).

    The arithmetic is the scalar macro ``engine_reserve_bytes`` (kvreg/sql/204_engine_reserve.sql),
    per TP rank, in bytes, with T = max_num_batched_tokens, N = max_num_seqs, V = vocab, h = hidden:

    reserve = non_torch(tp)                              # non-torch growth during the profile run
              + torch_workspace                          # cuBLAS/cuBLASLt workspaces (persistent)
              + moe_workspace(T, top-k, moe I / tp, h)   # vLLM's persistent fused-MoE workspace
              + max(forward, sampler)                    # the larger of the two dummy runs
              + cudagraph                                # only where the release subtracts it: the flat
                                                         # value, or cudagraph_profile's estimate
    forward = T·(forward_hidden_tensors·h + forward_intermediate_tensors·I/tp)·act_bytes
              + activation_bytes_per_token_hidden·h·T
    sampler = sampler_bytes_per_seq_vocab·N·V + 4·rows(N)·V + [profile_hidden_kept]·T·h·act_bytes
    The torch peak is the larger dummy run because the forward's activations are freed before
    the sampler runs (gpu_model_runner.profile_run), but its output hidden states are not.
    """

    non_torch: Annotated[Measure[BytesOrZero], Column("non_torch_bytes")]
    """Non-torch memory growth during the profile run at TP 1 (CUDA context, kernel modules)."""
    non_torch_multi_gpu: Annotated[Measure[BytesOrZero] | None, Column("non_torch_multi_gpu_bytes")] = None
    """The same per rank at TP 2 inside a GPU link domain (NVLink: NCCL, symmetric-memory, custom all-reduce buffers); absent = non_torch."""
    non_torch_multi_gpu_pcie: Annotated[Measure[BytesOrZero] | None, Column("non_torch_multi_gpu_pcie_bytes")] = None
    """Per rank at TP > 1 on devices without a GPU link domain (PCIe); absent = non_torch."""
    non_torch_per_extra_rank: Annotated[Measure[BytesOrZero], Column("non_torch_per_extra_rank_bytes")] = \
        Measure(value=0)
    """Added per rank for each rank beyond 2 (NCCL buffers per peer)."""
    torch_workspace: Annotated[Measure[BytesOrZero], Column("torch_workspace_bytes")] = Measure(value=0)
    """Persistent torch allocations of the first matmuls (cuBLAS + cuBLASLt workspaces)."""
    activation_bytes_per_token_hidden: Annotated[Measure[Annotated[float, Field(ge=0)]],
                                                 Column(after="non_torch_bytes")] = Measure(value=0.0)
    """Fitted forward term (engines whose forward is not modelled by geometry: V0, SGLang, TRT-LLM)."""
    forward_hidden_tensors: Annotated[Measure[Annotated[float, Field(ge=0)]], Column()] = Measure(value=0.0)
    """Live T × hidden activation tensors at the forward's peak (residual, normed input, output)."""
    forward_intermediate_tensors: Annotated[Measure[Annotated[float, Field(ge=0)]], Column()] = Measure(value=0.0)
    """Live T × (intermediate ÷ tp) tensors at the forward's peak (gate_up = 2, activation = 1)."""
    sampler_bytes_per_seq_vocab: Annotated[Measure[Annotated[float, Field(ge=0)]],
                                           Column(after="activation_bytes_per_token_hidden")] = Measure(value=0.0)
    """Bytes per max_num_seqs × vocab element alive at the dummy sampler run's peak."""
    sampler_buffer_rows: Annotated[Measure[Annotated[int, Field(ge=0)]], Column()] = Measure(value=0)
    """Rows (of vocab fp32) of the Triton top-k/top-p kernel's cached buffer: min(next_pow2(min(SMs, N)), SMs)."""
    profile_hidden_kept: Annotated[Cited[bool], Column()] = Cited(value=False)
    """The forward's T × hidden output is still alive while the sampler runs."""
    moe_workspace: Annotated[Cited[Literal["none", "triton_persistent"]], Column()] = Cited(value="none")
    """MoE workspace that outlives the forward (vLLM WorkspaceManager, TritonExperts.workspace_shapes)."""
    cudagraph: Annotated[Measure[BytesOrZero], Column("cudagraph_bytes", after="sampler_bytes_per_seq_vocab")]
    """Flat CUDA-graph memory subtracted before the KV pool where no ``cudagraph_profile`` is given (0: none)."""
    cudagraph_profile: Annotated[CudagraphProfile | None, Columns("cudagraph_", present="cudagraph_profiled")] = None
    """The release's CUDA-graph estimate as vLLM's profiler computes it; replaces ``cudagraph`` where subtracted."""


class CompressedMla(Strict):
    """How a release lays out DeepSeek-V4's compressed attention (a model with ``full`` groups that carry
    ``compress``): vLLM 0.22–0.26's layer-tuple layout or 0.33's block-outermost packing (``layout``; docs/engine.md
    "DeepSeek-V4: layer tuples", "DeepSeek-V4 in 0.33: block-outermost packing").

    Every V4 layer keeps a sliding-window cache (``SlidingWindowMLASpec``, its own block of
    ``sliding_block_tokens``); a compressed layer (ratio r) an ``MLAAttentionSpec`` of ``block_tokens``
    tokens = ``block_tokens / r`` entries, at r = 4 also the indexer key's; each compressor a
    ``SlidingWindowMLASpec`` over its ``state_windows`` rows with the block ``state_block_tokens`` gives for
    its ratio (``state_ratios``, ``state_block_tokens`` and ``state_windows`` pair by position).  Every page is rounded up to
    ``page_alignment`` bytes.  The MLA pages form one group; the sliding sets are padded to the nearest MLA
    page and split into groups of layer tuples (v1/core/kv_cache_utils.py 0.22.0:1420-1591); in 0.33 they are
    packed unpadded (v1/core/kv_cache_planning.py 0.33.0:914-1040).
    """

    layout: Annotated[Cited[Literal["layer_tuples", "block_outermost"]], Column()] = Cited(value="layer_tuples")
    """How the caches share a block: ``layer_tuples`` (0.22–0.32: sliding pages padded to the MLA pages, groups of
    layer tuples, v1/core/kv_cache_utils.py 0.22.0:1493-1591) or ``block_outermost`` (0.33: every group's pages packed
    side by side in one block of the widest group's bytes, v1/core/kv_cache_planning.py 0.33.0:914-1040)."""
    kv_dtypes: Annotated[list[Dtype], Column(join=",")] = Field(min_length=1)
    """KV dtypes the layout takes (0.22: fp8 only, converted to fp8_ds_mla; others: no engine figure)."""
    block_tokens: Annotated[Measure[PositiveInt], Column("block_tokens")]
    """The cache block of the compressed (MLA) layers: the sparse SWA backend's preferred block."""
    sliding_block_tokens: Annotated[Measure[PositiveInt], Column("sliding_block_tokens")]
    """The sliding-window cache's own block (DeepseekV4SWACache.block_size)."""
    entry_bytes: Annotated[Measure[Bytes], Column("entry_bytes")]
    """Bytes of one stored 512-wide KV entry in the fp8_ds_mla layout (448 fp8 + 64 bf16 rope + 8 B scales)."""
    page_alignment: Annotated[Measure[Bytes], Column("page_alignment_bytes")]
    """Every page (KV, indexer, compressor state) is rounded up to a multiple of this."""
    state_ratios: Annotated[Cited[list[PositiveInt]], Column(join=",")]
    """Compress ratios the compressor state cache takes."""
    state_block_tokens: Annotated[Cited[list[PositiveInt]], Column(join=",")]
    """The compressor state's block (tokens) at each of ``state_ratios``, by position."""
    state_windows: Annotated[Cited[list[PositiveInt]], Column(join=",")]
    """The compressor state's window (tokens it keeps: coff·ratio) at each of ``state_ratios``, by position."""
    source: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _paired(self):
        n = len(self.state_ratios.value)
        if not n or len(self.state_block_tokens.value) != n or len(self.state_windows.value) != n:
            raise PydanticCustomError("unpaired_lists", "state_ratios, state_block_tokens and state_windows pair by position",
                                      {"path": "state_block_tokens",
                                       "hint": "one block size and one window per ratio, in the same order"})
        return self


class RunningRequestsRule(Strict):
    """SGLang's default ``max_running_requests`` where the user sets none (docs/engine.md "Admission"):

        pool     = min(max(floor(T ÷ L × per_context), min_requests), max_requests)   (ReqToTokenPool size)
        running  = min(T // pool_divisor, pool)

    T = max_total_num_tokens (the logged pool), L = context_len (max_model_len).  0.5.x: ModelRunner.init_memory_pool
    sizes the ReqToTokenPool (python/sglang/srt/model_executor/model_runner.py) and TpModelWorker.__init__
    (managers/tp_worker.py) takes max_running_requests = min(max_total_num_tokens // 2, req_to_token_pool.size);
    later releases keep the rule in ``_resolve_max_num_reqs`` (min(estimated, token_capacity // 2)).
    """

    pool_divisor: Annotated[Measure[PositiveInt], Column()]
    per_context: Annotated[Measure[PositiveInt], Column()]
    min_requests: Annotated[Measure[PositiveInt], Column()]
    max_requests: Annotated[Measure[PositiveInt], Column()]
    source: str | None = None
    note: str | None = None


class Accounting(Strict):
    """How one engine release range sizes, splits and reports its KV pool (engine_accounting.md)."""

    release_first: Annotated[str, Column()]
    release_last: Annotated[str | None, Column()] = None
    util_basis: Annotated[Cited[Literal["total", "free", "free_before_load"]], Column()]
    block_size_mla: Annotated[Measure[PositiveInt] | None, Column("block_size_mla_tokens")] = None
    """MLA block (tokens) where no ``mla_backends`` rule names the device (no device given, a non-CUDA device)."""
    mla_backends: Cited[list[MlaBackendRule]] | None = None
    """The MLA backend and its block per device architecture and KV dtype, first match wins (absent: every
    device gets ``block_size_mla``)."""
    block_sizes: Annotated[Cited[list[PositiveInt]] | None, Column(join=",")] = None
    """Block sizes (tokens) the release accepts for ``--block-size`` on CUDA; absent = kvreg does not model the
    knob for this engine (fit/plan/report refuse it there)."""
    block_size_mla_forced: Annotated[Cited[bool], Column()] = Cited(value=False)
    """True where the platform overrides any block size (the user's too) with the MLA backend's own
    (vLLM ≤0.16: platforms/cuda.py check_and_update_config); false where a user's ``--block-size`` is kept and
    a backend supporting it is chosen (≥0.17)."""
    hybrid_allocator: Annotated[Cited[Literal["none", "grouped", "swa_pools"]], Column(after="block_size_mla_tokens")]
    group_size_rule: Annotated[Cited[Literal["min", "max_if_below_1_5_min"]], Column()] = Cited(value="min")
    swa_pool_ratio: Annotated[Measure[Annotated[float, Field(gt=0, le=1)]] | None, Column()] = None
    sliding_as_full: Annotated[Cited[StorageRule], Column()]
    chunked_as_full: Annotated[Cited[StorageRule], Column()]
    k_eq_v_stored_once: Annotated[Cited[bool], Column()] = Cited(value=False)
    recurrent_in_pool: Annotated[Cited[bool], Column()]
    recurrent_alignment_tokens: Annotated[Measure[PositiveInt] | None, Column()] = None
    recurrent_alignment_rule: Annotated[Cited[Literal["fixed", "at_least_block_size"]],
                                        Column(after="block_size_mla_forced")] = Cited(value="fixed")
    """How the hybrid attention block is aligned: ``fixed`` = multiples of recurrent_alignment_tokens
    (≤0.19 HybridAttentionMambaModelConfig); ``at_least_block_size`` = multiples of max(that, block size)
    (≥0.20 Platform._align_hybrid_block_size: kernel_block_alignment_size = max(min kernel block, block_size))."""
    recurrent_blocks_per_request: Annotated[Measure[PositiveInt], Column()] = Measure(value=1)
    sliding_extra_blocks: Annotated[Measure[Annotated[int, Field(ge=0)]], Column()] = Measure(value=1)
    window_batched_tokens_factor: Annotated[Measure[PositiveInt], Column()] = Measure(value=1)
    max_num_batched_tokens: Annotated[Measure[Tokens], Column()]
    """Default tokens per scheduler step (the profile run's batch, T of the window formula)."""
    mem_fraction_rule: Annotated[MemFractionRule | None, Columns("mem_fraction_", last=True)] = None
    """Where given, the default gpu_memory_utilization and max_num_batched_tokens per device and tp come from this
    rule (SGLang's mem_fraction_static and chunked_prefill_size); absent: the engine's one value and the
    large-GPU defaults."""
    max_num_seqs: Annotated[Measure[PositiveInt], Column()]
    """Default cap on running sequences (vLLM ``max_num_seqs``); where ``running_requests_rule`` is given, admission
    uses that rule instead when the knob is not set, and this value feeds only the reserve model's per-sequence terms."""
    running_requests_rule: Annotated[RunningRequestsRule | None,
                                     Columns("running_requests_")] = None
    """Where given, the default cap on running requests comes from the pool the release sizes (SGLang)."""
    long_request: Annotated[Cited[Literal["refuse_start", "cap_request_len"]], Column()] = Cited(value="refuse_start")
    """What the release does when one request of max_model_len does not fit its KV pool: ``refuse_start`` (vLLM's
    check_enough_kv_cache_memory raises at start-up) or ``cap_request_len`` (it starts and caps the request length to
    what the pool holds: SGLang tp_worker.py max_req_len, TensorRT-LLM resource_manager.py
    _validate_and_adjust_attention_windows)."""
    large_gpu_min_bytes: Annotated[Measure[Bytes] | None, Column()] = None
    """From this much device memory the larger defaults below apply (vLLM get_batch_defaults)."""
    large_gpu_excludes: Annotated[list[str], Column(join=",")] = []
    """Hardware id prefixes excluded from the large defaults (vLLM excludes "a100" by device name)."""
    max_num_batched_tokens_large_gpu: Annotated[Measure[Tokens] | None, Column()] = None
    max_num_seqs_large_gpu: Annotated[Measure[PositiveInt] | None, Column()] = None
    logged_tokens_rule: Annotated[Cited[Literal["blocks_x_block_size", "blocks_per_group_x_min_block_size",
                                      "concurrency_x_len"]], Column()]
    concurrency_rule: Annotated[Cited[Literal["tokens_over_len", "blocks_over_request_blocks"]], Column()]
    null_block_in_fit_check: Annotated[Cited[bool], Column()] = Cited(value=False)
    frees_out_of_window_blocks: Annotated[Cited[bool], Column()] = Cited(value=False)
    """True where the scheduler frees a request's blocks that fall behind a sliding window (or before the current
    attention chunk) as it decodes (vLLM V1 SlidingWindowManager / ChunkedLocalAttentionManager
    remove_skipped_blocks), so the sequences it keeps running at max_model_len are bounded by the window, not by the
    start-up figure's worst case (W − 1 + max_num_batched_tokens per sliding group for every request)."""
    available_log_decimals: Annotated[Measure[Annotated[int, Field(ge=0)]] | None, Column()] = None
    rope_cache_bytes_per_element: Annotated[Measure[PositiveInt] | None, Column()] = None
    """Bytes per element of the rotary cos/sin cache the release keeps on the device (a buffer every rank holds
    whole, in the engine's weights per rank); absent = the model dtype, as vLLM registers it
    (rotary_embedding/base.py 0.19.0:59-63).  SGLang 0.5.x keeps it fp32 on CUDA and HIP: 4."""
    mla_absorbed_copy: Annotated[Cited[bool], Column()] = Cited(value=False)
    """The release keeps, per rank, a 16-bit copy of a quantized MLA kv_b_proj beside it (the absorbed W_UK_T / W_UV it
    decodes with): ``process_weights_after_loading`` dequantizes kv_b_proj into the activation dtype and keeps the
    result (vLLM 0.8.4 v1/attention/backends/mla/common.py:660-709, attention/backends/mla/common.py:1080-1129:
    "we just store fp16/bf16 copies"), inside "Model loading took" (model_loader/loader.py:471 runs it within load_model, gpu_model_runner.py:1277-1291).  An
    unquantized kv_b_proj is only viewed, no copy.  The same in 0.11.0, 0.19.0 and 0.22.0 (vllm-0.9-0.16, inherited by
    the later V1 entries).  Bytes: 035 ``mla_absorbed_bytes_per_rank``.  Absent: false (no copy counted: SGLang,
    TensorRT-LLM and vLLM V0 are not read for it)."""
    reserve: Annotated[ReserveModel, Columns()]
    compressed_mla: Annotated[CompressedMla | None, Columns("compressed_", present="compressed_mla_modelled")] = None
    """DeepSeek-V4's compressed-attention layout (absent: the release's engine figures leave such models out)."""
    quirks: list[Quirk] = []

    @model_validator(mode="after")
    def _swa_ratio(self):
        if self.hybrid_allocator.value == "swa_pools" and self.swa_pool_ratio is None:
            raise PydanticCustomError("missing", "hybrid_allocator swa_pools needs swa_pool_ratio",
                                      {"path": "swa_pool_ratio",
                                       "hint": "SGLang's default swa_full_tokens_ratio is 0.8 (engine_accounting.md §8)"})
        return self


def cited_sources(acc: Accounting) -> list[tuple[str, str]]:
    """(key path, source id) of every :class:`Cited` rule and quirk that names a source."""
    out = []
    for name in type(acc).model_fields:
        v = getattr(acc, name)
        if isinstance(v, Cited) and v.source:
            out.append((f"accounting.{name}", v.source))
    for name in type(acc.reserve).model_fields:
        v = getattr(acc.reserve, name)
        if isinstance(v, Cited) and v.source:
            out.append((f"accounting.reserve.{name}", v.source))
    out += [(f"accounting.quirks.{i}", q.source) for i, q in enumerate(acc.quirks) if q.source]
    return out
