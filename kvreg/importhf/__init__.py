"""``kvreg import-hf``: a Hugging Face config.json → a validated registry model entry.

:func:`import_config` reads the config (``reader``), finds its family rules
(``families``), lays out its layers (``layers``), counts its parameters
(``params``) and validates the result against :class:`kvreg.schema.model.ModelEntry`
before anything is written (``writer``).  Architectures it cannot interpret fail
with a :class:`~kvreg.problems.KvregError`; nothing is guessed silently.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path

from kvreg.problems import KvregError, Problem

HAND_HINT = ("write the entry by hand: copy a registry/models/*.yaml of the nearest architecture and set "
             "layer_groups (kinds full, sliding, chunked, mla, recurrent, shared, mlp) from the model's config and "
             "modeling code; docs/import-hf.md lists what each family reads")


@dataclasses.dataclass
class Imported:
    """An imported entry: the data, its YAML text, and what was derived or left unread."""

    entry: dict
    header: str
    derived: dict[str, str]
    unused: list[str]
    ignored_subtrees: list[str]
    notes: list[str]

    @functools.cached_property
    def text(self) -> str:
        """The entry as YAML (kvreg/importhf/writer.py), rendered when first asked for: the geometry fill and the
        config check of every validation read only ``entry`` (rendering was ~60 % of their import time)."""
        from kvreg.importhf.writer import render

        return render(self.entry, self.header)

    def explain(self) -> str:
        """Human-readable account: derived fields with reasons, then config keys not used."""
        out = ["derived (not read verbatim from config.json):"]
        out += [f"  {k}: {v}" for k, v in sorted(self.derived.items())] or ["  (none)"]
        out.append("read from config.json but not used:")
        out += [f"  {k}" for k in self.unused] or ["  (none)"]
        if self.ignored_subtrees:
            out.append("not read (other modalities): " + ", ".join(self.ignored_subtrees))
        return "\n".join(out)


def default_id(hf_id: str | None, config_path: Path) -> str:
    """A registry id: the lower-cased model name of ``hf_id``, else the config's folder or file stem."""
    if hf_id:
        base = hf_id.split("/")[-1]
    else:
        base = config_path.parent.name if config_path.stem == "config" else config_path.stem
    base = re.sub(r"[^a-z0-9.\-]+", "-", base.lower()).strip("-.")
    return base or "imported-model"


def _below_cwd(path: Path) -> str | None:
    """``path`` relative to the working directory (posix), or None when it lies outside it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return None


def display_path(path: Path) -> str:
    """Where a problem points: ``path`` relative to the working directory, else the path as given.

    A path outside the working directory is never cut to ``parent/name``: "tmp/x.json" for "/tmp/x.json"
    reads as a relative path that does not exist (the new-user trial's F10).
    """
    return _below_cwd(path) or Path(path).as_posix()


def _note_path(path: Path, where: str) -> str:
    """Where the config was read, for the entry's text (header, source): the path when it lies below the
    working directory (``registry/models/x.config.json``) or a relative one as given (``../cfg/base.json``), else
    "a local copy of parent/name" — entries never carry a machine's absolute paths, and a bare cut one
    ("tmp/x.json") reads as a path that is not there."""
    if _below_cwd(path) is not None:
        return where
    path = Path(path)
    if not path.is_absolute():
        return path.as_posix()     # as given ("../cfg/base.json"): a relative path, no machine's layout in it
    return f"a local copy of {path.parent.name}/{path.name}" if path.parent.name else f"a local copy of {path.name}"


def _fail(where: str, code: str, message: str, fields: list[str], hint: str = HAND_HINT) -> KvregError:
    return KvregError([Problem(where, 0, 0, ",".join(fields), code, message, hint)])


ZERO_EXPERTS_DENSE = ("qwen2_moe", "qwen3_moe", "qwen3_next")
"""model_types whose transformers decoder layer builds the MoE block only when ``num_experts > 0`` (else the dense
MLP): Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer / Qwen3NextDecoderLayer ``__init__``, ``(layer_idx not in
config.mlp_only_layers) and (config.num_experts > 0 and (layer_idx + 1) % config.decoder_sparse_step == 0)``.
Elsewhere (Mixtral's MixtralSparseMoeBlock, DeepSeek's n_routed_experts) the block is built whatever the count."""


def _check_experts(cfg, fam, where: str) -> None:
    """Refuse an expert count the family's model cannot run: 0 experts where 0 does not mean dense
    (:data:`ZERO_EXPERTS_DENSE`), or more experts per token than experts; note 0 read as dense where it is.

    Raises:
        KvregError: ``bad-config-value`` at the experts key.
    """
    from kvreg.importhf.families import MOE_EXPERT_KEYS, MOE_TOPK_KEYS

    key, experts = cfg.first(*MOE_EXPERT_KEYS)
    if key is None or not isinstance(experts, int):
        return
    topk_key, topk = cfg.first(*MOE_TOPK_KEYS)
    kinds = set(cfg.kinds)
    if experts == 0:
        if key == "num_experts" and kinds & set(ZERO_EXPERTS_DENSE):
            cfg.note(f"{cfg.origin[key]} is 0: a dense model (transformers builds the MoE block only when "
                     "num_experts > 0)")
            return
        raise _fail(where, "bad-config-value",
                    f"{cfg.origin[key]} is 0" + (f" with {cfg.origin[topk_key]} {topk}" if topk_key else "")
                    + f": a {fam.name} model builds its expert block whatever the count, and cannot route a token "
                    "to 0 experts", [cfg.origin[key]],
                    "a dense checkpoint has no expert keys; else write the checkpoint's expert count")
    if isinstance(topk, int) and topk > experts:
        raise _fail(where, "bad-config-value",
                    f"{cfg.origin[topk_key]} is {topk}, more than the {experts} experts of {cfg.origin[key]}: "
                    "a token cannot pick more experts than there are", [cfg.origin[topk_key]],
                    "write the checkpoint's own expert counts")


def import_config(config_path: Path | str, entry_id: str | None = None, hf_id: str | None = None,
                  weights_index: Path | str | None = None, params_total: float | None = None,
                  display: str | None = None) -> Imported:
    """Import one config.json as a model entry; see :func:`_import_config` (same arguments).

    Every problem points at the config line of its key; a config whose values no family rule
    can compute with (a list where a count belongs, a zero divisor) is ``unsupported-config``,
    never a traceback.
    """
    from kvreg.importhf.reader import locate

    where = display or display_path(Path(config_path))
    try:
        return _import_config(config_path, entry_id, hf_id, weights_index, params_total, display)
    except KvregError as exc:
        raise locate(exc, config_path) from None
    except (TypeError, ValueError, ArithmeticError, KeyError, IndexError, AttributeError) as exc:
        raise KvregError([Problem(where, 1, 1, "", "unsupported-config",
                                  f"kvreg cannot compute with this config's values: {type(exc).__name__}: {exc}",
                                  "check the counts and sizes in config.json against the model card; "
                                  + HAND_HINT)]) from None


def _import_config(config_path: Path | str, entry_id: str | None = None, hf_id: str | None = None,
                   weights_index: Path | str | None = None, params_total: float | None = None,
                   display: str | None = None) -> Imported:
    """Import one config.json as a model entry (validated, not yet written).

    Args:
        config_path: the model's ``config.json``.
        entry_id: registry id (default from ``hf_id`` or the config's folder name).
        hf_id: ``org/name`` on the Hugging Face hub, recorded as the source and ``hf_id``.
        weights_index: ``model.safetensors.index.json``; its ``metadata.total_size`` (bytes)
            becomes the measured size of the checkpoint (``checkpoints[0].bytes``); its tensor
            names flag towers and MTP layers (kvreg/importhf/checkpoint.py).  The config's
            ``quantization_config`` gives the checkpoint's precision and per-tensor-group
            quantization either way.
        params_total: parameter count to use when the config lacks the dimensions to count it
            (recorded with confidence ``estimated``).
        display: how to name the config in the entry's source (default: the path as given).

    Raises:
        KvregError: unreadable config, unsupported architecture (``unsupported-architecture``),
            a memory-relevant key no rule interprets (``uninterpreted-field``), or an entry
            that fails the schema (``invalid-import``).
    """
    from kvreg.importhf import families, layers, params
    from kvreg.importhf.reader import dtype_name, read_config

    config_path = Path(config_path)
    where = display or display_path(config_path)
    cfg = read_config(config_path, where)
    fam = families.family_for(cfg.kinds, cfg.architectures)
    who = f"model_type {cfg.model_type!r}" + (f" (text {cfg.text_model_type!r})" if cfg.text_model_type else "") + \
        f", architectures {cfg.architectures}"
    if fam is None:
        fields = sorted(cfg.origin[k] for k in cfg.fields if families.MEMORY_KEY_RE.search(k))
        raise _fail(where, "unsupported-architecture",
                    f"{who} is not an architecture kvreg can import (known model_types: "
                    f"{', '.join(families.supported_model_types())}); fields it could not interpret: "
                    f"{', '.join(fields) or 'none beyond the basic attention keys'}", fields)
    for old, new in fam.key_aliases:
        # An old spelling of a key the rules read (phi-msft n_embd = hidden_size): read it under its name.
        if not cfg.has(new) and cfg.has(old):
            cfg.fields[new], cfg.origin[new] = cfg.fields[old], cfg.origin[old]
            cfg.read.update((old, new))
    for key, value in fam.config_defaults:
        if not cfg.has(key):
            # Absent from config.json: the value the family's transformers config class gives it.
            cfg.fields[key], cfg.origin[key] = value, f"{key} (absent: {fam.name} default)"
            cfg.derive(f"config.{key}", f"absent from config.json: {value}, the transformers {fam.name} "
                                        "config class default")
    _check_experts(cfg, fam, where)
    model_dtype = dtype_name(cfg.first("torch_dtype", "dtype", default="bfloat16")[1]) or "bf16"
    if not cfg.has("torch_dtype") and not cfg.has("dtype"):
        cfg.derive("dtype", "torch_dtype absent: bf16 assumed")
    # Native context: max_position_embeddings; a config without it that names model_max_length (Kimi
    # Linear) gets that, as vLLM derives max_model_len from model_max_length when the config has one
    # (vllm transformers_utils/model_arch_config_convertor.py 0.33.0:404-406).
    ctx_key = "max_position_embeddings" if cfg.has("max_position_embeddings") or not cfg.has("model_max_length") \
        else "model_max_length"
    missing = [k for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", ctx_key) if not cfg.has(k)]
    if missing:
        raise _fail(where, "missing-dimension", f"{who}: config lacks {', '.join(missing)}", missing,
                    "add the key to the config (max_position_embeddings is the model's native context)")
    try:
        n_layers, groups, per_layer = layers.layer_groups(cfg, fam, model_dtype)
    except layers.Unsupported as exc:
        raise _fail(where, "unsupported-architecture", f"{who}: {exc}", exc.fields) from None

    from kvreg.importhf import checkpoint

    weights_dtype = model_dtype
    quant = cfg.get("quantization_config") or {}
    method = str(quant.get("quant_method", "")).lower()
    quant_note = None
    quantization = None
    if method:
        try:
            weights_dtype, quantization, qnotes = checkpoint.quantization(quant, n_layers, model_dtype)
            if qnotes:
                quant_note = "quantization_config: " + "; ".join(qnotes) + "."
            cfg.derive("checkpoints", f"quantization_config {method}: {weights_dtype} checkpoint priced per tensor "
                                      "group (kvreg/importhf/checkpoint.py)")
        except checkpoint.UnknownQuantization as exc:
            weights_dtype = model_dtype
            quant_note = (f"checkpoint quantization {exc} not priced from the config; "
                          "pass --weights-index for exact checkpoint bytes.")

    moe = params.moe_of(cfg, fam)
    shown = display or _note_path(config_path, where)     # the entry's own text: no absolute path
    sources = [{"id": "config", **({"url": f"https://huggingface.co/{hf_id}/blob/main/config.json"} if hf_id
                                    else {"title": f"config.json ({shown})"}),
                "note": "imported by kvreg import-hf" + (f" from {shown}" if hf_id else "")}]
    if params_total is not None:
        total, active, routed = params_total, None, 0
        p_total = {"value": int(params_total) if float(params_total).is_integer() else params_total,
                   "source": "given", "confidence": "estimated", "note": "given to import-hf (--params-total)"}
        # The number came from the command line: name that as its source, for a reviewer to replace
        # with where it was published (an unsourced number is a validation problem).
        sources.append({"id": "given", "title": "kvreg import-hf --params-total",
                        "note": "a number given on the command line; cite where it was published"})
    else:
        try:
            total, active, routed = params.count(cfg, fam, groups, per_layer)
        except params.MissingDimension as exc:
            raise _fail(where, "missing-dimension", f"{who}: cannot count parameters without {exc}", exc.fields,
                        "pass --params-total N (the published count), or add the key to the config") from None
        p_total = {"value": total, "source": "config", "confidence": "derived",
                   "note": "counted from config dims (embeddings, attention, MLP/experts, norms; MTP excluded)"}
    entry: dict = {"id": entry_id or default_id(hf_id, config_path)}
    if hf_id:
        entry["hf_id"] = hf_id
    entry.update({
        "family": fam.name,
        "architecture": (cfg.architectures or [None])[0],
        "layers": n_layers,
        "hidden_size": cfg.get("hidden_size"),
        "vocab_size": cfg.get("vocab_size"),
        "attention_heads": cfg.get("num_attention_heads"),
        "native_context": {"value": cfg.get(ctx_key), "source": "config", "confidence": "read", "note": ctx_key},
        "params_total": p_total,
    })
    if entry["vocab_size"] is None:
        del entry["vocab_size"]
    if entry["architecture"] is None:
        del entry["architecture"]
    if moe and active is not None:
        entry["params_active"] = {"value": active, "source": "config", "confidence": "derived",
                                  "note": "total minus the routed experts a token does not use"}
    # The entry's dtype: the checkpoint's precision where the whole model ships in it (fp8) or
    # its experts do (mxfp4, gpt-oss); otherwise the unquantized dtype.
    entry["dtype"] = weights_dtype if method in ("fp8", "mxfp4") and quantization else model_dtype
    tie = cfg.get("tie_word_embeddings")
    entry["tied_embeddings"] = bool(fam.tie_default if tie is None else tie)
    if params.output_gate(cfg, fam):
        entry["attention_output_gate"] = True
    ckpt: dict = {"weights_dtype": weights_dtype}
    if hf_id and (quantization or weights_index is not None):
        ckpt["hf_id"] = hf_id
    if quantization:
        ckpt["quantization"] = quantization
    if weights_index is not None:
        total, facts = checkpoint.read_index(Path(weights_index))
        ckpt["bytes"] = {"value": total, "source": "index", "confidence": "read",
                         "note": "model.safetensors.index.json metadata.total_size"}
        sources.append({"id": "index", "title": f"model.safetensors.index.json ({Path(weights_index).name})"})
        idx_notes = []
        if facts["towers"]:
            idx_notes.append(f"the index holds tower tensors ({', '.join(facts['towers'])}), counted in total_size: "
                             "add towers.<name> (parameters) by hand so the per-rank split and the "
                             "other precisions count them")
        if facts["mtp"]:
            idx_notes.append("the index holds MTP tensors, counted in total_size; vLLM loads them only with "
                             "speculative decoding")
        if facts["tensors"] and not facts["lm_head"] and not entry["tied_embeddings"]:
            idx_notes.append("no lm_head tensor in the index although tie_word_embeddings is false")
        if idx_notes:
            quant_note = " ".join(([quant_note] if quant_note else []) + [n[0].upper() + n[1:] + "." for n in idx_notes])
    if quantization or weights_index is not None:
        entry["checkpoints"] = [ckpt]
    if moe:
        entry["moe"] = {"experts": moe.experts, "experts_per_token": moe.per_token, "shared_experts": moe.shared}
    entry["layer_groups"] = groups
    entry["sources"] = sources
    # Every bare geometry number is the config's: say so explicitly (registry/README.md "Provenance"),
    # written just before `layers` like the hand-written entries.
    geometry = [k for k in ("layers", "hidden_size", "vocab_size", "attention_heads", "moe", "layer_groups", "checkpoints")
                if k in entry]
    keys = list(entry)
    at = keys.index("layers")
    entry = {k: entry[k] for k in keys[:at]} | {"field_sources": {"config": geometry}} | {k: entry[k] for k in keys[at:]}
    unused = [k for k in cfg.unused()]
    # A null, false, zero or empty value changes nothing (Nemotron-H's "sliding_window": null).
    bad = sorted(k for k in unused if families.MEMORY_KEY_RE.search(k.split(".")[-1])
                 and k.split(".")[-1] not in families.MEMORY_KEY_HARMLESS and cfg.fields[k.split(".")[-1]])
    if bad:
        raise _fail(where, "uninterpreted-field",
                    f"{who}: keys that may change per-layer memory were not interpreted by the {fam.name} rules: "
                    f"{', '.join(bad)}", bad)
    derived = dict(cfg.derived)
    derived.setdefault("params_total", "counted from config dims") if params_total is None else None
    if "params_active" in entry:
        derived.setdefault("params_active", "total minus unused routed experts")
    entry["derived_fields"] = sorted(derived)
    notes = cfg.notes + ([quant_note] if quant_note else [])
    if notes:
        entry["notes"] = " ".join(notes)
    _validate(entry, where)
    return Imported(entry=entry, header=f"Imported by kvreg import-hf from {hf_id or shown}.",
                    derived=derived, unused=unused, ignored_subtrees=cfg.ignored_subtrees, notes=notes)


def _validate(entry: dict, where: str) -> None:
    from pydantic import ValidationError

    from kvreg.schema.model import ModelEntry

    try:
        ModelEntry.model_validate(entry)
    except ValidationError as exc:
        raise KvregError([Problem(where, 0, 0, ".".join(map(str, e["loc"])), "invalid-import",
                                  f"imported entry fails the model schema: {e['msg']}",
                                  "the config gives a value the registry refuses (check it against the model"
                                  " card: e.g. num_key_value_heads must divide num_attention_heads); if the config"
                                  " is right, kvreg's importer misreads it: " + HAND_HINT)
                          for e in exc.errors(include_url=False)]) from None
