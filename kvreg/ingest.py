"""``kvreg ingest-log``: a vLLM startup log → an observation entry (registry/observations/<id>.yaml).

The log states some figures and settings (kvreg/logparse.py); the rest — which
registry model, which hardware, sometimes the release — is left for the user
and listed in the entry's ``unknown`` and in the returned messages.  Nothing is
guessed silently: every value not printed in the log is either listed in
``unknown`` or explained in ``inferred``.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

import yaml
from pydantic import ValidationError

from kvreg import formats as f
from kvreg.logparse import LogError, ParsedLog, parse_log, parse_speculative

KV_DTYPES = {"auto": None, "fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "bfloat16": "bf16", "bf16": "bf16",
             "float16": "bf16", "fp16": "bf16", "half": "bf16"}
"""The log's ``kv_cache_dtype`` → kvreg KV dtype (``auto``: the model dtype; fp16 has bf16's 2 bytes, and
kvreg's engine layouts are keyed by byte size)."""
DTYPES = {"torch.bfloat16": "bf16", "bfloat16": "bf16", "bf16": "bf16", "torch.float16": "fp16", "float16": "fp16",
          "fp16": "fp16", "half": "fp16", "torch.float32": "fp32", "float32": "fp32", "float": "fp32"}
QUANT_WEIGHTS = {"awq": "int4", "awq_marlin": "int4", "gptq": "int4", "gptq_marlin": "int4", "auto_round": "int4",
                 "mxfp4": "mxfp4", "fp8": "fp8", "modelopt": "nvfp4", "modelopt_fp4": "nvfp4", "nvfp4": "nvfp4"}
"""Quantization method → weights dtype where the method fixes it; ``compressed-tensors`` does not (the
checkpoint's config says fp8, int8 or int4), so its weights dtype is left for the user."""
CURATED = ("model", "hardware", "gpu_name", "engine", "notes", "reproducible", "inferred", "name")
"""Fields ``--force`` keeps from the file it replaces when the new log does not determine them."""


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


def newest_release(engines: dict) -> tuple[int, ...] | None:
    """The newest vLLM release any registry range names (its ``release_first`` or ``release_last``), as a tuple
    ((0, 33) when the open range vllm-0.33 is the last); None when no range has accounting."""
    named = [version_tuple(str(x)) for e in engines.values() if e.accounting is not None and e.engine == "vllm"
             for x in (e.accounting.release_first, getattr(e.accounting, "release_last", None)) if x is not None]
    return max((t for t in named if t), default=None)


def checkpoint_of(models: dict, hf_id: str | None) -> tuple[str, str] | None:
    """(registry model id, weights dtype) of a published checkpoint a model entry lists by HF id
    (``checkpoints: [{hf_id, weights_dtype, ...}]``; HF ids compare case-insensitively), else None."""
    if not hf_id:
        return None
    name = hf_id.rstrip("/").lower()
    for mid, m in models.items():
        cks = getattr(m, "checkpoints", None)
        for c in (cks if isinstance(cks, list) else []):
            if (getattr(c, "hf_id", None) or "").lower() == name:
                return mid, c.weights_dtype
    return None


def models_naming(models: dict, hf_id: str | None) -> list[str]:
    """Ids of the registry models whose own ``hf_id`` or a listed checkpoint's ``hf_id`` is ``hf_id``
    (case-insensitive, a trailing '/' dropped), sorted; the same owners kvreg/checks/205_observation_model_mismatch.sql
    compares an observation's ``model:`` with."""
    if not hf_id:
        return []
    name = hf_id.rstrip("/").lower()
    cks = lambda m: getattr(m, "checkpoints", None) if isinstance(getattr(m, "checkpoints", None), list) else []
    return sorted(mid for mid, m in models.items()
                  if (m.hf_id or "").lower() == name or any((c.hf_id or "").lower() == name for c in cks(m)))


def match_model(models: dict, hf_or_id: str | None) -> tuple[str | None, str | None]:
    """Registry model id for an HF id or path, and a note when matched loosely (an -Instruct variant)
    or through a checkpoint the model entry lists."""
    if not hf_or_id:
        return None, None
    name = hf_or_id.rstrip("/").lower()
    by_hf = {(m.hf_id or "").lower(): mid for mid, m in models.items()}
    if name in by_hf:
        return by_hf[name], None
    ck = checkpoint_of(models, hf_or_id)
    if ck:
        return ck[0], f"{hf_or_id} is a checkpoint of {ck[0]} (its entry lists it)"
    base = re.sub(r"-(instruct|it|chat)$", "", name)
    if base in by_hf:
        return by_hf[base], f"{hf_or_id} matched to {by_hf[base]} (same architecture as the base model)"
    tail = name.split("/")[-1]
    if tail in models:
        return tail, None
    return None, None


def infer_release(engines: dict, p: ParsedLog) -> tuple[str | None, str | None, str]:
    """The release range a log comes from, how sure that is, and why (issue 11 item 6).

    Returns:
        (engine id or None, confidence, reason).  Confidence ``stated``: the version banner names
        the release; ``derived``: the banner's version is newer than any release a registry range names
        (:func:`newest_release`), so the last range is assumed; ``format``: a V0-format log without version (the V0 range); ``token-rule``: a
        V1 log without version where only one range's printed token rule fits the figures (a
        "GPU KV cache size" that is not a multiple of 16 can only come from ``concurrency_x_len``,
        engine_accounting.md §4); None when several ranges fit (the reason lists them).
    """
    if p.version:
        eid = engine_for_version(engines, p.version, p.engine_generation)
        line = p.hits["version"].line if "version" in p.hits else None
        newest = newest_release(engines)
        v = version_tuple(p.version)
        if eid and eid != "vllm-v0" and newest and v and v[:len(newest)] > newest:
            # past every release the registry names: the last range is assumed to hold, not stated to
            return eid, "derived", (f"version {p.version} printed at line {line} is newer than any registered "
                                    f"release (newest {'.'.join(map(str, newest))}): assumed to behave as {eid}")
        if eid:
            return eid, "stated", f"version {p.version} printed at line {line}"
        return None, None, f"version {p.version} (line {line}) is in no registry release range"
    if p.engine_generation == "V0" and "vllm-v0" in engines:
        return "vllm-v0", "format", f"V0 log format (line {p.generation_line}), no version banner"
    if p.engine_generation != "V1":
        return None, None, "no version banner and no V0/V1 format line"
    rules = {eid: e.accounting.logged_tokens_rule.value for eid, e in engines.items()
             if e.accounting is not None and e.engine == "vllm" and eid != "vllm-v0"}
    if p.kv_cache_tokens is not None and p.kv_cache_tokens % 16:
        fits = sorted(eid for eid, r in rules.items() if r == "concurrency_x_len")
        why = f"'GPU KV cache size' {p.kv_cache_tokens:,} is not a multiple of 16: int(concurrency × len) rule"
    elif p.kv_cache_tokens is not None:
        fits = sorted(eid for eid, r in rules.items() if r != "concurrency_x_len")
        why = f"'GPU KV cache size' {p.kv_cache_tokens:,} is a whole number of 16-token blocks"
    else:
        fits, why = sorted(rules), "no token figure"
    if len(fits) == 1:
        return fits[0], "token-rule", f"V1 log without version; {why}"
    return None, None, f"V1 log without version; {why}; fits {', '.join(fits) or 'no release'}"


def hardware_with_memory(hardware: dict, total_gib: float | None) -> list[tuple[str, int]]:
    """(id, memory_usable bytes) of the registry hardware whose usable memory is the log's total memory.

    vLLM prints the device's total memory rounded to two decimals of GiB (``round(b / GiB_bytes, 2)``,
    vllm/utils/mem_utils.py 0.19.0:23-24 and 157; ``:.2f`` in older releases), so an entry matches when its
    bytes round to the same figure: within half a hundredth of a GiB.  Sorted by id; [] when
    ``total_gib`` is None or nothing matches.
    """
    if total_gib is None:
        return []
    return sorted((hid, h.memory_usable.value) for hid, h in hardware.items()
                  if abs(h.memory_usable.value / 2**30 - total_gib) <= 0.005 + 1e-9)


def observation_from_log(text: str | Iterable[str], registry, *, obs_id: str, source: dict, model: str | None = None,
                         hardware: str | None = None, engine: str | None = None) -> tuple[dict, list[str]]:
    """Build an observation entry (a dict ready for YAML) from a log's text.

    Args:
        text: the log text, or its lines one at a time (:func:`read_log_lines`).
        registry: a loaded :class:`kvreg.registry.Registry` (models, engines).
        obs_id: the entry id (file stem).
        source: ``{url: ...}`` or ``{title: ...}`` where the log was published.
        model, hardware, engine: registry ids given by the user (override what the log says).

    Returns:
        (entry dict, messages for the user: what is unknown and what to do).  The entry's
        ``excerpt`` holds only the lines read, with their line numbers.

    Raises:
        LogError: not a vLLM startup log, truncated, contradicting itself, or an unknown engine release.
        IngestUsageError: ``model`` is not the registry model whose own or listed checkpoint the log loaded.
    """
    p: ParsedLog = parse_log(text)
    models, engines = registry.of("model"), registry.of("engine")
    msgs: list[str] = list(p.notes)
    unknown: list[str] = []
    inferred: dict[str, str] = {}
    a = p.args
    settings: dict = {}
    for key in ("tp", "pp", "dp", "max_model_len", "gpu_memory_utilization", "max_num_batched_tokens", "max_num_seqs",
                "block_size", "enforce_eager"):
        if key in a and a[key] is not None:
            want = bool if key == "enforce_eager" else (float if key == "gpu_memory_utilization" else int)
            v = a[key]
            ok = (isinstance(v, bool) if want is bool else
                  isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                  and (want is float or float(v).is_integer()))
            if not ok:
                line = p.hits[f"settings.{key}"].line
                raise LogError(f"line {line}: {key} is {str(v)[:60]!r}, not {'an integer' if want is int else 'a ' + want.__name__}")
            settings[key] = want(a[key])
    if "max_model_len" not in settings and p.max_concurrency_tokens:
        settings["max_model_len"] = p.max_concurrency_tokens
        inferred["settings.max_model_len"] = "the token count of the 'Maximum concurrency for N tokens' line"
    if "dtype" in a and str(a["dtype"]) in DTYPES:
        settings["dtype"] = DTYPES[str(a["dtype"])]
    if "kv_cache_dtype" in a and str(a["kv_cache_dtype"]) in KV_DTYPES:
        if KV_DTYPES[str(a["kv_cache_dtype"])]:
            settings["kv_dtype"] = KV_DTYPES[str(a["kv_cache_dtype"])]
    elif "kv_cache_dtype" in a:
        unknown.append("settings.kv_dtype")
        msgs.append(f"kv_cache_dtype {a['kv_cache_dtype']!r} is not one kvreg knows: set settings.kv_dtype")
    if "quantization" in a and a["quantization"] not in (None, True):
        settings["quantization"] = str(a["quantization"])
        if str(a["quantization"]) in QUANT_WEIGHTS:
            settings["weights_dtype"] = QUANT_WEIGHTS[str(a["quantization"])]
        else:
            unknown.append("settings.weights_dtype")
            msgs.append(f"quantization {a['quantization']} does not fix the weights dtype: set settings.weights_dtype "
                        "from the checkpoint's quantization config")
    spec = parse_speculative(a.get("speculative_config"))
    if "num_speculative_tokens" in spec:
        settings["num_speculative_tokens"] = spec.pop("num_speculative_tokens")
    if spec or "num_speculative_tokens" in settings:
        if spec:
            settings["speculative"] = spec
        if "settings.draft_model" not in inferred:
            msgs.append("speculative decoding is on: set settings.draft_model to the draft's registry id if its "
                        "layers share the KV pool (EAGLE, MTP)")
    if "tp" not in settings:
        unknown.append("settings.tp")
    if "max_model_len" not in settings:
        unknown.append("settings.max_model_len")
    owners = models_naming(models, p.model) if model else []
    if owners and model not in owners:
        # the log loaded another registry model's checkpoint: calibration would compare a start of that
        # model with the prediction for --model (the validate check is observation-model-mismatch)
        raise IngestUsageError(f"--model {model!r} contradicts the log: it loaded {p.model}, the checkpoint of "
                               f"{', '.join(owners)}; drop --model (the log names it) or pass --model {owners[0]}")
    model_id, note = (model, None) if model else match_model(models, p.model)
    if note:
        inferred["model"] = note
    ck = checkpoint_of(models, p.model)
    if ck and ck[0] == model_id and "weights_dtype" not in settings and "quantization" in settings:
        settings["weights_dtype"] = ck[1]
        inferred["settings.weights_dtype"] = f"the registry's {model_id} checkpoint {p.model} is {ck[1]}"
        unknown.remove("settings.weights_dtype")
        msgs[:] = [m for m in msgs if "does not fix the weights dtype" not in m]
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
        # import-hf reads a config.json, not a hub id: the hint names the file to fetch and the id it gets
        hf = f" --hf-id {p.model}" if p.model and "/" in p.model else ""
        msgs.append(f"model {model_id!r} is not in the registry: add registry/models/{model_id}.yaml "
                    f"before calibrating (kvreg import-hf CONFIG.json{hf} --id {model_id} writes it from the "
                    "model's config.json, downloaded from its Hugging Face page)")
    if engine and engine not in engines:
        known = ", ".join(k for k, e in engines.items() if e.accounting is not None)
        # "vllm-0.19" names a version: the release range covering it is what was meant
        m = re.fullmatch(r"vllm-v?(\d+(?:\.\d+)*)", engine)
        covering = engine_for_version(engines, m.group(1), None) if m else None
        last = engines[covering].accounting.release_last if covering else None
        # only a closed range certainly covers it (a version past every release is not "meant")
        meant = (f" (vLLM {m.group(1)} is in {covering})"
                 if last is not None and version_tuple(m.group(1))[:len(version_tuple(str(last)))] <= version_tuple(str(last))
                 else "")
        raise LogError(f"unknown engine release {engine!r}; known ranges: {known}{meant}")
    confidence = None
    if engine:
        eng, confidence = engine, "given"
    else:
        eng, confidence, why = infer_release(engines, p)
        if eng:
            inferred["engine"] = f"{why} (confidence: {confidence})"
            msgs.append(f"release {eng}: {why} (confidence: {confidence})")
        else:
            unknown.append("engine")
            msgs.append(f"release not determined ({why}): set engine: <release range id> (vllm-v0, vllm-0.8, "
                        "vllm-0.9-0.16, vllm-0.17-0.19, vllm-0.20, vllm-0.21, vllm-0.22-0.26, vllm-0.33)")
    if hardware is None:
        unknown.append("hardware")
        near = hardware_with_memory(registry.of("hardware"), p.total_gpu_memory_gib)
        meant = "; did you mean " + " or ".join(
            f"{h} (memory_usable {f.mib(b)} = {f.gib(b)})" for h, b in near) + "?" if near else ""
        msgs.append("the log does not name the GPU: set hardware: <hardware id> for the end-to-end check"
                    + (f" (total memory {p.total_gpu_memory_gib} GiB{meant})" if p.total_gpu_memory_gib else ""))
    logged = {k: getattr(p, k) for k in LOGGED_FIELDS if getattr(p, k) is not None}
    entry = {"id": obs_id, "engine": eng, "engine_version": p.version, "model": model_id, "model_hf_id": p.model,
             "hardware": hardware, "settings": settings, "logged": logged, "unknown": unknown,
             "inferred": inferred, "release_confidence": confidence, "excerpt": p.excerpt(),
             "sources": [{"id": "log", **source}],
             "confidence": "measured"}
    entry = {k: v for k, v in entry.items() if v not in (None, {}, [])}
    # Every setting and figure is the log's: the log source covers them (registry/README.md "Provenance").
    entry["field_sources"] = {"log": [k for k in ("settings", "logged") if k in entry]}
    if not entry["field_sources"]["log"]:
        del entry["field_sources"]
    if unknown:
        msgs.insert(0, f"left for you to fill in {obs_id}.yaml: {', '.join(unknown)}")
    lines = {f"logged.{k}": p.hits[k].line for k in logged if k in p.hits}
    arg_of = {"kv_dtype": "kv_cache_dtype", "weights_dtype": "quantization", "speculative": "speculative_config",
              "num_speculative_tokens": "speculative_config"}
    lines.update({f"settings.{k}": p.hits[f"settings.{arg_of.get(k, k)}"].line for k in settings
                  if f"settings.{arg_of.get(k, k)}" in p.hits})
    check_entry(entry, lines)
    return entry, msgs


LOGGED_FIELDS = ("model_loading_gib", "init_free_memory_gib", "init_cuda_memory_gib", "init_non_torch_memory_gib",
                 "requested_memory_gib", "weights_memory_gib", "activation_peak_gib", "non_torch_forward_gib",
                 "non_kv_memory_gib", "cuda_graph_estimated_gib", "available_kv_cache_memory_gib", "num_gpu_blocks",
                 "kv_cache_tokens", "max_concurrency", "max_concurrency_tokens", "total_gpu_memory_gib",
                 "cuda_graph_memory_gib", "started")
"""ParsedLog figures stored under ``logged:`` (names and units as in kvreg/schema/observation.py)."""


class IngestUsageError(ValueError):
    """A bad command-line value (an id that is not an id, an id that exists without --force)."""


HEADER = "# yaml-language-server: $schema=../../kvreg/schemas/observation.schema.json\n"


def write_observation(root: Path | str, entry: dict) -> Path:
    """Write ``entry`` to ROOT/registry/observations/<id>.yaml atomically (temp file, then rename).

    The file gets the schema header line and the permissions of a file the user creates
    (0666 less the umask), not mkstemp's 0600.
    """
    folder = Path(root) / "registry" / "observations"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{entry['id']}.yaml"

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, s):
        return dumper.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None)

    _Dumper.add_representer(str, _str)
    umask = os.umask(0)
    os.umask(umask)
    fd, tmp = tempfile.mkstemp(prefix=".obs-", suffix=".yaml", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(HEADER)
            yaml.dump(entry, fh, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def keep_curated(new: dict, old: dict) -> tuple[dict, list[str]]:
    """``new`` with the fields of ``old`` that a person filled in and the new log does not state.

    Kept: model, hardware, gpu name, engine (when the new log does not determine one), notes,
    reproducible, explanations under ``inferred``, settings the log does not print, and sources
    (old first, then new ones).  Figures under ``logged`` always come from the new log.

    Returns:
        (merged entry, the keys kept, for the user).
    """
    out, kept = dict(new), []
    unknown = set(new.get("unknown", []))
    for k in CURATED:
        if k not in old:
            continue
        if k == "inferred":
            merged = {**old[k], **new.get(k, {})}
            for kk in ("model", "hardware", "engine"):  # a kept value keeps its own explanation
                if kk in kept:
                    merged.pop(kk, None)
                    if kk in old[k]:
                        merged[kk] = old[k][kk]
            if merged != new.get(k, {}):
                out[k] = merged
                kept.append("inferred")
        elif (k not in new or k in unknown or (k == "engine" and new.get("release_confidence") != "stated")
              or (k == "model" and "id derived from" in (new.get("inferred") or {}).get("model", ""))):
            # a person's engine (model) choice beats a guess from the log format (a name not in the
            # registry); a printed version (a registry match) beats both
            out[k] = old[k]
            unknown.discard(k)
            kept.append(k)
            if k == "engine":
                out["release_confidence"] = old.get("release_confidence", "given")
    settings = dict(new.get("settings", {}))
    for k, v in (old.get("settings") or {}).items():
        if k not in settings:
            settings[k] = v
            unknown.discard(f"settings.{k}")
            kept.append(f"settings.{k}")
    if settings:
        out["settings"] = settings
    # sources merge by id: the curated file's "log" source (its title, URL) stays; the new file-name source of the
    # same id is not added beside it (a second id 'log' is refused by the schema)
    srcs = list(old.get("sources") or [])
    ids = {s.get("id") for s in srcs if isinstance(s, dict)} - {None}
    srcs += [s for s in new.get("sources", []) if s not in srcs and (s.get("id") is None or s.get("id") not in ids)]
    out["sources"] = srcs
    out["unknown"] = [u for u in new.get("unknown", []) if u in unknown]
    if not out["unknown"]:
        out.pop("unknown")
    return out, kept


def ingest_file(root: Path | str, path: Path, *, obs_id: str | None = None, source: str | None = None,
                model: str | None = None, hardware: str | None = None, engine: str | None = None,
                force: bool = False) -> tuple[Path, list[str]]:
    """Parse the log at ``path`` and write its observation under ``root``.

    Args:
        root: the project directory (its registry is loaded for models and engines).
        path: the log file.
        obs_id: entry id (lower-case letters, digits, '.', '-'); default the file stem, lower-cased,
            other characters as '-'.
        source: where the log was published (a URL or a title); default the file name.
        model, hardware, engine: registry ids to set (the log rarely says them).
        force: replace an existing observation of that id, keeping its curated fields
            (:func:`keep_curated`); without it an existing id is refused.  Also keeps a log whose own figures
            disagree (check 208), recording the disagreement in the entry's ``figures_disagree``.

    Returns:
        (path written, messages for the user).

    Raises:
        IngestUsageError: ``path`` is not a regular file (a pipe, device, directory: :func:`check_log_file`),
            ``obs_id`` is not a valid id, the observation exists and ``force`` is off,
            ``model`` / ``hardware`` names no registry entry (with the ids meant), or ``model`` is not the
            registry model whose checkpoint the log loaded.
        LogError: unreadable, over 64 MiB (:data:`MAX_LOG_BYTES`), not a vLLM startup log, truncated, contradicting itself
            (two values of one figure, or figures the release's rules cannot both print: check 208, unless ``force``),
            or an unknown engine release.
        KvregError: the project's registry has problems.
    """
    from kvreg.registry import load_registry
    from kvreg.schema.common import ID_RE

    if obs_id is not None and not ID_RE.match(obs_id):
        raise IngestUsageError(f"--id {obs_id!r} is not a valid id: lower-case letters, digits, '.' and '-', "
                               f"starting with a letter or digit (e.g. {re.sub(r'[^a-z0-9.-]+', '-', obs_id.lower()).strip('-.') or 'my-log'!r})")
    oid = obs_id or re.sub(r"[^a-z0-9.\-]+", "-", Path(path).stem.lower()).strip("-.") or "log"
    target = Path(root) / "registry" / "observations" / f"{oid}.yaml"
    if target.exists() and not force:
        raise IngestUsageError(f"registry/observations/{oid}.yaml exists: choose another --id, or pass --force to "
                               "replace its figures (curated fields it cannot read from the log are kept)")
    check_log_file(path)
    src = ({"url": source} if source and re.match(r"https?://", source)
           else {"title": source or f"startup log file {Path(path).name}"})
    registry = load_registry(root)
    # An id the user typed must name an entry: an observation naming a missing one would make every later
    # command fail validation (unknown-observation-reference), so refuse it before anything is written.
    for flag, kind, value in (("--model", "model", model), ("--hardware", "hardware", hardware)):
        if value and value not in registry.of(kind):
            from kvreg.suggest import near_ids

            near = near_ids(value, list(registry.of(kind)))
            add = ("registry/models/" if kind == "model" else "hardware/") + f"{value}.yaml"
            raise IngestUsageError(f"{flag} {value!r} is not in the registry"
                                   + (f"; did you mean {', '.join(near)}?" if near else f" (add {add} first)"))
    entry, msgs = observation_from_log(read_log_lines(path), registry, obs_id=oid, source=src, model=model, hardware=hardware,
                                       engine=engine)
    if target.exists():
        try:
            old = yaml.safe_load(target.read_text()) or {}
        except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
            raise LogError(f"{target.name}: cannot read the file --force would replace ({exc.__class__.__name__}); "
                           "fix or remove it first")
        if isinstance(old, dict):
            entry, kept = keep_curated(entry, old)
            if kept:
                # what the old file settles is no longer left to fill
                msgs = [m for m in msgs if not m.startswith("left for you to fill")
                        and not ("hardware" in kept and m.startswith("the log does not name the GPU"))
                        and not ("model" in kept and m.startswith("the log does not name a registry model"))]
                if entry.get("unknown"):
                    msgs.insert(0, f"left for you to fill in {oid}.yaml: {', '.join(entry['unknown'])}")
                msgs.append(f"kept from the replaced {oid}.yaml: {', '.join(kept)}")
    check_entry(entry)  # never write an entry the registry would reject
    previous = target.read_bytes() if target.exists() else None
    written = write_observation(root, entry)
    from kvreg.ingest_registry import check_in_registry

    kept = check_in_registry(root, written, previous, force)
    if kept:  # --force over figures that disagree: the entry says so, for a person to replace with the reason
        entry["figures_disagree"] = f"kept by ingest-log --force although {'; '.join(kept)}"
        write_observation(root, entry)
        check_in_registry(root, written, previous, False)
        msgs.append(f"written although its figures disagree (--force), recorded in figures_disagree: {'; '.join(kept)}")
    return written, msgs


MAX_LOG_BYTES = 64 * 2 ** 20
"""Largest log ingest-log reads: 64 MiB (67,108,864 bytes).  A startup log is a few MiB at most (the 50 MB one in
tests/test_ingest_safety.py is mostly filler); the bound keeps /dev/zero or a runaway file from filling memory."""


def check_log_file(path: Path | str) -> None:
    """Refuse, before anything is opened, a log path that is not a regular file of at most :data:`MAX_LOG_BYTES`.

    A named pipe would block the open (or the read) forever and a device (/dev/zero) never ends, so only a
    regular file (a symlink to one included) is read.

    Raises:
        IngestUsageError: not a regular file (a directory, pipe, socket or device), naming what it is.
        LogError: it cannot be examined, or it is larger than 64 MiB.
    """
    from kvreg.userfiles import FileTooLarge, NotRegularFile, check_regular_file

    try:
        check_regular_file(path, MAX_LOG_BYTES)
    except OSError as exc:
        raise LogError(f"cannot read {path}: {exc.strerror}")
    except NotRegularFile as exc:
        raise IngestUsageError(f"{path} is {exc.kind}: ingest-log reads a saved log file (e.g. vllm serve ... 2>&1 | "
                               "tee startup.log, then ingest-log startup.log)")
    except FileTooLarge as exc:
        raise LogError(too_big(path, exc.size))


def too_big(path: Path | str, size: int | None) -> str:
    """The message for a log over :data:`MAX_LOG_BYTES` (``size`` in bytes, None when only known to be over)."""
    got = f"{size:,} bytes" if size is not None else "over 64 MiB"
    return (f"{path}: {got}, more than the 64 MiB (67,108,864 bytes) ingest-log reads; a startup log is a few MiB: "
            "cut it to the one startup (up to the 'GPU KV cache size' and 'Maximum concurrency' lines)")


def read_log_lines(path: Path | str):
    """The lines of the log at ``path`` one at a time (bytes split at b"\n" only, decoded as UTF-8 with bad bytes
    replaced), stopping with an error past :data:`MAX_LOG_BYTES` (a file that grew after :func:`check_log_file`).

    Raises:
        LogError: unreadable, or more than 64 MiB read.
    """
    read = 0
    try:
        with open(path, "rb") as fh:
            # a line longer than the bound is cut at it, so not even one line is held beyond 64 MiB
            while line := fh.readline(MAX_LOG_BYTES - read + 1):
                read += len(line)
                if read > MAX_LOG_BYTES:
                    raise LogError(too_big(path, None))
                yield line.decode("utf-8", errors="replace")
    except OSError as exc:
        raise LogError(f"cannot read {path}: {exc.strerror}")


def check_entry(entry: dict, lines: dict[str, int] | None = None) -> None:
    """Validate an entry built from a log against the observation schema.

    Args:
        entry: the entry dict.
        lines: ``"settings.tp"`` / ``"logged.kv_cache_tokens"`` → the log line it was read from.

    Raises:
        LogError: a value read from the log is out of range or of the wrong type (``settings.tp = 0``),
            or implausibly large, naming the key, the value and the log line it came from.
    """
    lines = lines or {}

    def at(where: str) -> str:
        return f" (line {lines[where]})" if where in lines else p_line(entry, where)

    from kvreg.schema.observation import ObservationEntry

    for part in ("settings", "logged"):
        for k, v in (entry.get(part) or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and (
                    not math.isfinite(v) or abs(v) > MAX_FIGURE):
                raise LogError(f"{part}.{k} = {str(v)[:40]} from the log{at(f'{part}.{k}')} is not a plausible "
                               "figure (non-finite or beyond 2^53): a corrupted line?")
    try:
        ObservationEntry.model_validate(entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        if isinstance(err.get("input"), dict):
            # a check across figures (Logged._kv_memory_is_a_startup): its message names the figure first
            first = f"{where}.{err['msg'].removeprefix('Value error, ').split(' ')[0]}"
            raise LogError(f"{first} from the log{at(first)} is not valid: {err['msg'].removeprefix('Value error, ')}")
        line = at(where)
        raise LogError(f"{where} = {str(err.get('input'))[:80]!r} from the log{line} is not valid: {err['msg']}")


MAX_FIGURE = 2 ** 53
"""Largest figure or setting accepted from a log (exact in a float; DuckDB and pandas hold it)."""


def p_line(entry: dict, where: str) -> str:
    """' (line N)' where the excerpt shows the line a setting or figure was read from, else ''."""
    key = where.split(".")[-1]
    for row in (entry.get("excerpt") or "").splitlines():
        n, _, text = row.partition(": ")
        if key in text or f"{key}=" in text:
            return f" (line {n})"
    return ""


__all__ = ["IngestUsageError", "LogError", "ingest_file", "infer_release", "keep_curated", "observation_from_log",
           "write_observation", "engine_for_version", "match_model"]
