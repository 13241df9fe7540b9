"""``kvreg ingest-log``: a vLLM startup log → an observation entry (registry/observations/<id>.yaml).

The log states some figures and settings (kvreg/logparse.py); the rest — which
registry model, which hardware, sometimes the release — is left for the user
and listed in the entry's ``unknown`` and in the returned messages.  Nothing is
guessed silently: every value not printed in the log is either listed in
``unknown`` or explained in ``inferred``.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import yaml

from kvreg.logparse import LogError, ParsedLog, parse_log

KV_DTYPES = {"auto": None, "fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "bfloat16": "bf16", "bf16": "bf16",
             "float16": "bf16", "fp16": "bf16"}
QUANT_WEIGHTS = {"awq": "int4", "gptq": "int4", "auto_round": "int4", "mxfp4": "mxfp4", "fp8": "fp8",
                 "modelopt": "nvfp4", "modelopt_fp4": "nvfp4", "nvfp4": "nvfp4"}


def version_tuple(version: str) -> tuple[int, ...] | None:
    """(0, 9, 1) for '0.9.1.dev705+g01220ce89' or '~0.10.x'; None when there is no number."""
    m = re.search(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", version or "")
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def engine_for_version(engines: dict, version: str | None, generation: str | None) -> str | None:
    """The vLLM engine release id covering ``version`` (registry engines with ``accounting``).

    V0 logs map to the V0 range whatever their number.  Ranges are
    [release_first, next range's release_first); None when nothing matches.
    """
    ranges = sorted(((version_tuple(e.accounting.release_first), eid) for eid, e in engines.items()
                     if e.accounting is not None and e.engine == "vllm" and eid != "vllm-v0"))
    if generation == "V0" and "vllm-v0" in engines:
        return "vllm-v0"
    v = version_tuple(version or "")
    if v is None:
        return None
    found = None
    for first, eid in ranges:
        if v[:len(first)] >= first:
            found = eid
    return found


def match_model(models: dict, hf_or_id: str | None) -> tuple[str | None, str | None]:
    """Registry model id for an HF id or path, and a note when matched loosely (an -Instruct variant)."""
    if not hf_or_id:
        return None, None
    name = hf_or_id.rstrip("/").lower()
    by_hf = {(m.hf_id or "").lower(): mid for mid, m in models.items()}
    if name in by_hf:
        return by_hf[name], None
    base = re.sub(r"-(instruct|it|chat)$", "", name)
    if base in by_hf:
        return by_hf[base], f"{hf_or_id} matched to {by_hf[base]} (same architecture as the base model)"
    tail = name.split("/")[-1]
    if tail in models:
        return tail, None
    return None, None


def observation_from_log(text: str, registry, *, obs_id: str, source: dict, model: str | None = None,
                         hardware: str | None = None, engine: str | None = None) -> tuple[dict, list[str]]:
    """Build an observation entry (a dict ready for YAML) from a log's text.

    Args:
        text: the log text.
        registry: a loaded :class:`kvreg.registry.Registry` (models, engines).
        obs_id: the entry id (file stem).
        source: ``{url: ...}`` or ``{title: ...}`` where the log was published.
        model, hardware, engine: registry ids given by the user (override what the log says).

    Returns:
        (entry dict, messages for the user: what is unknown and what to do).

    Raises:
        LogError: not a vLLM startup log, or truncated.
    """
    p: ParsedLog = parse_log(text)
    models, engines = registry.of("model"), registry.of("engine")
    msgs: list[str] = []
    unknown: list[str] = []
    inferred: dict[str, str] = {}
    a = p.args
    settings: dict = {}
    for key in ("tp", "pp", "max_model_len", "gpu_memory_utilization", "max_num_batched_tokens", "max_num_seqs",
                "block_size", "enforce_eager"):
        if key in a:
            settings[key] = a[key]
    if "max_model_len" not in settings and p.max_concurrency_tokens:
        settings["max_model_len"] = p.max_concurrency_tokens
        inferred["settings.max_model_len"] = "the token count of the 'Maximum concurrency for N tokens' line"
    if "kv_cache_dtype" in a and str(a["kv_cache_dtype"]) in KV_DTYPES:
        if KV_DTYPES[str(a["kv_cache_dtype"])]:
            settings["kv_dtype"] = KV_DTYPES[str(a["kv_cache_dtype"])]
    if "quantization" in a and str(a["quantization"]) in QUANT_WEIGHTS:
        settings["weights_dtype"] = QUANT_WEIGHTS[str(a["quantization"])]
        settings["quantization"] = str(a["quantization"])
    if "tp" not in settings:
        unknown.append("settings.tp")
    if "max_model_len" not in settings:
        unknown.append("settings.max_model_len")
    model_id, note = (model, None) if model else match_model(models, p.model)
    if note:
        inferred["model"] = note
    if model_id is None and p.model:
        # the log names a model the registry does not have: keep its id so the entry can be
        # calibrated once the model is imported
        model_id = re.sub(r"[^a-z0-9.\-]+", "-", p.model.rstrip("/").split("/")[-1].lower()).strip("-.") or None
        if model_id:
            inferred["model"] = f"id derived from the logged model name {p.model}"
    if model_id is None:
        unknown.append("model")
        msgs.append("the log does not name a registry model: set model: <registry id>"
                    + (f" (the log says {p.model})" if p.model else ""))
    elif model_id not in models:
        msgs.append(f"model {model_id!r} is not in the registry: add registry/models/{model_id}.yaml "
                    f"(kvreg import-hf {p.model or model_id} can write it from the model's config.json) "
                    "before calibrating")
    eng = engine or engine_for_version(engines, p.version, p.engine_generation)
    if engine and engine not in engines:
        known = ", ".join(k for k, e in engines.items() if e.accounting is not None)
        raise LogError(f"unknown engine release {engine!r}; known ranges: {known}")
    if eng is None:
        unknown.append("engine")
        msgs.append("the log has no version banner: set engine: <release range id> (vllm-v0, vllm-0.8, "
                    "vllm-0.9-0.16, vllm-0.17-0.19, vllm-0.20, vllm-0.21, vllm-0.22-0.26, vllm-0.33)")
    elif not engine and p.version:
        inferred["engine"] = f"release range covering the logged version {p.version}"
    if hardware is None:
        unknown.append("hardware")
        msgs.append("the log does not name the GPU: set hardware: <hardware id> for the end-to-end check")
    logged = {k: getattr(p, k) for k in ("model_loading_gib", "available_kv_cache_memory_gib", "num_gpu_blocks",
                                         "kv_cache_tokens", "max_concurrency", "max_concurrency_tokens",
                                         "total_gpu_memory_gib", "started") if getattr(p, k) is not None}
    entry = {"id": obs_id, "engine": eng, "engine_version": p.version, "model": model_id, "model_hf_id": p.model,
             "hardware": hardware, "settings": settings, "logged": logged, "unknown": unknown,
             "inferred": inferred, "excerpt": text.strip() + "\n", "sources": [source], "confidence": "measured"}
    entry = {k: v for k, v in entry.items() if v not in (None, {}, [])}
    if unknown:
        msgs.insert(0, f"left for you to fill in {obs_id}.yaml: {', '.join(unknown)}")
    return entry, msgs


def write_observation(root: Path | str, entry: dict) -> Path:
    """Write ``entry`` to ROOT/registry/observations/<id>.yaml atomically (temp file, then rename)."""
    folder = Path(root) / "registry" / "observations"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{entry['id']}.yaml"

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, s):
        return dumper.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None)

    _Dumper.add_representer(str, _str)
    fd, tmp = tempfile.mkstemp(prefix=".obs-", suffix=".yaml", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            yaml.dump(entry, fh, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def ingest_file(root: Path | str, path: Path, *, obs_id: str | None = None, source: str | None = None,
                model: str | None = None, hardware: str | None = None, engine: str | None = None
                ) -> tuple[Path, list[str]]:
    """Parse the log at ``path`` and write its observation under ``root``.

    Args:
        root: the project directory (its registry is loaded for models and engines).
        path: the log file.
        obs_id: entry id; default the file stem, lower-cased, other characters as '-'.
        source: where the log was published (a URL or a title); default the file name.
        model, hardware, engine: registry ids to set (the log rarely says them).

    Returns:
        (path written, messages for the user).

    Raises:
        LogError: unreadable, not a vLLM startup log, truncated, or an unknown engine release.
        KvregError: the project's registry has problems.
    """
    from kvreg.registry import load_registry
    from kvreg.schema.observation import ObservationEntry

    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        raise LogError(f"cannot read {path}: {exc.strerror}")
    oid = obs_id or re.sub(r"[^a-z0-9.\-]+", "-", Path(path).stem.lower()).strip("-.") or "log"
    src = ({"url": source} if source and re.match(r"https?://", source)
           else {"title": source or f"startup log file {Path(path).name}"})
    registry = load_registry(root)
    entry, msgs = observation_from_log(text, registry, obs_id=oid, source=src, model=model, hardware=hardware,
                                       engine=engine)
    if hardware and hardware not in registry.of("hardware"):
        msgs.append(f"hardware {hardware!r} is not in the registry: add hardware/{hardware}.yaml")
    ObservationEntry.model_validate(entry)  # never write an entry the registry would reject
    return write_observation(root, entry), msgs


__all__ = ["LogError", "ingest_file", "observation_from_log", "write_observation", "engine_for_version", "match_model"]
