"""A checkpoint for ``kvreg import-hf``: its quantization config and its safetensors index.

``quantization(qc, layers)`` reads a config's ``quantization_config`` into the entry's
``checkpoints[].quantization`` (schema ``kvreg.schema.model.Quantization``) and the checkpoint's
precision; ``read_index(path)`` reads ``model.safetensors.index.json``: ``metadata.total_size``
(the stored bytes of the whole checkpoint) and, from the ``weight_map`` tensor names, which
tensor groups exist (a vision/audio tower, MTP layers, a separate ``lm_head``).  The bytes per
element and the per-rank split are then SQL (``kvreg/sql/025_checkpoint_tensors.sql``).

Formats read (the keys each ``quant_method`` writes):

==================  ============================================================================
quant_method        read
==================  ============================================================================
fp8                 ``weight_block_size`` [a, b] → group a·b, fp32 scale (DeepSeek/Qwen FP8);
                    without it per-tensor (priced as per-channel); ``modules_to_not_convert``
compressed-tensors  ``config_groups.*.weights``: ``num_bits``, ``type`` (int/float), ``strategy``
                    (channel / group / tensor / block), ``group_size``, ``symmetric``; ``ignore``
gptq, auto-round    ``bits``, ``group_size`` (−1 = per channel), ``sym``; fp16 scales
awq                 ``bits``/``w_bit``, ``group_size``/``q_group_size``, zero points; fp16 scales
modelopt            ``quant_algo`` (top level or under ``quantization``) NVFP4 → 4 bits, group 16,
                    fp8 scale; FP8 → per-tensor fp8; ``exclude_modules``
mxfp4               4 bits, group 32, e8m0 scale; only the experts (gpt-oss
                    ``modules_to_not_convert`` lists attention, router, embeddings)
==================  ============================================================================

Exclusion lists name modules; a pattern that names a group for every layer (no layer index, a
wildcard, or every index) keeps that group in 16-bit: ``self_attn``/``attn`` → attention,
``linear_attn``/``mixer``/``mamba`` → recurrent, ``mlp``/``experts`` → mlp.  Embeddings,
``lm_head``, norms, routers (``mlp.gate``) and towers are never quantized by the rule.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kvreg.problems import KvregError, Problem
from kvreg.schema.model import QUANTIZED_DEFAULT


class UnknownQuantization(Exception):
    """A ``quant_method`` (or scheme) the importer cannot price; the message says which."""


# Module-name keywords → the tensor group a pattern excludes (order matters: linear_attn before attn).
_GROUP_KEYS = [("recurrent", ("linear_attn", "mixer", "mamba")), ("attention", ("self_attn", "attn")),
               ("mlp", ("experts", "mlp"))]
_NOT_A_GROUP = ("lm_head", "embed", "norm", "visual", "vision", "audio", "mtp", "mlp.gate", "shared_expert_gate",
                "router")


def _excluded_groups(patterns: list[str], layers: int) -> tuple[list[str], list[str]]:
    """Groups the exclusion patterns keep in 16-bit for every layer, and notes for partial exclusions."""
    hits: dict[str, set] = {}
    for pat in patterns or []:
        p = str(pat).lower()
        if any(k in p for k in _NOT_A_GROUP) and not re.search(r"(self_attn|linear_attn|experts)", p):
            continue
        for group, keys in _GROUP_KEYS:
            if any(k in p for k in keys):
                idx = re.search(r"layers\.(\d+)\.", p)
                hits.setdefault(group, set()).add(int(idx.group(1)) if idx else "all")
                break
    whole, notes = [], []
    for group, idx in hits.items():
        if "all" in idx or len(idx) >= layers:
            whole.append(group)
        else:
            notes.append(f"{group} left unquantized in {len(idx)} of {layers} layers: priced as quantized")
    return whole, notes


def quantization(qc: dict, layers: int, model_dtype: str) -> tuple[str, dict, list[str]]:
    """``(weights_dtype, quantization entry, notes)`` from a config's ``quantization_config``.

    Raises:
        UnknownQuantization: a method or scheme with no rule here (bitsandbytes, GGUF, …).
    """
    method = str(qc.get("quant_method", "")).lower()
    notes: list[str] = []
    excluded: list[str] = []
    if method == "fp8":
        block = qc.get("weight_block_size")
        group = block[0] * block[1] if isinstance(block, list) and len(block) == 2 else None
        q = {"method": "fp8", "weight_bits": 8, "scale_dtype": "fp32"}
        if group:
            q["group_size"] = group
        dtype, patterns = "fp8", qc.get("modules_to_not_convert") or qc.get("ignored_layers") or []
    elif method == "compressed-tensors":
        groups = [g for g in (qc.get("config_groups") or {}).values() if isinstance(g, dict) and g.get("weights")]
        if not groups:
            raise UnknownQuantization("compressed-tensors config without config_groups.*.weights")
        w = groups[0]["weights"]
        bits, kind, strategy = w.get("num_bits"), w.get("type", "int"), w.get("strategy", "tensor")
        group = w.get("group_size") if strategy in ("group", "tensor_group") else None
        if strategy == "block" and isinstance(w.get("block_structure"), list):
            group = w["block_structure"][0] * w["block_structure"][1]
        if bits == 4 and kind == "float":
            dtype, scale = ("nvfp4", "fp8") if (group or 16) == 16 else ("mxfp4", "fp8")
            group = group or 16
        elif bits == 8:
            dtype, scale = ("fp8" if kind == "float" else "int8"), "fp32"
        elif bits == 4:
            # wNa16: scales in the activation dtype (compressed_tensors_wNa16.py, GroupQuantScaleParameter)
            dtype, scale = "int4", ("fp16" if model_dtype == "fp16" else "bf16")
        else:
            raise UnknownQuantization(f"compressed-tensors {bits}-bit {kind} weights")
        q = {"method": "compressed-tensors", "weight_bits": bits, "scale_dtype": scale}
        if group:
            q["group_size"] = group
        if w.get("symmetric") is False:
            q["zero_points"] = True
        patterns = qc.get("ignore") or []
    elif method in ("gptq", "auto-round", "autoround", "awq"):
        bits = qc.get("bits") or qc.get("w_bit")
        group = qc.get("group_size") or qc.get("q_group_size")
        if bits not in (2, 3, 4, 8):
            raise UnknownQuantization(f"{method} with {bits!r} bits")
        q = {"method": method, "weight_bits": bits, "scale_dtype": "fp16"}
        if isinstance(group, int) and group > 0:
            q["group_size"] = group
        if method == "awq" and qc.get("zero_point", True):
            q["zero_points"] = True
        elif method != "awq" and qc.get("sym") is False:
            q["zero_points"] = True
        dtype = "int8" if bits == 8 else "int4"
        patterns = qc.get("modules_to_not_convert") or []
        if bits in (2, 3):
            notes.append(f"{method} {bits}-bit weights priced under int4")
    elif method == "modelopt":
        inner = qc.get("quantization") if isinstance(qc.get("quantization"), dict) else qc
        algo = str(inner.get("quant_algo", "")).upper()
        patterns = inner.get("exclude_modules") or qc.get("exclude_modules") or []
        if algo == "NVFP4":
            q = {"method": "modelopt", "weight_bits": 4, "group_size": inner.get("group_size") or 16,
                 "scale_dtype": "fp8"}
            dtype = "nvfp4"
        elif algo == "FP8":
            q, dtype = {"method": "modelopt", "weight_bits": 8, "scale_dtype": "fp32"}, "fp8"
        else:
            raise UnknownQuantization(f"modelopt quant_algo {algo or '(none)'}")
    elif method == "mxfp4":
        q = {"method": "mxfp4", "weight_bits": 4, "group_size": 32, "scale_dtype": "fp8", "quantized": ["mlp"]}
        return "mxfp4", q, notes
    else:
        raise UnknownQuantization(f"quant_method {method!r}")
    whole, partial = _excluded_groups(patterns, layers)
    excluded = whole
    notes += partial
    if excluded:
        q["quantized"] = [g for g in QUANTIZED_DEFAULT if g not in excluded]
    return dtype, q, notes


MAX_INDEX_BYTES = 64 * 2**20
"""Largest weights index read (64 MiB; the largest real ones, thousands of tensors, are a few MiB)."""


def read_index(path: Path) -> tuple[int, dict]:
    """``(total_size bytes, facts)`` of a ``model.safetensors.index.json``.

    ``facts``: ``towers`` (prefixes of vision/audio tensors found), ``mtp`` (MTP tensors found),
    ``lm_head`` (a separate lm_head tensor: untied embeddings).

    Raises:
        KvregError: ``unreadable-index`` when the file or ``metadata.total_size`` is missing or wrong.
    """
    from kvreg.userfiles import read_bounded

    hint = "pass the checkpoint's model.safetensors.index.json"
    try:
        # a regular file of at most MAX_INDEX_BYTES (a pipe, /dev/zero or a weights shard is refused, not read)
        data = json.loads(read_bounded(path, MAX_INDEX_BYTES).decode("utf-8-sig"))
        total = data["metadata"]["total_size"]
    except (OSError, ValueError, KeyError, TypeError) as exc:  # NotRegularFile, FileTooLarge are ValueErrors
        raise KvregError([Problem(str(path), 0, 0, "metadata.total_size", "unreadable-index",
                                  f"cannot read metadata.total_size: {exc}", hint)]) from None
    if not isinstance(total, int) or isinstance(total, bool) or total <= 0:
        raise KvregError([Problem(str(path), 0, 0, "metadata.total_size", "unreadable-index",
                                  f"metadata.total_size is {total!r}, not a positive byte count", hint)])
    names = list((data.get("weight_map") or {}).keys()) if isinstance(data.get("weight_map"), dict) else []
    towers = sorted({n.split(".")[0] if not n.startswith("model.") else ".".join(n.split(".")[:2])
                     for n in names if re.search(r"(^|\.)(visual|vision_tower|vision_model|audio_tower|"
                                                 r"audio_model|multi_modal_projector)\.", n)})
    facts = {"towers": towers, "mtp": any(re.search(r"(^|\.)mtp\.", n) for n in names),
             "lm_head": any(n.startswith("lm_head.") or ".lm_head." in n for n in names), "tensors": len(names)}
    return total, facts
