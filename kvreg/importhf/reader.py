"""Read a Hugging Face ``config.json`` into one flat view of the text model's fields.

Multimodal checkpoints (Gemma 3/3n/4, Llama 4, Qwen3.5) nest the language model
under ``text_config``; :class:`Config` merges it over the top level so the same
key names work for every checkpoint, keeps the outer ``model_type`` and
``architectures``, and records every key it was asked for.  What was read, what
fell back to a documented default (a *derived* field) and what was present but
never read are all reported (``kvreg import-hf --explain``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from kvreg.problems import KvregError, Problem

# Sub-configs of other modalities: the text model never reads them.
OTHER_MODALITIES = ("vision_config", "audio_config", "speech_config", "perception_config")

# torch dtype names in config.json -> kvreg precisions (kvreg/schema/common.py DTYPES).
TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
                "float8_e4m3fn": "fp8", "float8_e5m2": "fp8"}

_MISSING = object()


@dataclasses.dataclass
class Config:
    """The merged text-model view of one config.json.

    ``fields`` maps key → value (``text_config`` keys win over top-level keys);
    ``origin`` maps key → where it came from (``text_config.head_dim``).
    ``read`` collects keys the importer looked at; ``derived`` maps an entry
    field to the reason it was derived rather than read.
    """

    path: str
    fields: dict[str, Any]
    origin: dict[str, str]
    model_type: str | None
    text_model_type: str | None
    architectures: list[str]
    ignored_subtrees: list[str]
    read: set[str] = dataclasses.field(default_factory=set)
    derived: dict[str, str] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)

    def has(self, key: str) -> bool:
        """True when ``key`` is present and not null."""
        self.read.add(key)
        return self.fields.get(key) is not None

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` (``default`` when absent or null); marks the key as read."""
        self.read.add(key)
        v = self.fields.get(key)
        return default if v is None else v

    def first(self, *keys: str, default: Any = _MISSING) -> tuple[str | None, Any]:
        """``(key, value)`` of the first key present among aliases; ``(None, default)`` otherwise."""
        for k in keys:
            if self.has(k):
                return k, self.fields[k]
        return None, (None if default is _MISSING else default)

    def derive(self, field: str, why: str) -> None:
        """Record that entry ``field`` was derived (not read verbatim), and why."""
        self.derived.setdefault(field, why)

    def note(self, text: str) -> None:
        """Add a sentence to the entry's notes (once)."""
        if text not in self.notes:
            self.notes.append(text)

    def unused(self) -> list[str]:
        """Keys present in the config that the importer never read, with their origin path."""
        return sorted(self.origin[k] for k in self.fields if k not in self.read)

    @property
    def kinds(self) -> tuple[str, ...]:
        """model_type values to match family rules against: the text model's first."""
        return tuple(t for t in (self.text_model_type, self.model_type) if t)


def _problem(path: str, code: str, message: str, hint: str) -> KvregError:
    return KvregError([Problem(path, 0, 0, "", code, message, hint)])


def read_config(path: Path | str, display: str | None = None) -> Config:
    """Parse ``config.json`` at ``path``; merge ``text_config`` over the top level.

    Raises:
        KvregError: ``unreadable-config`` when the file is missing, not JSON or not an object.
    """
    path = Path(path)
    display = display or path.name
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _problem(display, "unreadable-config", f"cannot read {display} as JSON: {exc}",
                       "pass the model's config.json (a JSON object)") from None
    if not isinstance(raw, dict):
        raise _problem(display, "unreadable-config", f"{display} is not a JSON object",
                       "pass the model's config.json (a JSON object)")
    return config_from_dict(raw, display)


def config_from_dict(raw: dict, display: str = "config.json") -> Config:
    """The :class:`Config` view of an already parsed config dict (see :func:`read_config`)."""
    fields: dict[str, Any] = {}
    origin: dict[str, str] = {}
    ignored = [k for k in OTHER_MODALITIES if k in raw]
    for k, v in raw.items():
        if k in OTHER_MODALITIES or k == "text_config":
            continue
        fields[k], origin[k] = v, k
    text = raw.get("text_config") if isinstance(raw.get("text_config"), dict) else {}
    for k, v in text.items():
        if v is None and fields.get(k) is not None:
            continue  # a null in text_config does not hide a value given at the top level
        fields[k], origin[k] = v, f"text_config.{k}"
    archs = raw.get("architectures") or []
    cfg = Config(path=display, fields=fields, origin=origin, model_type=raw.get("model_type"),
                 text_model_type=text.get("model_type"), architectures=list(archs), ignored_subtrees=ignored)
    cfg.read.update({"architectures", "model_type"})
    return cfg


def dtype_name(value: str | None) -> str | None:
    """kvreg precision for a torch dtype string (``bfloat16`` → ``bf16``); None when unknown."""
    if value is None:
        return None
    return TORCH_DTYPES.get(str(value).removeprefix("torch."))
