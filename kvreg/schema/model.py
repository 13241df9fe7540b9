"""A model entry: layer-by-layer attention geometry plus sizes (registry/models/*.yaml).

Each layer group has a ``kind`` that prices memory its own way (DESIGN.md,
"Models: layers by kind"): ``full``, ``sliding`` (window), ``chunked`` (chunk),
``mla`` (latent), ``recurrent`` (constant state), ``shared`` (reuses another
layer's KV, stores nothing), ``mlp`` (no token mixer at all, stores nothing:
Nemotron-H counts its MLP-only and MoE-only blocks as layers).  Group counts sum to ``layers`` unless a group
``shares_layers`` (Falcon-H1 runs attention and Mamba2 in the same layers).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.common import Bytes, Count, Dtype, Entry, Measure, Strict, Tokens

Kind = Literal["full", "sliding", "chunked", "mla", "recurrent", "shared", "mlp"]

# Which optional fields each kind accepts; anything else set on a group is an
# error, so a window written on a full layer is never silently ignored.
KIND_FIELDS: dict[str, set[str]] = {
    "full": {"kv_heads", "head_dim", "v_head_dim", "k_eq_v"},
    "sliding": {"kv_heads", "head_dim", "v_head_dim", "k_eq_v", "window"},
    "chunked": {"kv_heads", "head_dim", "v_head_dim", "k_eq_v", "chunk"},
    "mla": {"kv_lora_rank", "qk_rope_head_dim", "kv_heads", "head_dim", "v_head_dim"},
    "recurrent": {"state", "variant"},
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


class StateTensor(Strict):
    """One per-sequence state tensor of a recurrent layer (shape in elements).

    ``role`` is ``ssm`` (the recurrent matrix state, e.g. Gated DeltaNet
    Hv × dk × dv) or ``conv`` (the short convolution's (kernel−1) × channels
    window).  ``split_axis`` is the axis tensor parallelism divides (heads or
    channels); default 0 for ssm, 1 for conv (vLLM MambaStateShapeCalculator).
    """

    role: Literal["ssm", "conv"]
    shape: Annotated[list[PositiveInt], Field(min_length=1)]
    dtype: Dtype
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

    kind: Kind
    count: PositiveInt
    kv_heads: PositiveInt | None = None
    head_dim: PositiveInt | None = None
    v_head_dim: PositiveInt | None = None
    k_eq_v: bool | None = None
    window: Tokens | None = None
    chunk: Tokens | None = None
    kv_lora_rank: PositiveInt | None = None
    qk_rope_head_dim: PositiveInt | None = None
    state: list[StateTensor] | None = None
    variant: str | None = None
    reuses: str | None = None
    shares_layers: bool = False
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

    experts: PositiveInt
    experts_per_token: PositiveInt
    shared_experts: int = 0
    intermediate_size: PositiveInt | None = None
    """Each routed expert's FFN width (config moe_intermediate_size); sizes vLLM's MoE workspace."""


class ModelEntry(Entry):
    """A model architecture.  Sizes in base units (parameters, tokens, bytes)."""

    hf_id: str | None = None
    family: str | None = None
    architecture: str | None = None
    layers: PositiveInt
    hidden_size: PositiveInt
    vocab_size: PositiveInt | None = None
    intermediate_size: PositiveInt | None = None
    """Dense FFN width (config intermediate_size); sizes the engine's profile-run activation peak."""
    attention_heads: PositiveInt | None = None
    native_context: Measure[Tokens]
    params_total: Measure[Count]
    params_active: Measure[Count] | None = None
    dtype: Dtype = "bf16"
    checkpoints: dict[Dtype, Measure[Bytes]] = {}
    moe: Moe | None = None
    layer_groups: Annotated[list[LayerGroup], Field(min_length=1)]
    derived_fields: list[str] = []

    @model_validator(mode="after")
    def _layers_sum(self):
        total = sum(g.count for g in self.layer_groups if not g.shares_layers)
        if total != self.layers:
            raise PydanticCustomError(
                "layer_sum", "layer groups sum to {total} layers but layers is {layers}",
                {"total": total, "layers": self.layers, "path": "layer_groups",
                 "hint": "each layer belongs to exactly one group; mark a group shares_layers: true "
                         "only when it runs inside layers already counted (Falcon-H1)"})
        if self.params_active and self.params_active.value > self.params_total.value:
            raise PydanticCustomError(
                "active_gt_total", "params_active exceeds params_total",
                {"path": "params_active", "hint": "params_total counts every expert; params_active those used per token"})
        return self
