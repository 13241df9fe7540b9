"""Tensor groups of a model entry: how many weight elements each group holds and how TP splits it.

The per-tensor weights rule (issue 11 item 2) prices a checkpoint group by group: which groups
a quantization config quantizes is data (``checkpoints[].quantization.quantized``), the bytes per
element and the per-rank share are SQL (``kvreg/sql/025_checkpoint_tensors.sql``,
``035_model_weights_per_rank.sql``).  This module only lays the architecture out, once per
model at build time, from the entry's own geometry:

============  ===================================================  =====================
group         elements                                             TP (vLLM 0.19)
============  ===================================================  =====================
embed         vocab × hidden                                       ``vocab``: rows padded
                                                                   to 64, ÷ tp
lm_head       vocab × hidden, 0 when ``tied_embeddings``           ``vocab`` as embed
attention     per attention layer: (q + o) heads·head_dim·hidden   ``split`` over heads;
              (+ q's output gate half: attention_output_gate)
              + (k + v) kv_heads·head_dim·hidden                   k/v over kv_heads,
                                                                   replicated past them
              MLA: kv_a hidden·(kv_lora_rank + qk_rope_head_dim)   ``replicated``
              and q_a hidden·q_lora_rank                           ``replicated``
              MLA kv_b: kv_lora_rank·heads·(qk_nope + v_head_dim)  ``split`` over heads
recurrent     Gated DeltaNet / Mamba projections, conv, A, D, dt   ``split``
router        MoE gate: layers × experts × hidden                  ``replicated``
norms         (2 × layers + 1) × hidden; MLA's q_a/kv_a layernorms  ``replicated``
              (layers × (q_lora_rank + kv_lora_rank))
towers        vision / audio encoders (entry ``towers``)           ``split``
buffers       rotary cos/sin caches (entry ``rope_caches``, else     ``replicated``
              native_context × the largest attention head_dim)
mlp           params_total − all of the above (dense MLP, experts, ``split``
              shared experts, MLA projections, biases)
============  ===================================================  =====================

Sources, vLLM 0.19.0: ``vocab_parallel_embedding.py`` (``pad_vocab_size`` pads to
``DEFAULT_VOCAB_PADDING_SIZE`` = 64, lines 28 and 75; ``num_embeddings_per_partition =
divide(num_embeddings_padded, tp_size)`` line 289); ``linear.py`` ``QKVParallelLinear``
(``num_kv_heads = max(1, total_num_kv_heads // tp_size)``, replicas past that);
``ReplicatedLinear`` for MoE gates (``qwen3_moe.py``, ``qwen2_moe.py``) and RMSNorm weights
unsharded; ``rotary_embedding/base.py`` lines 59-63: ``cos_sin_cache`` [max_position,
rotary_dim] registered as a buffer in the model dtype, one per distinct rope (``_ROPE_DICT``).

Approximations, each small against a checkpoint: biases, q/k norms and per-layer extra norms
fall in ``mlp``; MLA's q_b/o projections too (split, as vLLM splits them); the rope buffer uses the full head_dim even where
the rotary fraction is partial; MTP heads are not loaded unless speculative decoding is on and
are left out.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

from kvreg.schema.columns import Column
from kvreg.schema.model import ModelEntry

ATTENTION_KINDS = ("full", "sliding", "chunked", "shared")


@dataclasses.dataclass(frozen=True)
class TensorGroup:
    """One group: ``elements`` (whole model), ``shard`` (vocab / split / replicated), ``parts``.

    ``parts`` is the number of heads a ``split`` group is cut along (k/v projections: KV heads,
    replicated once tp exceeds them); None splits evenly by tp.  The fields are the columns of the
    ``weight_tensors`` table (kvreg/tables.py ``WEIGHT_TENSORS``: their ``Column`` markers, dtypes from
    the annotations).
    """

    name: Annotated[str, Column("tensor_group")]
    part: Annotated[str, Column()]
    elements: Annotated[int, Column()]
    shard: Annotated[str, Column()]
    parts: Annotated[int | None, Column("shard_parts")] = None
    dtype: Annotated[str | None, Column()] = None


def _recurrent_elements(hidden: int, g) -> int:
    """Projections + conv + per-head vectors of one recurrent layer: importhf.params' one formula
    per variant (gated DeltaNet, KDA, Mamba 1/2, LFM2 short conv); 0 without a conv state."""
    from kvreg.importhf.params import _recurrent

    if not any(t.role == "conv" for t in g.state):
        return 0
    grp = {"variant": g.variant,
           "state": [{"role": t.role, "shape": list(t.shape)}      # ssm before conv, as params reads them
                     for t in sorted(g.state, key=lambda t: t.role != "ssm")]}
    return _recurrent({"hidden_size": hidden}, grp)


def tensor_groups(m: ModelEntry) -> list[TensorGroup]:
    """The model's weight tensor groups (see the module docstring), ``mlp`` closing on params_total.

    Units: elements (parameters).  The closure never goes below zero: an entry whose
    params_total is smaller than its counted groups gets ``mlp`` = 0 (a wrong count shows up in
    the checkpoint residuals of tests/test_checkpoints.py, not as a negative size).
    """
    h, vocab = m.hidden_size, m.vocab_size or 0
    out = [TensorGroup("embed", "embed_tokens", vocab * h, "vocab")]
    if not m.tied_embeddings:
        out.append(TensorGroup("lm_head", "lm_head", vocab * h, "vocab"))
    heads = m.attention_heads
    rope_dim = 0
    mla_norms = 0      # MLA's q_a_layernorm + kv_a_layernorm widths, summed over its layers
    for gi, g in enumerate(m.layer_groups):
        if g.kind in ATTENTION_KINDS and heads and g.head_dim:
            q_o = 3 if m.attention_output_gate else 2       # q (+ its output gate half) and o
            out.append(TensorGroup("attention", f"q_o.{gi}", g.count * q_o * heads * g.head_dim * h, "split", heads))
            out.append(TensorGroup("attention", f"k_v.{gi}",
                                   g.count * (1 if g.k_eq_v else 2) * g.kv_heads * g.head_dim * h, "split",
                                   g.kv_heads))
            rope_dim = max(rope_dim, g.head_dim)
        elif g.kind == "mla":
            # kv_a_proj_with_mqa (hidden → kv_lora_rank + qk_rope_head_dim) and q_a_proj (hidden → q_lora_rank)
            # are ReplicatedLinear (vLLM deepseek_v2.py 0.8.4:379-383, 401-405), and 0.19.0 fuses them into one
            # projection built with disable_tp=True (lines 870-883, 786): on every rank, as are their RMSNorms
            # q_a_layernorm and kv_a_layernorm (0.8.4:385, 407).  kv_b_proj (kv_lora_rank → heads × (qk_nope + v))
            # is column-parallel over the heads (0.8.4:409); the engine's absorbed copy of it is sized from this
            # part (035 mla_absorbed_bytes_per_rank).  q_b and o are split and priced in the mlp closure.
            out.append(TensorGroup("attention", f"kv_a.{gi}",
                                   g.count * h * (g.kv_lora_rank + (g.qk_rope_head_dim or 0)), "replicated"))
            if g.q_lora_rank:
                out.append(TensorGroup("attention", f"q_a.{gi}", g.count * h * g.q_lora_rank, "replicated"))
            if heads and g.head_dim and g.qk_rope_head_dim:
                nope_v = g.head_dim - g.qk_rope_head_dim + (g.v_head_dim or g.head_dim)
                out.append(TensorGroup("attention", f"kv_b.{gi}", g.count * g.kv_lora_rank * heads * nope_v,
                                       "split", heads))
            mla_norms += g.count * (g.kv_lora_rank + (g.q_lora_rank or 0))
            rope_dim = max(rope_dim, g.qk_rope_head_dim or 0)
        elif g.kind == "recurrent" and g.state:
            out.append(TensorGroup("recurrent", f"mixer.{gi}", g.count * _recurrent_elements(h, g), "split"))
    if m.moe:
        out.append(TensorGroup("router", "gate", m.layers * m.moe.experts * h, "replicated"))
    out.append(TensorGroup("norms", "norms", (2 * m.layers + 1) * h, "replicated"))
    if mla_norms:
        out.append(TensorGroup("norms", "mla_norms", mla_norms, "replicated"))
    for name, count in sorted(m.towers.items()):
        out.append(TensorGroup("towers", name, int(count.value), "split"))
    counted = sum(t.elements for t in out if t.name != "towers")
    out.append(TensorGroup("mlp", "mlp", max(0, int(m.params_total.value) - counted), "split"))
    if m.rope_caches:
        for i, r in enumerate(m.rope_caches):
            out.append(TensorGroup("buffers", f"rope_cos_sin.{i}", int(r.positions) * r.rotary_dim, "replicated",
                                   dtype=r.dtype))
    elif rope_dim:
        out.append(TensorGroup("buffers", "rope_cos_sin", int(m.native_context.value) * rope_dim, "replicated"))
    return out
