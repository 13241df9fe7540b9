"""Architecture families as data: how each ``model_type`` lays out its layers.

Each :class:`Family` says, for one group of ``model_type`` values, how to find
the kind of every layer when the config carries no explicit ``layer_types``,
which keys name the window, the recurrent state and the experts, and which
defaults the transformers config class applies when a key is absent.  The
importer never branches on a model name; adding an architecture is adding a
row here (docs/import-hf.md lists what is read from which key).

Sources of the rules: the transformers ``configuration_<model>.py`` of each
family (``layer_types`` defaults in ``__init__``/``__post_init__``), vLLM's
``MambaStateShapeCalculator`` for recurrent state shapes, and
``../shared/data/model_facts.yaml`` (``layer_pattern.source`` of each model).
"""

from __future__ import annotations

import dataclasses
import re

# layer_types vocabulary (transformers ``layer_types`` / Granite's "mamba"/"attention") -> mixer.
LAYER_TYPE_NAMES = {
    "full_attention": "full", "attention": "full", "global": "full", "global_attention": "full",
    "sliding_attention": "sliding", "local_attention": "sliding", "sliding_window": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
    "mamba": "mamba", "mamba2": "mamba",
    "hybrid": "full",                 # Falcon-H1 layers_block_type: attention + Mamba-2 in the layer
    "mlp": "mlp", "moe": "mlp",       # Nemotron-H blocks without a sequence mixer
    "conv": "shortconv",              # LFM2 double-gated short-convolution blocks
}
LAYER_TYPE_KEYS = ("layer_types", "layers_block_type")

# Nemotron-H hybrid_override_pattern characters (NemotronHConfig): one block per character.
PATTERN_CHARS = {"M": "mamba", "*": "full", "-": "mlp", "E": "mlp"}

# Key aliases for Mamba-2 geometry (NemotronH uses the first spelling, FalconH1/GraniteMoeHybrid the second).
MAMBA2_KEYS = {
    "heads": ("mamba_num_heads", "mamba_n_heads"),
    "head_dim": ("mamba_head_dim", "mamba_d_head"),
    "state": ("ssm_state_size", "mamba_d_state"),
    "groups": ("n_groups", "mamba_n_groups"),
    "conv": ("conv_kernel", "mamba_d_conv"),
}
SSM_DTYPE_KEYS = ("mamba_ssm_dtype", "mamba_ssm_cache_dtype")

MOE_EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
MOE_TOPK_KEYS = ("num_experts_per_tok", "experts_per_token", "top_k_experts", "moe_topk", "num_experts_per_token")


@dataclasses.dataclass(frozen=True)
class Family:
    """How one architecture family is read.

    ``layout`` (used only when the config has no ``layer_types``):
      ``uniform``     every layer the same (full, or sliding when the window applies);
      ``alternate``   sliding at even indices, full at odd (Gemma 2);
      ``every_nth``   full when (i+1) % n == 0, else ``other``; n from ``interval_key``
                      or ``interval_default``;
      ``pattern``     one character per block in ``hybrid_override_pattern`` (Nemotron-H);
      ``period``      attention when i % attn_layer_period == attn_layer_offset, else Mamba (Jamba);
      ``parallel``    attention and Mamba-2 in every layer (Falcon-H1);
      ``all_recurrent`` every layer Mamba (GraniteMoeHybrid without layer_types);
      ``indices``     full at the indices listed in ``attn_indices_key``, else short convolution (LFM2);
      ``compress_ratios`` a sliding window on every layer, plus a compressed KV where ``compress_ratios``
                      (or ``compress_rates`` by ``layer_types``) gives 4 or 128 (DeepSeek-V4);
      ``kda_indices`` Kimi Delta Attention at ``linear_attn_config.kda_layers`` (1-based), MLA at
                      ``linear_attn_config.full_attn_layers`` (Kimi Linear, Kimi-K3).
    """

    name: str
    model_types: tuple[str, ...]
    layout: str = "uniform"
    other: str = "sliding"
    interval_key: str | None = None
    interval_aliases: tuple[str, ...] = ()  # other spellings of interval_key, read as the same rule
    interval_default: int | None = None
    window_key: str = "sliding_window"
    window_gate: str | None = None          # key that must be true for the window to apply
    window_gate_default: bool = True        # value of window_gate when absent (transformers default)
    recurrent: str | None = None            # gated_deltanet | mamba2 | mamba1
    mamba2_defaults: tuple[tuple[str, int], ...] = ()   # transformers defaults for absent Mamba-2 keys
    ssm_dtype_default: str | None = None    # None: model dtype (vLLM 'auto'); else the dtype vLLM's model hook
                                            # applies when the config names none (NemotronH: float32)
    tie_default: bool = False               # transformers default of tie_word_embeddings
    qkv_bias: bool = False                  # q/k/v projections carry a bias without attention_bias
    qk_norm: bool = False                   # per-head RMSNorm on q and k (Qwen3, Gemma 3+)
    mlp: str = "gated"                      # gated (gate, up, down) | plain (up, down)
    shared_expert_default: int = 0          # shared experts when the config names none (Llama 4)
    dense_mlp_beside_moe: bool = False      # a dense MLP runs beside the experts in every layer (Gemma 4 26B)
    post_norms: int = 0                     # extra per-layer norms (Gemma's pre/post feed-forward norms)
    mla: bool = False                       # multi-head latent attention (kv_lora_rank)
    indexer: bool = False                   # DeepSeek sparse attention: a lightning indexer's key cache (index_head_dim)
    layer_flags_key: str | None = None      # per-layer 0/1 list: 1 → ``other``, 0 → full (Llama 4 no_rope_layers)
    attention_sinks: bool = False           # one learned sink logit per head (gpt-oss)
    output_gate_default: bool = False       # q_proj also projects a per-head output gate when attn_output_gate
                                            # is absent (transformers Qwen3NextAttention: q_proj heads·head_dim·2)
    expert_bias: bool = False               # expert MLPs and router carry biases (gpt-oss)
    attn_indices_key: str | None = None     # layout "indices": the key listing the attention layers (LFM2 full_attn_idxs)
    ff_auto_adjust: bool = False            # LFM2 block_auto_adjust_ff_dim: MLP width int(2·ff/3) × multiplier, rounded up
    compress_ratios: tuple[int, ...] = ()   # layout "compress_ratios": the ratios the compressor takes (DeepSeek-V4)
    compress_indexed: int | None = None     # the ratio whose layers carry the indexer and overlapping windows
    params_rule: bool = True                # False: no parameter rule yet; import needs --params-total
    attn_type_key: str | None = None        # per-layer attention type list: 1 = softmax attention, anything else
                                            # (0 = MiniMax lightning attention) is refused (MiniMax-M2 attn_type_list)
    key_aliases: tuple[tuple[str, str], ...] = ()   # old spellings → the keys the rules read (phi-msft n_embd …)
    config_defaults: tuple[tuple[str, object], ...] = ()   # the transformers config class's value of a key the
                                            # config.json leaves out (Gemma 3's sparse published configs)
    ff_default_mult: int | None = None      # MLP width when the config names none: this × hidden_size (phi-msft n_inner)
    known: tuple[str, ...] = ()             # keys known not to change what a sequence stores (read, then ignored)


def _fam(*args, **kw) -> Family:
    return Family(*args, **kw)


FAMILIES: list[Family] = [
    _fam("llama", ("llama", "yi")),
    _fam("mistral", ("mistral",)),
    _fam("mixtral", ("mixtral",)),
    _fam("qwen2", ("qwen2", "qwen2_moe"), window_gate="use_sliding_window", window_gate_default=False,
         qkv_bias=True),
    _fam("qwen3", ("qwen3", "qwen3_moe"), window_gate="use_sliding_window", window_gate_default=False,
         qk_norm=True),
    _fam("phi3", ("phi3",)),
    # Phi-2 / Phi-1.5: MHA on every layer, partial rotary (rotary_dim / partial_rotary_factor: no
    # storage), plain fc1/fc2 MLP, biases everywhere.  The original remote-code config (model_type
    # phi-msft, microsoft/phi-2 before transformers' PhiConfig) spells the sizes n_embd, n_layer,
    # n_head, n_head_kv, n_positions, n_inner (null: 4 × n_embd) — its configuration_phi.py
    # PhiConfig; transformers configuration_phi.py reads the same model as hidden_size etc.
    _fam("phi", ("phi", "phi-msft"), mlp="plain", qkv_bias=True,
         key_aliases=(("n_embd", "hidden_size"), ("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"),
                      ("n_head_kv", "num_key_value_heads"), ("n_positions", "max_position_embeddings"),
                      ("n_inner", "intermediate_size")), ff_default_mult=4),
    # StarCoder2: one sliding_window on every layer when set (vLLM starcoder2.py 0.22.0:119 builds
    # Attention without a per-layer window, so the model's sliding_window — cache_config — applies to
    # all layers; 0.33.0 runs it through the Transformers backend, transformers/base.py:692, same
    # without layer_types); plain c_fc/c_proj MLP with biases (use_bias).
    _fam("starcoder2", ("starcoder2",), mlp="plain", qkv_bias=True, tie_default=True),   # Starcoder2Config ties
    # Granite 3.x (GraniteForCausalLM / GraniteMoe*): Llama-style GQA on every layer; its µP scalars
    # (embedding_multiplier, attention_multiplier, residual_multiplier, logits_scaling) scale
    # activations and store nothing.  transformers configuration_granite.py: tie_word_embeddings
    # default False, but every published Granite 3 config sets it (true).
    _fam("granite", ("granite", "granitemoe", "granitemoeshared")),
    # OLMo 2: full attention on every layer; q/k RMSNorm over the whole projection (transformers
    # modeling_olmo2.py Olmo2Attention q_norm / k_norm); nothing else stored.
    _fam("olmo2", ("olmo2",), qk_norm=True),
    # SmolLM3: full attention on every layer; no_rope_layers (1 = RoPE, 0 = NoPE every 4th layer,
    # transformers configuration_smollm3.py) changes the rotary, never what is stored.
    # use_sliding_window false by default (SmolLM3Config), as Qwen2.
    _fam("smollm3", ("smollm3",), window_gate="use_sliding_window", window_gate_default=False,
         known=("no_rope_layers", "no_rope_layer_interval")),
    # GLM-4.5 / 4.6 / 4.7 (Glm4MoeForCausalLM): GQA full attention on every layer (partial rotary,
    # optional q/k norm: use_qk_norm), first_k_dense_replace dense layers then MoE with shared
    # experts; MTP layers (num_nextn_predict_layers) left out.  vLLM glm4_moe.py Glm4MoeAttention.
    _fam("glm4-moe", ("glm4_moe",), qkv_bias=False),
    # MiniMax-M2 / M2.x: attn_type_list all 1 = softmax (full) attention on every layer (the M2 series
    # dropped MiniMax-Text-01's lightning attention); 0 would be lightning attention, refused.  Per-layer
    # q/k RMSNorm (qk_norm_type per_layer), sigmoid routing with a correction bias, MTP modules
    # (num_mtp_modules) left out.  vLLM minimax_m2.py MiniMaxM2Attention.
    _fam("minimax-m2", ("minimax_m2",), attn_type_key="attn_type_list", qk_norm=True),
    _fam("cohere", ("cohere",), tie_default=True),
    _fam("gemma2", ("gemma2",), layout="alternate", tie_default=True, post_norms=2),
    # Newer transformers keep the pattern as `_sliding_window_pattern` (configuration_gemma3.py: "BC -> the
    # pattern used to be a simple int, and it's still present in configs on the Hub": `self._sliding_window_pattern
    # = kwargs.get("sliding_window_pattern", 6)`, layer_types full where (i + 1) % it == 0), and a config saved by
    # them carries that spelling: the same rule (interval_aliases).
    # Gemma 3's published configs are sparse (google/gemma-3-4b-it names only hidden, intermediate and
    # layer counts and the window): transformers configuration_gemma3.py Gemma3TextConfig.__init__
    # supplies vocab_size 262_208, num_attention_heads 8, num_key_value_heads 4, head_dim 256,
    # max_position_embeddings 131_072 (also what model_facts' gemma-3-27b defaults_note records).
    _fam("gemma3", ("gemma3_text", "gemma3"), layout="every_nth", interval_key="sliding_window_pattern",
         interval_aliases=("_sliding_window_pattern",),
         interval_default=6, tie_default=True, qk_norm=True, post_norms=2,
         config_defaults=(("vocab_size", 262_208), ("num_attention_heads", 8), ("num_key_value_heads", 4),
                          ("head_dim", 256), ("max_position_embeddings", 131_072))),
    _fam("gemma3n", ("gemma3n_text", "gemma3n"), layout="every_nth", interval_default=5, tie_default=True,
         qk_norm=True, post_norms=2),
    _fam("gemma4", ("gemma4_text", "gemma4"), layout="every_nth", interval_key="sliding_window_pattern",
         interval_aliases=("_sliding_window_pattern",),
         interval_default=6, tie_default=True, qk_norm=True, post_norms=2, dense_mlp_beside_moe=True),
    _fam("gpt-oss", ("gpt_oss",), layout="alternate", attention_sinks=True, expert_bias=True),
    _fam("llama4", ("llama4_text", "llama4"), layout="every_nth", other="chunked",
         interval_key="no_rope_layer_interval", interval_default=4, window_key="attention_chunk_size",
         layer_flags_key="no_rope_layers",
         shared_expert_default=1, qk_norm=False),
    _fam("deepseek-mla", ("deepseek_v2", "deepseek_v3", "kimi_k2"), mla=True),
    # DeepSeek-V3.2 and GLM-5: MLA plus the DSA lightning indexer (index_n_heads query heads, one
    # index_head_dim key per token cached; index_topk sets how many tokens attention reads, not
    # what is stored).  vLLM deepseek_v2.py Indexer / DeepseekV32IndexerCache.
    _fam("deepseek-dsa", ("deepseek_v32", "glm_moe_dsa"), mla=True, indexer=True),
    # DeepSeek-V4 (Flash, Pro): no MLA latent.  Every layer keeps a sliding window (sliding_window
    # tokens) of one head_dim vector (K = V, num_key_value_heads 1); a layer whose compress_ratios
    # entry is 4 (CSA) or 128 (HCA) also keeps a KV compressed that many tokens to one entry, and the
    # compressors' partial sums; ratio-4 layers also the lightning indexer's key (index_head_dim),
    # compressed 4:1.  vLLM models/deepseek_v4/attention.py (DeepseekV4Attention, DeepseekV4Indexer),
    # compressor.py (CompressorStateCache), v1/attention/backends/mla/sparse_swa.py (DeepseekV4SWACache).
    # Its weights (hyper-connections hc_mult, grouped low-rank output o_groups/o_lora_rank, hash-routed
    # layers) have no parameter rule here: import with --params-total.
    _fam("deepseek-v4", ("deepseek_v4",), layout="compress_ratios", compress_ratios=(4, 128), compress_indexed=4,
         params_rule=False),
    _fam("qwen3-next", ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe"),
         layout="every_nth", other="linear", interval_key="full_attention_interval", interval_default=4,
         recurrent="gated_deltanet", qk_norm=True, output_gate_default=True),
    # mtp_hybrid_override_pattern (Nemotron 3 Super): the MTP module's own blocks, left out like every
    # MTP module (loaded only with speculative decoding).
    _fam("nemotron-h", ("nemotron_h",), layout="pattern", recurrent="mamba2",
         mamba2_defaults=(("groups", 8), ("conv", 4)), ssm_dtype_default="fp32", mlp="plain",
         known=("mtp_hybrid_override_pattern",)),
    _fam("jamba", ("jamba",), layout="period", recurrent="mamba1"),
    _fam("granite-4.0-h", ("granitemoehybrid",), layout="all_recurrent", recurrent="mamba2",
         mamba2_defaults=(("groups", 1), ("conv", 4))),
    _fam("falcon-h1", ("falcon_h1",), layout="parallel", recurrent="mamba2",
         mamba2_defaults=(("groups", 1), ("conv", 4))),
    # LFM2: attention at full_attn_idxs (or layer_types "full_attention"), every other layer a
    # double-gated short convolution whose only state is its (conv_L_cache − 1) × conv_dim window
    # (vLLM lfm2.py get_mamba_state_shape_from_config → MambaStateShapeCalculator.short_conv_state_shape;
    # dtype: the model dtype, short_conv_state_dtype with mamba_cache_dtype auto).  transformers
    # Lfm2Config: tie_word_embeddings True, per-head q/k layernorm, block_auto_adjust_ff_dim.
    # Kimi Linear / Kimi-K3: Kimi Delta Attention (a gated delta rule, recurrent) on most layers and
    # MLA on the rest.  KDA state per layer (vLLM mamba_utils.py kda_state_shape / kda_state_dtype):
    # q, k and v short-convolution windows of (short_conv_kernel_size − 1) × heads·head_dim in the
    # model dtype, and a heads × head_dim × head_dim recurrent state in float32, always.
    _fam("kimi-linear", ("kimi_linear", "kimi_k3"), layout="kda_indices", mla=True, recurrent="kda"),
    _fam("lfm2", ("lfm2",), layout="indices", attn_indices_key="full_attn_idxs", recurrent="short_conv",
         tie_default=True, qk_norm=True, ff_auto_adjust=True),
]

# Architectures (config "architectures") -> model_type, for configs that omit model_type.
ARCHITECTURES = {
    "LlamaForCausalLM": "llama", "YiForCausalLM": "llama", "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe", "Phi3ForCausalLM": "phi3", "CohereForCausalLM": "cohere",
    "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3", "Gemma3nForConditionalGeneration": "gemma3n",
    "Gemma4ForConditionalGeneration": "gemma4", "GptOssForCausalLM": "gpt_oss",
    "Llama4ForConditionalGeneration": "llama4", "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v3", "DeepseekV32ForCausalLM": "deepseek_v32",
    "DeepseekV4ForCausalLM": "deepseek_v4",
    "GlmMoeDsaForCausalLM": "glm_moe_dsa", "Qwen3NextForCausalLM": "qwen3_next",
    "Qwen3_5ForConditionalGeneration": "qwen3_5", "Qwen3_5MoeForConditionalGeneration": "qwen3_5_moe",
    "NemotronHForCausalLM": "nemotron_h", "JambaForCausalLM": "jamba",
    "GraniteMoeHybridForCausalLM": "granitemoehybrid", "FalconH1ForCausalLM": "falcon_h1",
    "Lfm2ForCausalLM": "lfm2", "KimiLinearForCausalLM": "kimi_linear",
    "PhiForCausalLM": "phi", "Starcoder2ForCausalLM": "starcoder2", "Olmo2ForCausalLM": "olmo2",
    "SmolLM3ForCausalLM": "smollm3", "GraniteForCausalLM": "granite", "GraniteMoeForCausalLM": "granitemoe", "Glm4MoeForCausalLM": "glm4_moe", "MiniMaxM2ForCausalLM": "minimax_m2",
    "KimiK3ForConditionalGeneration": "kimi_k3",
}

# Keys whose presence may change per-layer memory.  A key matching this that no
# rule read is an "uninterpreted field": the import fails rather than guess.
MEMORY_KEY_RE = re.compile(
    r"window|layer_types|pattern|linear_|mamba|ssm|lora|kv_shared|k_eq_v|global_|compress|index_|"
    r"sparse|chunk|no_rope|attn_layer|block_type|shared_kv|kv_layer|cross_layer")

# Keys matching MEMORY_KEY_RE that do not change what a sequence stores.
MEMORY_KEY_HARMLESS = {
    "mamba_dt_rank", "mamba_dt_min", "mamba_dt_max", "mamba_dt_init", "mamba_dt_scale", "mamba_dt_init_floor",
    "mamba_dt_limit", "mamba_conv_bias", "mamba_proj_bias", "mamba_chunk_size", "mamba_hidden_act",
    "mamba_inner_layernorms", "mamba_rms_norm", "mamba_norm_before_gate", "use_mamba_kernels", "chunk_size",
    "use_sliding_window", "sliding_window_size", "max_window_layers", "linear_attn_bias",
    "global_rope_theta", "local_rope_theta", "rope_local_base_freq", "mamba_use_mlp", "projectors_bias",
    "activation_sparsity_pattern", "compress_rope_theta", "ssm_in_multiplier", "ssm_out_multiplier", "ssm_multipliers", "mlp_multipliers",
}


def family_for(model_types: tuple[str, ...], architectures: list[str]) -> Family | None:
    """The family whose ``model_types`` contains the first of ``model_types`` (or an architecture's)."""
    candidates = list(model_types) + [ARCHITECTURES[a] for a in architectures if a in ARCHITECTURES]
    for mt in candidates:
        for fam in FAMILIES:
            if mt in fam.model_types:
                return fam
    return None


def supported_model_types() -> list[str]:
    """Every model_type the importer knows, sorted (for error hints)."""
    return sorted({mt for f in FAMILIES for mt in f.model_types})
