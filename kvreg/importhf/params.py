"""Parameter count (total and active) from a config's dimensions.

Counted, per layer: attention projections (GQA q/k/v/o with optional biases,
q/k norms and Qwen3-Next/3.5's output gate, a second heads × head_dim half of q_proj; MLA's low-rank q_a/q_b, kv_a/kv_b and their norms; Gemma 4's K=V
drops the v projection on full layers), recurrent mixers (Gated DeltaNet,
Mamba-1, Mamba-2 projections, conv, A/D/dt and norm), the MLP (gated
3·h·I or plain 2·h·I) or the experts (router + E × expert MLP + shared experts, gated or plain
as the family's MLP),
and the layer norms; then the embedding and, unless tied, the output head.
Active = total minus the routed experts a token does not use.  Multi-token
prediction modules (``num_nextn_predict_layers``, ``mtp_num_hidden_layers``) are
left out, as in the published totals.

Formulas: the transformers modeling files of each family; checked against
``../shared/data/model_facts.yaml`` ``params_computed`` (Llama-3.1 8B/70B/405B,
Qwen3-235B-A22B, DeepSeek-V3, Mixtral-8x7B reproduce exactly; tests/test_import_hf.py).
"""

from __future__ import annotations

import dataclasses

from kvreg.importhf.families import MOE_EXPERT_KEYS, MOE_TOPK_KEYS, Family
from kvreg.importhf.reader import Config


@dataclasses.dataclass(frozen=True)
class Moe:
    """Routed experts, experts per token, shared experts and their MLP widths (elements)."""

    experts: int
    per_token: int
    shared: int
    expert_width: int
    shared_width: int


def moe_of(cfg: Config, fam: Family) -> Moe | None:
    """The model's MoE routing, or None for a dense model."""
    _, experts = cfg.first(*MOE_EXPERT_KEYS)
    if not experts or (fam.dense_mlp_beside_moe and cfg.get("enable_moe_block") is False):
        return None
    _, topk = cfg.first(*MOE_TOPK_KEYS)
    # Llama 4 and Mixtral name the expert width intermediate_size; others moe_intermediate_size.
    width = cfg.get("moe_intermediate_size") or cfg.get("intermediate_size")
    shared_key, shared = cfg.first("n_shared_experts", "num_shared_experts")
    shared_width = (cfg.get("shared_expert_intermediate_size") or cfg.get("moe_shared_expert_intermediate_size")
                    or cfg.get("shared_intermediate_size"))
    if shared_key is None:
        shared = 1 if shared_width else fam.shared_expert_default
    if shared and not shared_width:
        shared_width = width
    return Moe(experts=experts, per_token=topk, shared=shared or 0, expert_width=width,
               shared_width=shared_width or 0)


def _is_moe_layer(cfg: Config, fam: Family, i: int) -> bool:
    if i < cfg.get("first_k_dense_replace", 0):
        return False
    if i in (cfg.get("mlp_only_layers") or []):
        return False
    if cfg.has("interleave_moe_layer_step"):       # Llama 4: range(step-1, L, step)
        step = cfg.get("interleave_moe_layer_step")
        return (i + 1) % step == 0
    if cfg.has("expert_layer_period"):             # Jamba
        return i % cfg.get("expert_layer_period") == cfg.get("expert_layer_offset", 0)
    step = cfg.get("decoder_sparse_step", 1)
    freq = cfg.get("moe_layer_freq", 1)
    return isinstance(freq, int) and (i + 1) % step == 0 and i % freq == 0


def _block(cfg: Config, i: int) -> str | None:
    """Nemotron-H block ``i``: ``mlp``, ``moe`` or ``mixer``; None for models whose layers hold mixer and MLP."""
    pattern = cfg.get("hybrid_override_pattern")
    if pattern is not None:
        return {"-": "mlp", "E": "moe"}.get(pattern[i], "mixer")
    names = cfg.get("layers_block_type")
    if isinstance(names, list) and {"mlp", "moe"} & set(names):
        return names[i] if names[i] in ("mlp", "moe") else "mixer"
    return None


def _attention(cfg: Config, fam: Family, g: dict) -> int:
    h, heads = cfg.get("hidden_size"), cfg.get("num_attention_heads")
    if g["kind"] == "mla":
        nope, rope, v = cfg.get("qk_nope_head_dim"), cfg.get("qk_rope_head_dim"), cfg.get("v_head_dim")
        r = cfg.get("kv_lora_rank")
        ql = cfg.get("q_lora_rank")
        q = (h * ql + ql + ql * heads * (nope + rope)) if ql else h * heads * (nope + rope)
        n = q + h * (r + rope) + r + r * heads * (nope + v) + heads * v * h
        if g.get("index_head_dim"):
            # DSA lightning indexer (vLLM deepseek_v2.py Indexer): wq_b (q_lora → heads × dim), wk
            # (hidden → dim), k_norm (LayerNorm: weight + bias), weights_proj (hidden → heads).
            ih, ihn = g["index_head_dim"], cfg.get("index_n_heads")
            n += (ql or h) * ihn * ih + h * ih + 2 * ih + h * ihn
        return n
    kv, hd = g["kv_heads"], g["head_dim"]
    qd = heads * hd
    n = h * qd + h * kv * hd * (1 if g.get("k_eq_v") else 2) + qd * h
    if output_gate(cfg, fam):
        n += h * qd  # the gate half of q_proj (Qwen3-Next / Qwen3.5 gated attention)
    if cfg.get("attention_bias") or fam.qkv_bias:
        n += qd + kv * hd * (1 if g.get("k_eq_v") else 2)
    if cfg.get("attention_bias"):
        n += h  # o_proj bias
    if fam.qk_norm:
        n += 2 * hd
    if fam.attention_sinks:
        n += heads  # one learned sink logit per head
    return n


def output_gate(cfg: Config, fam: Family) -> bool:
    """True when attention's q_proj also projects a sigmoid output gate (``attn_output_gate``, else the family's default)."""
    gate = cfg.get("attn_output_gate")
    return bool(fam.output_gate_default if gate is None else gate)


def _recurrent(cfg: Config, g: dict) -> int:
    h = cfg.get("hidden_size")
    if g["variant"] == "kda":
        # vLLM layers/kda.py KimiDeltaAttention: q, k, v (h → P), f_a (h → d) / f_b (d → P) and
        # g_a / g_b gates, b_proj (h → heads), three depthwise convs (K × P), dt_bias (P),
        # A_log (heads), o_norm (d), o_proj (P → h); P = heads × head_dim.
        conv = [t["shape"] for t in g["state"] if t["role"] == "conv"][0]
        nh, d, _ = [t["shape"] for t in g["state"] if t["role"] == "ssm"][0]
        k, p = conv[0] + 1, nh * d
        return 4 * h * p + 2 * h * d + 2 * d * p + p + h * nh + 3 * k * p + nh + d
    if g["variant"] == "short_conv":
        # LFM2 ShortConv: in_proj h → 3·d (B, C, x gates), depthwise conv d × L, out_proj d → h
        # (transformers modeling_lfm2.py Lfm2ShortConv; conv_bias adds 3·d + d + d).
        (k1, d), = (t["shape"] for t in g["state"])
        n = h * 3 * d + d * (k1 + 1) + d * h
        return n + (5 * d if cfg.get("conv_bias") else 0)
    ssm, conv = g["state"][0]["shape"], g["state"][1]["shape"]
    k, channels = conv[0] + 1, conv[1]
    if g["variant"] == "gated_deltanet":
        hv, dk, dv = ssm
        hk = (channels - hv * dv) // (2 * dk)
        return (h * (2 * hk * dk + 2 * hv * dv) + h * 2 * hv + channels * k + 2 * hv + dv + hv * dv * h)
    if g["variant"] == "mamba2":
        nh, hd, n = ssm
        inner = nh * hd
        groups_n = (channels - inner) // 2
        return (h * (2 * inner + 2 * groups_n + nh) + channels * (k + 1) + 3 * nh + inner + inner * h)
    inner, n = ssm  # mamba1
    dt_rank = cfg.get("mamba_dt_rank")
    if not isinstance(dt_rank, int):
        dt_rank = -(-h // 16)  # "auto": ceil(hidden / 16)
    return (h * 2 * inner + inner * (k + 1) + inner * (dt_rank + 2 * n) + dt_rank * inner + inner
            + inner * n + inner + inner * h)


class MissingDimension(Exception):
    """A dimension the parameter count needs is absent; ``fields`` names the keys."""

    def __init__(self, fields: list[str]):
        super().__init__(", ".join(fields))
        self.fields = fields


def _mlp(cfg: Config, fam: Family, width: int | None) -> int:
    h = cfg.get("hidden_size")
    if width is None:
        raise MissingDimension(["intermediate_size"])
    return (3 if fam.mlp == "gated" else 2) * h * width


def count(cfg: Config, fam: Family, groups: list[dict], per_layer_kinds: list[list[dict]]) -> tuple[int, int]:
    """``(total, active, routed)`` parameters; ``routed`` = all routed-expert weights (MoE), else 0.

    Raises:
        MissingDimension: vocab_size, or a width a dense MLP needs, is absent.

    ``per_layer_kinds`` gives, for each layer index, the layer groups' specs it
    runs (two for Falcon-H1's parallel attention + Mamba-2, one of kind ``mlp``
    for a Nemotron-H block without a sequence mixer).
    """
    if not fam.params_rule:
        raise MissingDimension([f"a {fam.name} parameter rule (kvreg has none for this family yet)"])
    h, vocab = cfg.get("hidden_size"), cfg.get("vocab_size")
    if vocab is None:
        raise MissingDimension(["vocab_size"])
    moe = moe_of(cfg, fam)
    tie = cfg.get("tie_word_embeddings")
    if tie is None:
        tie = fam.tie_default
        cfg.derive("params_total", f"tie_word_embeddings absent: transformers default {tie} for {fam.name}")
    total = vocab * h * (1 if tie else 2) + h  # embeddings (+ head) + final norm
    active = total
    routed = 0
    if cfg.get("moe_latent_size"):
        raise MissingDimension(["moe_latent_size (latent MoE projections are not counted by kvreg)"])
    dense_width = cfg.get("intermediate_size_mlp") or cfg.get("intermediate_size") or cfg.get("block_ff_dim")
    if dense_width is None and fam.ff_default_mult:
        dense_width = fam.ff_default_mult * h
        cfg.derive("params_total", f"no intermediate_size: {fam.ff_default_mult} × hidden_size ({fam.name} default)")
    if fam.ff_auto_adjust and dense_width and cfg.get("block_auto_adjust_ff_dim", True):
        # LFM2 (transformers Lfm2MLP): int(2·ff/3), × block_ffn_dim_multiplier, rounded up to block_multiple_of
        mult, of = cfg.get("block_ffn_dim_multiplier", 1.0) or 1.0, cfg.get("block_multiple_of", 256)
        w = int(int(2 * dense_width / 3) * mult)
        dense_width = of * -(-w // of)
    for i, specs in enumerate(per_layer_kinds):
        layer = 0
        for g in specs:
            if g["kind"] in ("full", "sliding", "chunked", "mla", "shared"):
                layer += _attention(cfg, fam, g if g["kind"] != "shared" else {**g, "kind": "full"}) + h
            elif g["kind"] == "recurrent":
                layer += _recurrent(cfg, g) + h
        inactive = 0
        block = _block(cfg, i)
        if block == "mlp":               # Nemotron-H: an MLP block is its own layer
            layer += _mlp(cfg, fam, cfg.get("intermediate_size")) + h
        elif block == "mixer":
            pass                         # Nemotron-H: a mixer block has no MLP
        elif moe and (block == "moe" or _is_moe_layer(cfg, fam, i)):
            w = moe.expert_width
            mats = 3 if fam.mlp == "gated" else 2   # Nemotron-H experts are up/down (relu2) MLPs, like its dense MLP
            expert = mats * h * w + (2 * w + h if fam.expert_bias else 0)
            router = h * moe.experts + (moe.experts if fam.expert_bias else 0)
            if (cfg.get("topk_method") == "noaux_tc" or cfg.get("scoring_func") == "sigmoid"
                    or cfg.get("moe_router_activation_func") == "sigmoid"):
                # e_score_correction_bias of sigmoid (noaux_tc) routing: DeepSeek-V3 (scoring_func), Kimi
                # Linear (moe_router_activation_func; vLLM KimiLinearConfig topk_method default noaux_tc)
                router += moe.experts
            shared = moe.shared * mats * h * moe.shared_width
            layer += router + moe.experts * expert + shared + h
            if fam.dense_mlp_beside_moe:
                layer += _mlp(cfg, fam, cfg.get("intermediate_size"))
            inactive = (moe.experts - moe.per_token) * expert
            routed += moe.experts * expert
        elif specs:
            layer += _mlp(cfg, fam, dense_width) + h
        layer += fam.post_norms * h if specs else 0
        total += layer
        active += layer - inactive
    return total, active, routed
