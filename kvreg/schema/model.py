"""A model entry: layer-by-layer attention geometry plus sizes (registry/models/*.yaml).

Each layer group has a ``kind`` that prices memory its own way (DESIGN.md,
"Models: layers by kind"): ``full``, ``sliding`` (window), ``chunked`` (chunk),
``mla`` (latent; with ``index_head_dim`` also a sparse-attention indexer key cache), ``full`` with
``compress`` (one stored entry per ``compress`` tokens: DeepSeek-V4's compressed attention), ``recurrent`` (constant state), ``shared`` (reuses another
layer's KV, stores nothing), ``mlp`` (no token mixer at all, stores nothing:
Nemotron-H counts its MLP-only and MoE-only blocks as layers).  Group counts sum to ``layers`` unless a group
``shares_layers`` (Falcon-H1 runs attention and Mamba2 in the same layers).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.columns import Column, Columns, Rows
from kvreg.schema.common import Bytes, Count, Dtype, Entry, EntryId, Measure, Strict, Tokens

Kind = Literal["full", "sliding", "chunked", "mla", "recurrent", "shared", "mlp"]

# Which optional fields each kind accepts; anything else set on a group is an
# error, so a window written on a full layer is never silently ignored.
KIND_FIELDS: dict[str, set[str]] = {
    "full": {"kv_heads", "head_dim", "v_head_dim", "k_eq_v", "compress", "index_head_dim"},
    "sliding": {"kv_heads", "head_dim", "v_head_dim", "k_eq_v", "window"},
    "chunked": {"kv_heads", "head_dim", "v_head_dim", "k_eq_v", "chunk"},
    "mla": {"kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "kv_heads", "head_dim", "v_head_dim", "index_head_dim"},
    "recurrent": {"state", "variant", "compress"},
    "shared": {"kv_heads", "head_dim", "v_head_dim", "k_eq_v", "reuses"},
    "mlp": set(),
}
REQUIRED: dict[str, set[str]] = {
    "full": {"kv_heads", "head_dim"},
    "sliding": {"kv_heads", "head_dim", "window"},
    "chunked": {"kv_heads", "head_dim", "chunk"},
    "mla": {"kv_lora_rank", "qk_rope_head_dim"},
    "recurrent": {"state"},
    "shared": set(),
    "mlp": set(),
}
OPTIONAL_ANY = {"kind", "count", "shares_layers", "note"}


VOCAB_RANGE = (256, 2**24)
"""Plausible vocabulary sizes: from byte-level (256) to 16.8M (the largest shipped is 262,400, Gemma);
outside it a typo (8, 623e9) would silently move weight and logit sizes."""
HEAD_DIM_RANGE = (8, 4096)
"""Plausible per-head sizes (shipped: 64 to 512); a head_dim beyond them is a typo, not a model."""
HeadDim = Annotated[int, Field(ge=HEAD_DIM_RANGE[0], le=HEAD_DIM_RANGE[1])]


class StateTensor(Strict):
    """One per-sequence state tensor of a recurrent layer (shape in elements).

    ``role`` is ``ssm`` (the recurrent matrix state, e.g. Gated DeltaNet
    Hv × dk × dv) or ``conv`` (the short convolution's (kernel−1) × channels
    window).  ``split_axis`` is the axis tensor parallelism divides (heads or
    channels); default 0 for ssm, 1 for conv (vLLM MambaStateShapeCalculator).
    """

    role: Annotated[Literal["ssm", "conv"], Column()]
    shape: Annotated[list[PositiveInt], Field(min_length=1)]
    dtype: Annotated[Dtype, Column()]
    split_axis: int | None = None

    @model_validator(mode="after")
    def _axis(self):
        axis = self.split_axis if self.split_axis is not None else (0 if self.role == "ssm" else 1)
        if not 0 <= axis < len(self.shape):
            raise PydanticCustomError("bad_axis", "split_axis {axis} is outside shape {shape}",
                                      {"axis": axis, "shape": self.shape, "path": "split_axis",
                                       "hint": "use 0 for the heads axis of an ssm state, 1 for conv channels"})
        return self

    @property
    def axis(self) -> int:
        return self.split_axis if self.split_axis is not None else (0 if self.role == "ssm" else 1)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


class LayerGroup(Strict):
    """``count`` layers of one kind and one geometry (per layer, per token)."""

    kind: Annotated[Kind, Column()]
    count: Annotated[PositiveInt, Column("layer_count")]
    kv_heads: Annotated[PositiveInt | None, Column()] = None
    head_dim: Annotated[HeadDim | None, Column()] = None
    v_head_dim: Annotated[HeadDim | None, Column()] = None
    k_eq_v: Annotated[bool | None, Column(fill=False)] = None
    window: Annotated[Tokens | None, Column("window_tokens")] = None
    chunk: Annotated[Tokens | None, Column("chunk_tokens")] = None
    kv_lora_rank: Annotated[PositiveInt | None, Column()] = None
    q_lora_rank: Annotated[PositiveInt | None, Column()] = None
    """MLA's query low-rank width (config ``q_lora_rank``; DeepSeek-V2/V3/R1, Kimi K2: 1536; absent = a full-rank
    q_proj, DeepSeek-V2-Lite).  Prices the query down-projection q_a_proj [q_lora_rank, hidden] that every TP rank
    holds whole (vLLM deepseek_v2.py 0.8.4:379-391: ``ReplicatedLinear``; q_b_proj is column-parallel); kvreg/weights.py."""
    qk_rope_head_dim: Annotated[PositiveInt | None, Column()] = None
    index_head_dim: Annotated[PositiveInt | None, Column()] = None
    """DeepSeek sparse attention (V3.2, GLM-5): the lightning indexer's per-token key width.  Its
    key cache is stored beside the MLA latent as fp8 plus one fp32 scale per 128 values, whatever
    the KV dtype (vLLM deepseek_v2.py ``Indexer``: ``head_dim + head_dim // quant_block_size * 4``
    bytes of uint8, quant_block_size 128).  On a DeepSeek-V4 compressed ``full`` group (compress 4) the
    same 132-byte key is stored once per ``compress`` tokens (models/deepseek_v4/attention.py
    ``DeepseekV4Indexer``: ``k_cache_head_dim = head_dim + head_dim // 128 * 4``)."""
    compress: Annotated[PositiveInt | None, Column("compress_tokens")] = None
    """DeepSeek-V4 compressed attention (a ``full`` group): one KV entry (and, with ``index_head_dim``,
    one indexer key) is stored per ``compress`` tokens, so the per-token bytes are the entry's ÷
    compress (vLLM models/deepseek_v4/attention.py ``get_kv_cache_spec``: ``MLAAttentionSpec``
    with ``tokens_per_state=compress_ratio``; ``DeepseekV4IndexerCache`` likewise).  On a ``recurrent`` group
    (variant ``compressor``) the ratio of the compressor whose running state it holds: the engine family
    sizes that state's cache block by it (models/deepseek_v4/compressor.py ``CompressorStateCache``:
    block 4 at ratio 4, 8 at ratio 128), the first-principles bytes never read it."""
    state: list[StateTensor] | None = None
    variant: Annotated[str | None, Column()] = None
    reuses: Annotated[str | None, Column()] = None
    shares_layers: Annotated[bool, Column(after="layer_count")] = False
    note: str | None = None

    @model_validator(mode="after")
    def _fields_fit_kind(self):
        given = {k for k in type(self).model_fields if getattr(self, k) not in (None, False)} - OPTIONAL_ANY
        extra = given - KIND_FIELDS[self.kind]
        if extra:
            key = sorted(extra)[0]
            raise PydanticCustomError(
                "field_not_for_kind", "'{key}' does not apply to a '{kind}' layer group",
                {"key": key, "kind": self.kind, "path": key,
                 "hint": f"a {self.kind} group takes {sorted(KIND_FIELDS[self.kind])}; "
                         "did you mean another kind (sliding has window, chunked has chunk)?"})
        missing = REQUIRED[self.kind] - given
        if missing:
            key = sorted(missing)[0]
            raise PydanticCustomError(
                "missing", "a '{kind}' layer group needs '{key}'",
                {"key": key, "kind": self.kind, "path": key,
                 "hint": f"a {self.kind} group requires {sorted(REQUIRED[self.kind])}"})
        return self


class Moe(Strict):
    """Mixture-of-experts routing: ``experts`` routed experts, ``experts_per_token`` active."""

    experts: Annotated[PositiveInt, Column()]
    experts_per_token: Annotated[PositiveInt, Column()]
    shared_experts: Annotated[int, Column()] = 0
    intermediate_size: Annotated[PositiveInt | None, Column(table="model_profile_geometry")] = None
    """Each routed expert's FFN width (config moe_intermediate_size); sizes vLLM's MoE workspace."""


# Tensor groups a checkpoint rule prices separately (kvreg/weights.py derives their elements).
TensorGroup = Literal["embed", "lm_head", "attention", "recurrent", "mlp", "router", "norms", "towers"]
# Linear layers inside the decoder blocks: what a quantization config quantizes unless it says
# otherwise (llm-compressor ``targets: Linear`` with ``ignore: [lm_head]``; AutoAWQ/GPTQ quantize
# the blocks' nn.Linear only; ModelOpt ``exclude_modules``).  Router gates are in nearly every
# published ignore list (``re:.*mlp.gate$``), embeddings are not nn.Linear.
QUANTIZED_DEFAULT: list[str] = ["attention", "recurrent", "mlp"]


class Quantization(Strict):
    """How a checkpoint's quantized tensors are stored (its config's ``quantization_config``).

    Bytes per quantized element = ``weight_bits``/8 + (scale bytes + zero-point bytes) / ``group_size``;
    ``group_size`` None means one scale per output channel (per-channel fp8/int8), priced as one
    scale per ``hidden_size`` inputs.  ``tensor_scales`` fp32 scalars per quantized tensor (NVFP4's
    global scale, per-tensor fp8) are counted per linear.  Examples: NVFP4 = 4 bits, group 16,
    scale fp8 (+1 fp32 global, + input global); MXFP4 = 4 bits, group 32, e8m0 scale (1 byte,
    written fp8 here); GPTQ/AWQ int4 = 4 bits, group 128, fp16 scales (+ int4 zeros if asymmetric);
    block fp8 (DeepSeek/Qwen ``weight_block_size`` [128, 128]) = 8 bits, group 16384, fp32 scale.
    """

    method: Annotated[str, Column()]
    weight_bits: Annotated[Literal[2, 3, 4, 8, 16], Column()]
    group_size: Annotated[PositiveInt | None, Column()] = None
    scale_dtype: Annotated[Dtype, Column()] = "fp32"
    zero_points: Annotated[bool, Column(fill=False)] = False
    tensor_scales: int = Field(default=0, ge=0)
    quantized: Annotated[list[TensorGroup], Rows("checkpoint_quantized", "tensor_group")] = Field(
        default_factory=lambda: list(QUANTIZED_DEFAULT))
    note: str | None = None


class Checkpoint(Strict):
    """One published checkpoint of the model: its precision, quantization and (if measured) bytes.

    ``weights_dtype`` is the precision a scenario names (bf16, fp8, int8, int4, nvfp4, mxfp4);
    ``default: true`` picks it among several of one precision (the first listed otherwise).
    ``bytes`` is the whole checkpoint as stored (``model.safetensors.index.json``
    ``metadata.total_size``, or a logged per-rank load at TP 1); without it the per-tensor rule
    (``quantization``, or the precision's whole width when absent) derives the bytes.
    """

    hf_id: Annotated[str | None, Column()] = None
    weights_dtype: Annotated[Dtype, Column()]
    default: bool = False
    quantization: Annotated[Quantization | None, Columns()] = None
    bytes: Annotated[Measure[Bytes] | None, Column("checkpoint_bytes")] = None
    note: str | None = None


class RopeCache(Strict):
    """One rotary cos/sin cache vLLM keeps on the GPU: ``positions`` × ``rotary_dim`` values.

    vLLM 0.19.0 ``rotary_embedding/base.py`` lines 59-63 registers ``cos_sin_cache``
    [max_position, rotary_dim] as a buffer (counted in "Model loading took"), cast to the model
    dtype unless the FlashInfer path keeps it fp32; one per distinct rope (``_ROPE_DICT``).
    Linear and YaRN scaling extend it to max_position × factor (``linear_scaling_rope.py`` line 85,
    ``yarn_scaling_rope.py`` line 78, ``deepseek_scaling_rope.py`` line 104).
    """

    positions: Tokens
    rotary_dim: PositiveInt
    dtype: Dtype | None = None
    note: str | None = None


def _legacy_checkpoints(value):
    """``{dtype: size}``, the first registry form, → checkpoints with measured bytes.

    Kept so that ``kvreg diff`` can still read registry revisions written before checkpoints
    became a list; the published JSON Schema and every shipped entry use the list.
    """
    if isinstance(value, dict):
        return [{"weights_dtype": k, "bytes": v} for k, v in value.items()]
    return value


class ModelEntry(Entry):
    """A model architecture.  Sizes in base units (parameters, tokens, bytes).

    Weights: ``params_total`` counts the language model (what ``kvreg import-hf`` counts);
    ``towers`` adds vision/audio encoders by name (parameters, kept in 16-bit by published
    quantization recipes); ``tied_embeddings`` true stores embeddings and lm_head once (absent:
    untied); ``attention_output_gate`` true when q_proj also projects a per-head output gate
    (Qwen3-Next / Qwen3.5: heads × head_dim more q weights); ``checkpoints`` lists the published checkpoints (:class:`Checkpoint`);
    ``rope_caches`` the rotary buffers vLLM allocates (absent: one of native context × the
    largest attention head_dim).  kvreg/weights.py lays these out as tensor groups.
    """

    hf_id: Annotated[str | None, Column()] = None
    family: Annotated[str | None, Column()] = None
    architecture: Annotated[str | None, Column()] = None
    layers: Annotated[PositiveInt, Column()]
    hidden_size: Annotated[PositiveInt, Column()]
    vocab_size: Annotated[Annotated[int, Field(ge=VOCAB_RANGE[0], le=VOCAB_RANGE[1])] | None, Column()] = None
    intermediate_size: Annotated[PositiveInt | None, Column(table="model_profile_geometry")] = None
    """Dense FFN width (config intermediate_size); sizes the engine's profile-run activation peak."""
    attention_heads: Annotated[PositiveInt | None, Column()] = None
    native_context: Annotated[Measure[Tokens], Column("native_context_tokens")]
    params_total: Annotated[Measure[Count], Column()]
    params_active: Annotated[Measure[Count] | None, Column(fallback="params_total")] = None
    dtype: Annotated[Dtype, Column()] = "bf16"
    tied_embeddings: bool | None = None
    attention_output_gate: bool = False
    checkpoints: Annotated[list[Checkpoint], BeforeValidator(_legacy_checkpoints)] = []
    towers: dict[str, Measure[Count]] = {}
    rope_caches: list[RopeCache] = []
    moe: Annotated[Moe | None, Columns("moe_")] = None
    layer_groups: Annotated[list[LayerGroup], Field(min_length=1)]
    derived_fields: list[str] = []
    draft_for: Annotated[EntryId | None, Column()] = None
    """The registry model this entry is a speculative-decoding draft of (an EAGLE head, an MTP head): it runs
    inside that target's engine and KV pool (observation ``settings.draft_model``, ``served_models`` role
    ``draft``), never alone, so ``kvreg plan`` / ``kvreg fit`` refuse it (kvreg/fit.py ``check_servable``)."""

    @model_validator(mode="after")
    def _layers_sum(self):
        total = sum(g.count for g in self.layer_groups if not g.shares_layers)
        if total != self.layers:
            raise PydanticCustomError(
                "layer_sum", "layer groups sum to {total} layers but layers is {layers}",
                {"total": total, "layers": self.layers, "path": "layer_groups",
                 "hint": "each layer belongs to exactly one group; mark a group shares_layers: true "
                         "only when it runs inside layers already counted (Falcon-H1)"})
        for i, g in enumerate(self.layer_groups):
            heads = self.attention_heads
            if g.kv_heads and heads and (g.kv_heads > heads or heads % g.kv_heads):
                # Grouped-query attention shares each KV head among heads / kv_heads query heads:
                # kv_heads divides the query heads (HF LlamaAttention: num_key_value_groups =
                # num_attention_heads // num_key_value_heads, transformers modeling_llama.py).
                raise PydanticCustomError(
                    "bad_geometry", "kv_heads {kv} does not divide the {heads} attention heads",
                    {"kv": g.kv_heads, "heads": heads, "path": f"layer_groups.{i}.kv_heads",
                     "hint": "kv_heads is num_key_value_heads: at most attention_heads and a divisor of it "
                             "(8 of 32 for Llama 3.1 8B); check both against config.json"})
        seen: set[tuple[str, bool]] = set()
        for i, c in enumerate(self.checkpoints):
            if c.default and (c.weights_dtype, True) in seen:
                raise PydanticCustomError(
                    "two_defaults", "two checkpoints of precision {dtype} are marked default",
                    {"dtype": c.weights_dtype, "path": f"checkpoints.{i}.default",
                     "hint": "mark one checkpoint per precision default: true"})
            seen.add((c.weights_dtype, c.default))
        if self.params_active and self.params_active.value > self.params_total.value:
            raise PydanticCustomError(
                "active_gt_total", "params_active exceeds params_total",
                {"path": "params_active", "hint": "params_total counts every expert; params_active those used per token"})
        return self
