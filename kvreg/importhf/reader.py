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
import re
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


def _problem(path: str, code: str, message: str, hint: str, line: int = 1, key: str = "") -> KvregError:
    return KvregError([Problem(path, line, 1, key, code, message, hint)])


# Keys the families read as whole counts or sizes (num_attention_heads, head_dim, vocab_size,
# sliding_window, kv_lora_rank, n_routed_experts ...): a string, a boolean or a fraction there is
# a broken config, reported at its line instead of failing inside arithmetic.  Named, not any
# "*_dim": real configs hold flags such as LFM2's block_auto_adjust_ff_dim: true.
COUNT_KEY = re.compile(r"^(num_\w*(heads|layers|experts|experts_per_tok|_groups)|n_(routed|shared)_experts|n_group|"
                       r"hidden_size|\w*intermediate_size|head_dim|\w+_head_dim|vocab_size|max_position_embeddings|"
                       r"\w*lora_rank|sliding_window|attention_chunk_size|first_k_dense_replace|topk_group|"
                       r"model_max_length|n_embd|n_layer|n_head|n_head_kv|n_positions|n_inner)$")
# Of those, the ones where 0 makes no model (division by heads, a layer count).
POSITIVE_KEY = re.compile(r"^(num_attention_heads|num_key_value_heads|num_hidden_layers|hidden_size|head_dim|"
                          r"vocab_size|max_position_embeddings|model_max_length|n_embd|n_layer|n_head|n_head_kv|"
                          r"n_positions)$")
MAX_COUNT = 2**40
"""Largest count a config may hold (a trillion; vocab, layers and heads are far below)."""
MAX_PER_KEY = {"num_hidden_layers": 10_000, "num_layers": 10_000, "n_layer": 10_000,
               "num_attention_heads": 100_000, "num_key_value_heads": 100_000, "n_head": 100_000, "n_head_kv": 100_000}
"""Tighter bounds where the importer loops per layer or head (the largest shipped model has 126
layers and 128 heads): a typo of 10^7 layers is refused instead of taking minutes."""


def key_lines(text: str) -> dict[str, int]:
    """Line (1-based) of each key of a config.json, ``text_config.k`` for keys after ``"text_config"``.

    A plain scan for ``"key":`` (first occurrence; keys of ``text_config`` are those after its
    line): enough to point a problem at the line to fix.
    """
    out: dict[str, int] = {}
    text_from = None
    for n, line in enumerate(text.splitlines(), 1):
        for key in re.findall(r'"([^"\\]+)"\s*:', line):
            if key == "text_config" and text_from is None:
                text_from = n
            name = f"text_config.{key}" if text_from is not None and n > text_from else key
            out.setdefault(name, n)
            out.setdefault(key, n)
    return out


def locate(exc: KvregError, path: Path | str) -> KvregError:
    """``exc`` with each problem of line 0 moved to the line of its (first) key in ``path``."""
    from kvreg.userfiles import read_bounded

    try:  # the same guard as read_config: a pipe or /dev/zero is never read (ValueError covers its refusals)
        lines = key_lines(read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8-sig"))
    except (OSError, ValueError):
        lines = {}
    fixed = []
    for p in exc.problems:
        if p.line == 0:
            keys = [k for k in p.key.split(",") if k]
            line = next((lines[k] for k in keys if k in lines),
                        next((lines[k.rsplit(".", 1)[-1]] for k in keys if k.rsplit(".", 1)[-1] in lines), 1))
            p = dataclasses.replace(p, line=line, col=1)
        fixed.append(p)
    return KvregError(fixed)


BOOL_KEYS = ("tie_word_embeddings", "use_sliding_window", "enable_moe_block")
"""Flags the importer reads as booleans: a string there ("false") is truthy in Python, so it would read as on
(trial11: "tie_word_embeddings": "false" gave tied embeddings and 525 M parameters too few)."""
DTYPE_KEYS = ("torch_dtype", "dtype")
"""The model dtype keys (transformers writes ``torch_dtype``, ``dtype`` from 4.56)."""


def _check_counts(raw: dict, display: str, text: str) -> None:
    """Raise ``bad-config-value`` (at the key's line) for a count key holding a non-count, a flag of
    :data:`BOOL_KEYS` holding a non-boolean, or a dtype key naming no dtype of :data:`TORCH_DTYPES`."""
    lines = key_lines(text)
    for prefix, obj in (("", raw), ("text_config.", raw.get("text_config"))):
        if not isinstance(obj, dict):
            continue
        for k, v in obj.items():
            at = lines.get(prefix + k, lines.get(k, 1))
            if k in BOOL_KEYS and v is not None and not isinstance(v, bool):
                raise _problem(display, "bad-config-value", f"{prefix}{k} is {v!r}; it must be a boolean (true or "
                               "false, unquoted)", "fix the value in config.json (transformers writes a JSON boolean "
                               "here; a string is read as true)", at, prefix + k)
            if k in DTYPE_KEYS and v is not None and dtype_name(v) is None:
                raise _problem(display, "bad-config-value", f"{prefix}{k} is {str(v)[:60]!r}, not a torch dtype kvreg "
                               f"knows ({', '.join(TORCH_DTYPES)})", "fix the value in config.json to the dtype the "
                               "checkpoint's weights are stored in (the model card says it)", at, prefix + k)
            if v is None or not COUNT_KEY.match(k) or isinstance(v, (list, dict)) or (k == "sliding_window" and v is False):
                continue  # null (and sliding_window: false) is "absent"; per-layer lists are the families' to read
            ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_PER_KEY.get(k, MAX_COUNT)
            if ok and POSITIVE_KEY.match(k) and v == 0:
                ok = False
            if not ok:
                need = "a positive whole number" if POSITIVE_KEY.match(k) else "a whole number ≥ 0"
                need += f" of at most {MAX_PER_KEY.get(k, MAX_COUNT):,}"
                raise _problem(display, "bad-config-value", f"{prefix}{k} is {v!r}; it must be {need}",
                               "fix the value in config.json (the checkpoint's own file has a JSON number here)",
                               lines.get(prefix + k, lines.get(k, 1)), prefix + k)


def read_config(path: Path | str, display: str | None = None) -> Config:
    """Parse ``config.json`` at ``path``; merge ``text_config`` over the top level.

    Raises:
        KvregError: ``unreadable-config`` when the file is missing, not JSON or not an object;
            ``bad-config-value`` (at the key's line) when a count key holds a string, a boolean,
            a fraction, a negative or absurd number, or 0 where a model needs at least 1.
    """
    path = Path(path)
    display = display or path.name
    from kvreg.userfiles import FileTooLarge, NotRegularFile, read_bounded

    try:
        # utf-8-sig: a config saved with a byte-order mark (Windows editors) is the same JSON
        text = read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8-sig")
        raw = json.loads(text)
    except NotRegularFile as exc:
        raise _problem(display, "unreadable-config", f"{display} is {exc.kind}, not a file",
                       "pass the model's config.json saved as a file (a pipe or device is never read)") from None
    except FileTooLarge:
        raise _problem(display, "unreadable-config", f"{display} is larger than {MAX_CONFIG_BYTES:,} bytes",
                       "pass the model's config.json (a few KB), not the weights or the index") from None
    except json.JSONDecodeError as exc:
        raise _problem(display, "unreadable-config", f"cannot read {display} as JSON: {exc.msg}",
                       "pass the model's config.json (a JSON object)", exc.lineno) from None
    except (OSError, ValueError, RecursionError) as exc:
        raise _problem(display, "unreadable-config", f"cannot read {display} as JSON: {exc}",
                       "pass the model's config.json (a JSON object)") from None
    if not isinstance(raw, dict):
        raise _problem(display, "unreadable-config", f"{display} is not a JSON object",
                       "pass the model's config.json (a JSON object)")
    _check_counts(raw, display, text)
    return config_from_dict(raw, display)


MAX_CONFIG_BYTES = 4 * 2**20
"""Largest config.json read (4 MiB; real ones are a few KB)."""


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
    archs = raw.get("architectures")
    archs = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else \
        [archs] if isinstance(archs, str) else []

    def name(v):
        return v if isinstance(v, str) else None  # a model_type that is not a string matches no family

    cfg = Config(path=display, fields=fields, origin=origin, model_type=name(raw.get("model_type")),
                 text_model_type=name(text.get("model_type")), architectures=archs, ignored_subtrees=ignored)
    cfg.read.update({"architectures", "model_type"})
    return cfg


def dtype_name(value: str | None) -> str | None:
    """kvreg precision for a torch dtype string (``bfloat16`` → ``bf16``); None when unknown (or not a string)."""
    if not isinstance(value, str):
        return None
    return TORCH_DTYPES.get(str(value).removeprefix("torch."))
