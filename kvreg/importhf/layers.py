"""Layer plan: the kind and cache geometry of every layer, grouped into layer groups.

From a :class:`~kvreg.importhf.reader.Config` and its :class:`Family`, work out
each layer's mixer (full / sliding / chunked attention, MLA, Gated DeltaNet,
Mamba), its KV geometry, which tail layers reuse earlier KV (Gemma 3n / 4), and
the per-sequence state of recurrent layers; then merge identical layers into
the entry's ``layer_groups`` (DESIGN.md "Models: layers by kind").

State shapes (vLLM ``MambaStateShapeCalculator``, transformers modeling files):
  Gated DeltaNet  ssm  [Hv, dk, dv]              in mamba_ssm_dtype (else model dtype)
                  conv [kernel−1, 2·Hk·dk + Hv·dv] in model dtype
  Mamba-2         ssm  [nheads, head_dim, N]      conv [kernel−1, I + 2·G·N], I = nheads·head_dim
  Mamba-1         ssm  [I, N]                     conv [kernel−1, I], I = expand·hidden
"""

from __future__ import annotations

from kvreg.importhf.families import (LAYER_TYPE_KEYS, LAYER_TYPE_NAMES, MAMBA2_KEYS, PATTERN_CHARS, SSM_DTYPE_KEYS,
                                     Family)
from kvreg.importhf.reader import Config, dtype_name


class Unsupported(Exception):
    """The config says something the importer cannot turn into layer groups; ``fields`` names the keys."""

    def __init__(self, message: str, fields: list[str]):
        super().__init__(message)
        self.fields = fields


def _compress(indices: list[int]) -> str:
    """Layer indices as ranges: ``0-4, 6-10`` for runs, ``1-23 step 2`` for longer strides."""
    out, i = [], 0
    while i < len(indices):
        j = i
        step = indices[i + 1] - indices[i] if i + 1 < len(indices) else 1
        while j + 1 < len(indices) and indices[j + 1] - indices[j] == step:
            j += 1
        if step == 1 and j > i:
            out.append(f"{indices[i]}-{indices[j]}")
        elif j - i >= 3:
            out.append(f"{indices[i]}-{indices[j]} step {step}")
        else:
            out.append(str(indices[i]))
            j = i
        i = j + 1
    return ", ".join(out)


def mixers(cfg: Config, fam: Family, n: int) -> list[str]:
    """One mixer name per layer: full, sliding, chunked, linear, mamba, mlp (no mixer) or full+mamba.

    Raises:
        Unsupported: unknown ``layer_types`` values or a pattern of the wrong length.
    """
    if fam.layout == "compress_ratios":
        return _compress_mixers(cfg, fam, n)
    key, names = cfg.first(*LAYER_TYPE_KEYS)
    if key:
        bad = sorted({t for t in names if t not in LAYER_TYPE_NAMES})
        if bad:
            raise Unsupported(f"{key} has values kvreg cannot price: {bad}", [key])
        if len(names) != n:
            raise Unsupported(f"{key} lists {len(names)} layers but num_hidden_layers is {n}",
                              [key, "num_hidden_layers"])
        if fam.interval_key:
            _interval(cfg, fam)  # superseded by layer_types (still read: two spellings that disagree refuse)
        out = [LAYER_TYPE_NAMES[t] for t in names]
        return ["full+mamba" if fam.layout == "parallel" and m == "full" else m for m in out]
    if fam.layout == "uniform":
        if fam.attn_type_key and cfg.has(fam.attn_type_key):
            types = cfg.get(fam.attn_type_key)
            if not isinstance(types, list) or len(types) != n or any(t != 1 for t in types):
                raise Unsupported(f"{fam.attn_type_key} must give 1 (softmax attention) for each of the {n} layers; "
                                  "0 is MiniMax lightning (linear) attention, whose state kvreg does not price",
                                  [fam.attn_type_key])
        return [_uniform_kind(cfg, fam, i) for i in range(n)]
    if fam.layout == "alternate":
        cfg.derive("layer_groups", f"no layer_types: {fam.name} alternates sliding (even layers) and full "
                                   "(odd layers) as the transformers config class does")
        return ["sliding" if i % 2 == 0 else "full" for i in range(n)]
    if fam.layout == "every_nth":
        if fam.layer_flags_key and cfg.has(fam.layer_flags_key):
            flags = cfg.get(fam.layer_flags_key)
            if len(flags) != n:
                raise Unsupported(f"{fam.layer_flags_key} lists {len(flags)} layers, not {n}", [fam.layer_flags_key])
            return [fam.other if f else "full" for f in flags]
        key, every = _interval(cfg, fam) if fam.interval_key else (None, None)
        if every is None:
            every = fam.interval_default
            cfg.derive("layer_groups", f"no layer_types{' or ' + key if key else ''}: {fam.name} puts a full layer "
                                       f"every {every} layers (transformers default), the others {fam.other}")
        else:
            cfg.derive("layer_groups", f"no layer_types: full when (i+1) % {key}={every} == 0, else {fam.other}")
        return ["full" if (i + 1) % every == 0 else fam.other for i in range(n)]
    if fam.layout == "pattern":
        pat = cfg.get("hybrid_override_pattern")
        if not pat or len(pat) != n or set(pat) - set(PATTERN_CHARS):
            raise Unsupported(f"hybrid_override_pattern {pat!r} does not give one known character "
                              f"({''.join(PATTERN_CHARS)}) per layer for {n} layers", ["hybrid_override_pattern"])
        return [PATTERN_CHARS[c] for c in pat]
    if fam.layout == "period":
        period, offset = cfg.get("attn_layer_period"), cfg.get("attn_layer_offset")
        if period is None or offset is None:
            raise Unsupported("Jamba layout needs attn_layer_period and attn_layer_offset",
                              ["attn_layer_period", "attn_layer_offset"])
        return ["full" if i % period == offset else "mamba" for i in range(n)]
    if fam.layout == "parallel":
        return ["full+mamba"] * n
    if fam.layout == "kda_indices":
        lac = cfg.get("linear_attn_config")
        if not isinstance(lac, dict) or not isinstance(lac.get("kda_layers"), list):
            raise Unsupported(f"{fam.name} layout needs linear_attn_config.kda_layers", ["linear_attn_config"])
        kda, full = set(lac["kda_layers"]), set(lac.get("full_attn_layers") or [])
        missing = [i + 1 for i in range(n) if (i + 1) not in kda | full]
        if missing or kda & full:
            raise Unsupported(f"linear_attn_config names layers {missing or sorted(kda & full)} as neither or both "
                              "KDA and full attention (1-based numbers)", ["linear_attn_config"])
        return ["kda" if (i + 1) in kda else "full" for i in range(n)]
    if fam.layout == "indices":
        idx = cfg.get(fam.attn_indices_key)
        if not isinstance(idx, list):
            raise Unsupported(f"{fam.name} layout needs layer_types or {fam.attn_indices_key}",
                              ["layer_types", fam.attn_indices_key])
        return ["full" if i in idx else "shortconv" for i in range(n)]
    if fam.layout == "all_recurrent":
        cfg.derive("layer_groups", f"no layer_types: {fam.name} makes every layer Mamba (transformers default)")
        return ["mamba"] * n
    raise AssertionError(fam.layout)


def _interval(cfg: Config, fam: Family) -> tuple[str, int | None]:
    """The family's full-layer interval and the key it was read from: ``interval_key`` or one of its
    ``interval_aliases`` (Gemma's ``sliding_window_pattern`` / ``_sliding_window_pattern``), every spelling
    marked as read; (``interval_key``, None) when none is given.  Two spellings that disagree refuse."""
    given = {k: cfg.get(k) for k in (fam.interval_key, *fam.interval_aliases) if cfg.has(k)}
    if len(set(given.values())) > 1:
        raise Unsupported("the full-layer interval is given twice with different values: "
                          + ", ".join(f"{k} {v}" for k, v in given.items()), list(given))
    return next(iter(given.items()), (fam.interval_key, None))


def _compress_mixers(cfg: Config, fam: Family, n: int) -> list[str]:
    """DeepSeek-V4: ``swa`` for a sliding-window-only layer, ``swa+cmpR`` for one that also keeps a KV
    compressed R:1 (vLLM transformers_utils/deepseek_v4_utils.py ``get_compress_ratios``: the config's
    ``compress_ratios`` — num_hidden_layers entries, then the MTP layers' — or ``compress_rates`` per
    ``layer_types`` name; 0 = sliding window only).  Ratios other than ``fam.compress_ratios`` refuse:
    vLLM's compressor takes only 4 and 128 (models/deepseek_v4/compressor.py ``CompressorStateCache``)."""
    if cfg.has("compress_ratios"):
        ratios = cfg.get("compress_ratios")
        if not isinstance(ratios, list) or len(ratios) < n:
            raise Unsupported(f"compress_ratios must list at least num_hidden_layers ({n}) ratios",
                              ["compress_ratios", "num_hidden_layers"])
        ratios = ratios[:n]   # the trailing entries are the MTP layers (left out like every MTP module)
    elif isinstance(cfg.get("compress_rates"), dict) and isinstance(cfg.get("layer_types"), list):
        rates, names = cfg.get("compress_rates"), cfg.get("layer_types")
        if len(names) != n:
            raise Unsupported(f"layer_types lists {len(names)} layers but num_hidden_layers is {n}",
                              ["layer_types", "num_hidden_layers"])
        ratios = [rates.get(t, 0) for t in names]
    else:
        raise Unsupported(f"{fam.name} layout needs compress_ratios (or compress_rates with layer_types)",
                          ["compress_ratios"])
    bad = sorted({r for r in ratios if r not in (0, 1) + fam.compress_ratios}, key=str)
    if bad:
        raise Unsupported(f"compress ratios {bad} are not ones the DeepSeek-V4 compressor takes "
                          f"({', '.join(map(str, fam.compress_ratios))}; 0 = sliding window only)", ["compress_ratios"])
    cfg.get("qk_rope_head_dim")
    cfg.note("DeepSeek-V4: KV priced per element (bf16: 2 B, fp8: 1 B per head_dim value); vLLM's fp8_ds_mla "
             "layout stores 584 B per 512-wide entry instead of 512 (448 fp8 NoPE + qk_rope_head_dim 64 in bf16 + "
             "8 B of scales: models/deepseek_v4/attention.py get_kv_cache_spec) in first principles; the engine family prices that layout "
             "and its page groups where a release models them (vLLM 0.22-0.32's layer tuples, 0.33's block-outermost "
             "packing: accounting.compressed_mla, fp8 KV only; docs/engine.md) and gives no engine figure elsewhere.")
    return ["swa" if r in (0, 1) else f"swa+cmp{r}" for r in ratios]


def _compressed(cfg: Config, fam: Family, ratio: int) -> list[dict]:
    """A DeepSeek-V4 layer's compressed part: its KV cache and the compressors' running state.

    vLLM models/deepseek_v4 (0.33.0):
      attention.py ``get_kv_cache_spec`` — one ``head_dim`` entry, a single vector (K = V, num_kv_heads
        1, never split by TP), per ``ratio`` tokens: a ``full`` group with ``compress``;
      attention.py ``DeepseekV4Indexer`` — only ratio-4 layers (``if self.compress_ratio == 4``) keep
        the lightning indexer's key, ``index_head_dim`` fp8 + one fp32 scale, also once per 4 tokens;
      compressor.py ``DeepseekCompressor`` / ``CompressorStateCache`` — each compressor (the KV's, and
        the indexer's at ratio 4) keeps kv + score partial sums, 2·coff·head_dim fp32 values per token,
        over its last coff·ratio tokens (coff = 2 when the windows overlap, ratio 4; else 1): a bounded
        per-sequence state, written as a recurrent group (variant ``compressor``), shape
        [1, coff·ratio, 2·coff·dim] with split_axis 0 so TP never divides it (max_tp_shards 1).
    """
    hd = cfg.get("head_dim")
    if hd is None:
        raise Unsupported("DeepSeek-V4 compressed layers without head_dim", ["head_dim"])
    # q_lora_rank / o_lora_rank size the query and output projections (weights), never the cache.
    cfg.get("q_lora_rank"), cfg.get("o_lora_rank")
    indexed = ratio == fam.compress_indexed
    coff = 2 if indexed else 1          # compressor.py: overlap = compress_ratio == 4; coff = 1 + overlap
    kv = {"kind": "full", "kv_heads": 1, "head_dim": hd, "k_eq_v": True, "compress": ratio}
    state = [{"role": "ssm", "shape": [1, coff * ratio, 2 * coff * hd], "dtype": "fp32", "split_axis": 0}]
    if indexed:
        ihd = cfg.get("index_head_dim")
        if ihd is None:
            raise Unsupported(f"DeepSeek-V4 ratio-{ratio} layers need index_head_dim (the indexer's key)",
                              ["index_head_dim"])
        cfg.get("index_topk"), cfg.get("index_n_heads")   # how many entries attention reads / query heads: no storage
        kv["index_head_dim"] = ihd
        state.append({"role": "ssm", "shape": [1, coff * ratio, 2 * coff * ihd], "dtype": "fp32", "split_axis": 0})
    return [kv, {"kind": "recurrent", "variant": "compressor", "compress": ratio, "state": state}]


def _uniform_kind(cfg: Config, fam: Family, i: int) -> str:
    """Full, or sliding when the config's window applies to layer ``i``."""
    if not cfg.has(fam.window_key):
        return "full"
    if fam.window_gate:
        gate = cfg.get(fam.window_gate)
        if gate is None:
            gate = fam.window_gate_default
            if i == 0:
                cfg.derive("layer_groups", f"{fam.window_gate} absent: transformers default {gate}")
        if not gate:
            cfg.note(f"{fam.window_key} {cfg.get(fam.window_key)} not applied: {fam.window_gate} is {gate}.")
            return "full"
        # Qwen2/3: the first max_window_layers layers keep full attention (transformers Qwen2Config).
        if i < cfg.get("max_window_layers", 0):
            return "full"
    return "sliding"


def _attn(cfg: Config, fam: Family, mixer: str) -> dict:
    """KV geometry of one attention layer of kind ``mixer``."""
    heads = cfg.get("num_attention_heads")
    kv = cfg.get("num_key_value_heads")
    if kv is None:
        kv = heads
        cfg.derive("layer_groups.kv_heads",
                   "num_key_value_heads absent: transformers default = num_attention_heads (MHA)")
    key, hd = cfg.first("head_dim", "attention_head_dim")
    if key is None:
        hd = cfg.get("hidden_size") // heads
        cfg.derive("layer_groups.head_dim", "head_dim absent: hidden_size / num_attention_heads")
    g = {"kind": mixer, "kv_heads": kv, "head_dim": hd}
    if mixer == "full":
        if cfg.has("global_head_dim"):
            g["head_dim"] = cfg.get("global_head_dim")
        if cfg.has("num_global_key_value_heads"):
            g["kv_heads"] = cfg.get("num_global_key_value_heads")
        if cfg.get("attention_k_eq_v"):
            g["k_eq_v"] = True
    elif mixer == "sliding":
        g["window"] = cfg.get(fam.window_key)
        if g["window"] is None:
            raise Unsupported("sliding layers but no sliding_window", [fam.window_key])
        native = cfg.get("max_position_embeddings")
        if native and g["window"] > native:
            # A window longer than the native context never bounds anything (checks/010): price as full.
            cfg.derive("layer_groups", f"{fam.window_key} {g['window']} exceeds max_position_embeddings {native}: "
                                       "those layers are written as full")
            del g["window"]
            g["kind"] = "full"
    elif mixer == "chunked":
        g["chunk"] = cfg.get(fam.window_key)
        if g["chunk"] is None:
            raise Unsupported("chunked layers but no attention_chunk_size", [fam.window_key])
    return g


def _mla(cfg: Config, fam: Family) -> dict:
    nope, rope, v = cfg.get("qk_nope_head_dim"), cfg.get("qk_rope_head_dim"), cfg.get("v_head_dim")
    missing = [k for k, x in (("qk_rope_head_dim", rope), ("qk_nope_head_dim", nope), ("v_head_dim", v)) if x is None]
    if missing:
        raise Unsupported("MLA config without its head dims", missing)
    # kv_heads/head_dim/v_head_dim: the decompressed geometry, used only by the naive column.
    g = {"kind": "mla", "kv_lora_rank": cfg.get("kv_lora_rank"), "qk_rope_head_dim": rope,
         "kv_heads": cfg.get("num_attention_heads"), "head_dim": nope + rope, "v_head_dim": v}
    if cfg.get("q_lora_rank"):
        # the query's low-rank width (q_a_proj, replicated on every TP rank: kvreg/weights.py); absent/null = full rank
        g["q_lora_rank"] = cfg.get("q_lora_rank")
    if fam.indexer:
        # The lightning indexer caches one index_head_dim key per token per layer; index_topk (how
        # many tokens attention then reads) and index_n_heads (its query heads) store nothing.
        if cfg.get("index_head_dim") is None:
            raise Unsupported("DeepSeek sparse attention config without index_head_dim", ["index_head_dim"])
        cfg.get("index_topk")
        g["index_head_dim"] = cfg.get("index_head_dim")
    return g


def _ssm_dtype(cfg: Config, fam: Family, model_dtype: str) -> str:
    key, val = cfg.first(*SSM_DTYPE_KEYS)
    if key:
        d = dtype_name(val)
        if d is None:
            raise Unsupported(f"{key}={val!r} is not a dtype kvreg knows", [key])
        return d
    if fam.ssm_dtype_default:
        cfg.derive("layer_groups.state.ssm.dtype", f"no mamba_ssm_dtype: {fam.ssm_dtype_default}, the state dtype "
                                                   f"vLLM applies by default for {fam.name}")
        return fam.ssm_dtype_default
    cfg.derive("layer_groups.state.ssm.dtype", "no mamba_ssm_dtype: model dtype (vLLM mamba_ssm_cache_dtype=auto)")
    return model_dtype


def _recurrent(cfg: Config, fam: Family, model_dtype: str) -> dict:
    if fam.recurrent == "kda":
        lac = cfg.get("linear_attn_config") or {}
        keys = ("num_heads", "head_dim", "short_conv_kernel_size")
        missing = [f"linear_attn_config.{k}" for k in keys if lac.get(k) is None]
        if missing:
            raise Unsupported("Kimi Delta Attention layers without their geometry", missing)
        nh, hd, k = (lac[x] for x in keys)
        conv = [{"role": "conv", "shape": [k - 1, nh * hd], "dtype": model_dtype} for _ in "qkv"]  # q, k, v windows
        return {"kind": "recurrent", "variant": "kda",
                "state": conv + [{"role": "ssm", "shape": [nh, hd, hd], "dtype": "fp32"}]}
    if fam.recurrent == "short_conv":
        # No recurrent matrix: the state is the convolution window alone, in the model dtype.
        k = cfg.get("conv_L_cache")
        if k is None:
            raise Unsupported("short-convolution layers without conv_L_cache", ["conv_L_cache"])
        dim = cfg.get("conv_dim")
        if dim is None:
            dim = cfg.get("hidden_size")
            cfg.derive("layer_groups.state.conv_dim", "conv_dim absent: hidden_size (LFM2 convolves the full width)")
        return {"kind": "recurrent", "variant": "short_conv",
                "state": [{"role": "conv", "shape": [k - 1, dim], "dtype": model_dtype}]}
    ssm_dtype = _ssm_dtype(cfg, fam, model_dtype)
    if fam.recurrent == "gated_deltanet":
        keys = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                "linear_value_head_dim", "linear_conv_kernel_dim")
        hk, hv, dk, dv, k = (cfg.get(x) for x in keys)
        missing = [x for x, v in zip(keys, (hk, hv, dk, dv, k)) if v is None]
        if missing:
            raise Unsupported("Gated DeltaNet layers without their geometry", missing)
        state = [{"role": "ssm", "shape": [hv, dk, dv], "dtype": ssm_dtype},
                 {"role": "conv", "shape": [k - 1, 2 * hk * dk + hv * dv], "dtype": model_dtype}]
        return {"kind": "recurrent", "variant": "gated_deltanet", "state": state}
    if fam.recurrent == "mamba2":
        v = {}
        defaults = dict(fam.mamba2_defaults)
        for role, aliases in MAMBA2_KEYS.items():
            key, val = cfg.first(*aliases)
            if key is None and role in defaults:
                val = defaults[role]
                cfg.derive(f"layer_groups.state.{role}", f"{' / '.join(aliases)} absent: transformers {fam.name} "
                                                         f"default {val}")
                cfg.note(f"Mamba-2 {role} ({aliases[-1]}) not in the config; transformers default {val} used.")
            if val is None and role == "head_dim" and v.get("heads"):
                # transformers mamba_d_head="auto": mamba_expand · hidden_size / mamba_n_heads
                expand = cfg.get("mamba_expand", 2)
                val = int(expand * cfg.get("hidden_size")) // v["heads"]
                cfg.derive("layer_groups.state.head_dim", f"{' / '.join(aliases)} absent: mamba_expand ({expand}) "
                                                          "× hidden_size / mamba heads (transformers 'auto')")
            if val is None:
                raise Unsupported(f"Mamba-2 layers without {role}", list(aliases))
            v[role] = val
        inner = v["heads"] * v["head_dim"]
        cfg.get("mamba_expand")  # redundant with heads × head_dim for Mamba-2
        if not cfg.has("mamba_d_ssm"):
            cfg.derive("layer_groups.state.d_ssm", "Mamba-2 inner width = mamba heads × mamba head dim")
        if cfg.has("mamba_d_ssm") and cfg.get("mamba_d_ssm") != inner:
            raise Unsupported("mamba_d_ssm differs from mamba heads × head dim", ["mamba_d_ssm"])
        state = [{"role": "ssm", "shape": [v["heads"], v["head_dim"], v["state"]], "dtype": ssm_dtype},
                 {"role": "conv", "shape": [v["conv"] - 1, inner + 2 * v["groups"] * v["state"]],
                  "dtype": model_dtype}]
        return {"kind": "recurrent", "variant": "mamba2", "state": state}
    if fam.recurrent == "mamba1":
        n, k, expand = cfg.get("mamba_d_state"), cfg.get("mamba_d_conv"), cfg.get("mamba_expand")
        missing = [x for x, y in (("mamba_d_state", n), ("mamba_d_conv", k), ("mamba_expand", expand)) if y is None]
        if missing:
            raise Unsupported("Mamba layers without their geometry", missing)
        inner = int(expand * cfg.get("hidden_size"))
        state = [{"role": "ssm", "shape": [inner, n], "dtype": ssm_dtype},
                 {"role": "conv", "shape": [k - 1, inner], "dtype": model_dtype}]
        return {"kind": "recurrent", "variant": "mamba1", "state": state}
    raise Unsupported(f"{fam.name} has recurrent layers but no recurrent rule", [])


def layer_groups(cfg: Config, fam: Family, model_dtype: str) -> tuple[int, list[dict], list[list[dict]]]:
    """``(layers, groups, per_layer)``: the entry's layer count, its merged layer groups,
    and for each layer index the group specs it runs (for the parameter count).

    ``layers`` is ``num_hidden_layers``: blocks without a sequence mixer
    (Nemotron-H's ``-``/``E`` in hybrid_override_pattern, ``mlp``/``moe`` in
    layers_block_type) are a layer group of kind ``mlp`` that stores nothing.

    Raises:
        Unsupported: when a needed key is absent or a value cannot be priced.
    """
    n = cfg.get("num_hidden_layers")
    if not isinstance(n, int) or n <= 0:
        raise Unsupported("num_hidden_layers is missing or not a positive integer", ["num_hidden_layers"])
    for k in fam.known:
        cfg.get(k)      # read: the family documents why it stores nothing
    per_layer = mixers(cfg, fam, n)
    if fam.mla or cfg.has("kv_lora_rank"):
        # A family with a recurrent rule keeps its recurrent layers (Kimi Linear: KDA beside MLA).
        allowed = {"full"} | ({"kda"} if fam.recurrent == "kda" else set())
        if any(m not in allowed for m in per_layer):
            raise Unsupported("MLA with sliding, chunked or recurrent layers", ["kv_lora_rank", "layer_types"])
        per_layer = ["mla" if m == "full" else m for m in per_layer]
    shared_n = cfg.get("num_kv_shared_layers", 0)
    first_shared = n - shared_n
    specs: list[tuple[int, dict]] = []
    for i, m in enumerate(per_layer):
        parts = m.split("+")
        for at, part in enumerate(parts):
            if part.startswith("cmp"):
                # DeepSeek-V4: the compressed KV and the compressors' state run inside a layer whose
                # sliding window (the "swa" part) is already counted.
                for g in _compressed(cfg, fam, int(part[3:])):
                    specs.append((i, {**g, "shares_layers": True}))
                continue
            if part == "swa":
                # DeepSeek-V4's sliding-window cache, on every layer: window tokens of one head_dim
                # vector (K = V, num_kv_heads 1): vLLM v1/attention/backends/mla/sparse_swa.py
                # DeepseekV4SWACache (SlidingWindowMLASpec, num_kv_heads 1, max_tp_shards 1).
                part = "sliding"
                g = {**_attn(cfg, fam, part), "k_eq_v": True}
            elif part == "mlp":
                g = {"kind": "mlp"}          # no sequence mixer: no KV, no state (schema kind mlp)
            elif part == "mla":
                g = _mla(cfg, fam)
            elif part in ("full", "sliding", "chunked"):
                g = _attn(cfg, fam, part)
            elif part in ("linear", "mamba", "shortconv", "kda"):
                if fam.recurrent is None:
                    raise Unsupported(f"{part} layers in a family without a recurrent rule", ["layer_types"])
                g = _recurrent(cfg, fam, model_dtype)
            else:  # pragma: no cover - mixers() only yields the names above
                raise AssertionError(part)
            if part == "mamba" and len(parts) > 1:
                g["shares_layers"] = True
            if i >= first_shared and g["kind"] in ("full", "sliding", "chunked"):
                # Gemma 3n/4 KV sharing: reuse the last non-shared layer of the same type.
                src = max(j for j in range(first_shared) if per_layer[j] == m)
                g = {"kind": "shared", "kv_heads": g["kv_heads"], "head_dim": g["head_dim"],
                     **({"k_eq_v": True} if g.get("k_eq_v") else {}), "reuses": f"layer {src} ({m})"}
            specs.append((i, g))
    groups: list[dict] = []
    where: list[list[int]] = []
    for i, g in specs:
        for j, h in enumerate(groups):
            if h == g:
                where[j].append(i)
                break
        else:
            groups.append(g)
            where.append([i])
    out = []
    for g, idx in zip(groups, where):
        g = {"kind": g["kind"], "count": len(idx), **{k: v for k, v in g.items() if k != "kind"}}
        g["note"] = f"layers {_compress(idx)}"
        out.append(g)
    by_layer: list[list[dict]] = [[] for _ in range(n)]
    for i, g in specs:
        by_layer[i].append(g)
    no_mixer = sum(1 for m in per_layer if m == "mlp")
    if no_mixer:
        cfg.note(f"{no_mixer} of num_hidden_layers={n} blocks have no sequence mixer (MLP or MoE only): "
                 "layer group kind mlp, no cache.")
    return n, out, by_layer
