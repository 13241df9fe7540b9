"""Parse a vLLM startup log (V0 and V1 formats) into the figures and settings it states, with their lines.

Recognised figure lines (engine_accounting.md §1, §4; vLLM 0.19.0 prints them from
vllm/v1/worker/gpu_worker.py:284-285 (init snapshot, requested memory), :424-436 (profiling
result, "Available KV cache memory"), :597 (CUDA graph pool), gpu_model_runner.py:4820
("Model loading took"), :5955 ("Estimated CUDA graph memory"), v1/core/kv_cache_utils.py:1319-1324
(tokens, concurrency), v1/metrics/loggers.py:273 (num_gpu_blocks); V0 from worker.py /
gpu_executor.py):

- ``Model loading took 14.2474 GiB`` (V1) / ``Loading model weights took 14.9888 GB`` (V0; GiB in fact)
- ``worker init memory snapshot: ... free_memory=78.68GiB, total_memory=79.19GiB, cuda_memory=0.51GiB, ...
  non_torch_memory=0.51GiB`` and ``worker requested memory: 75.23GiB``
- ``Total non KV cache memory: 13.57GiB; torch peak memory increase: 0.77GiB; non-torch forward
  increase memory: 0.25GiB; weights memory: 12.56GiB``
- ``Estimated CUDA graph memory: 0.84 GiB total``, ``CUDA graph pool memory: 0.89 GiB (actual), ...``,
  ``Graph capturing finished in 5 secs, took 0.56 GiB``
- ``Available KV cache memory: 51.63 GiB`` (V1) / ``kv_cache_size=3.81GiB`` in V0's
  ``Memory profiling results`` line, which also gives ``total_gpu_memory`` and ``gpu_memory_utilization``
- ``# GPU blocks: 1952, # CPU blocks: 2048`` (V0) / ``... num_gpu_blocks is: 7891`` (V1 metrics)
- ``GPU KV cache size: 410,128 tokens``; ``Maximum concurrency for 131,072 tokens per request: 3.13x``
  (one line ``GPU KV cache size: N tokens, Maximum concurrency for ...`` from 0.33)

Settings come from the log's own lines, first source wins: the engine config line
(``Initializing a V1 LLM engine (v0.19.0) with config: ... tensor_parallel_size=1, ...``), the
``non-default args: {...}`` dict, a ``vllm serve MODEL --flag value`` command line, then the
``Defaulting max_num_seqs to 1024`` / ``Chunked prefill is enabled with max_num_batched_tokens=8192``
lines and the util in ``Requested memory: 0.950000 (util)``.

Only what the text states is returned, each value with the line it came from; :func:`parse_log`
never guesses.  The same figure printed twice with different values by one process (or by the
engine core) on the same kind of line is a conflict: :class:`LogError` names both lines.  Per-rank lines (``Worker_TP1``)
that differ are not a conflict: the first line's value is kept and the spread is reported.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterable

# How vLLM prints its figures (0.19.0): counts with thousands separators, ``f"{num_tokens:,}"`` and
# ``f"{max_model_len:,}"`` (v1/core/kv_cache_utils.py:1319-1324), or bare ``%d`` (V0 "# GPU blocks: %d",
# v1/metrics/loggers.py:273); GiB figures and the concurrency factor as fixed-point ``%.2f`` with no
# separator ("Maximum concurrency for 8,192 tokens per request: 19.31x").  So NUM takes commas only in
# groups of three (``1,234,567``; "1,20" or "157,93" is not a number) and FIXED none at all; a decimal point
# in a count is refused where the count is read (:data:`_INT_FIELDS`).  The lookahead keeps a figure from
# matching a prefix of a malformed one ("1,20x" is not "1").
NUM = r"(-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?)(?![0-9]|[.,][0-9])"
FIXED = r"(-?[0-9]+(?:\.[0-9]+)?)(?![0-9]|[.,][0-9])"
EXCERPT_LINE_CHARS = 300
"""Longest stored excerpt line (characters); longer lines keep their head and the figure read."""


def _num(s: str, count: str = "", line: int = 0) -> float | int:
    """A printed number: an int when it has no decimal point (exact, however long), else a float.

    ``count`` names the figure when it must be a whole number (tokens, blocks): a decimal point there is a
    :class:`LogError` naming ``line`` (vLLM prints counts as integers; "157.936 tokens" is a locale's
    thousands separator or an edit, never 157 tokens).
    """
    if count and "." in s:
        raise LogError(f"line {line}: {count} {s!r} has a decimal point, but vLLM prints it as a whole number "
                       f"(thousands separated by commas: 157,936); fix the line or cut it out")
    s = s.replace(",", "")
    try:
        return int(s) if "." not in s else float(s)
    except ValueError:  # "1,,2" or "-" left after a mutation: not a number
        raise LogError(f"{s!r} is not a number")


class LogError(ValueError):
    """The text is not a vLLM startup log kvreg can read, or it contradicts itself (message says where)."""


@dataclasses.dataclass
class Hit:
    """One value read from one line (1-based ``line``; ``text`` the line, ``process`` its ``(Name pid=N)`` tag)."""

    value: object
    line: int
    text: str
    process: str = ""
    pattern: int = 0
    """Which of the field's patterns matched (0 = the preferred line)."""


@dataclasses.dataclass
class ParsedLog:
    """Figures and settings found in a log; ``None`` where the log is silent.  GiB = 2^30 bytes.

    ``hits`` maps each figure and setting name to the :class:`Hit` used; ``notes`` lists
    per-rank spreads and other remarks for the user.
    """

    version: str | None = None
    engine_generation: str | None = None  # "V0" or "V1" when the format tells
    model: str | None = None
    model_loading_gib: float | None = None
    available_kv_cache_memory_gib: float | None = None
    total_gpu_memory_gib: float | None = None
    init_free_memory_gib: float | None = None
    init_cuda_memory_gib: float | None = None
    init_non_torch_memory_gib: float | None = None
    requested_memory_gib: float | None = None
    weights_memory_gib: float | None = None
    activation_peak_gib: float | None = None
    non_torch_forward_gib: float | None = None
    non_kv_memory_gib: float | None = None
    cuda_graph_estimated_gib: float | None = None
    cuda_graph_memory_gib: float | None = None
    num_gpu_blocks: int | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens: int | None = None
    started: bool | None = None
    args: dict = dataclasses.field(default_factory=dict)
    matched: list[str] = dataclasses.field(default_factory=list)
    hits: dict[str, Hit] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    generation_line: int | None = None

    def excerpt(self) -> str:
        """The lines used, each as ``<line>: <text>`` (cut to EXCERPT_LINE_CHARS), in log order."""
        seen: dict[int, str] = {}
        for h in self.hits.values():
            seen.setdefault(h.line, h.text)
        if self.generation_line and self.generation_line not in seen and "version" not in self.hits:
            seen[self.generation_line] = self._line_text.get(self.generation_line, "")
        return "".join(f"{n}: {_cut(t, self._used_at(n))}\n" for n, t in sorted(seen.items()))

    def _used_at(self, n: int) -> list[str]:
        return [f"{k}={h.value}" for k, h in self.hits.items() if h.line == n]

    _line_text: dict = dataclasses.field(default_factory=dict, repr=False)


FIGURES = {  # ParsedLog field → patterns (any one); group 1 is the value
    # V0 0.6-0.10 worker.py also prints "model weights take XGiB; non_torch_memory takes XGiB; PyTorch activation
    # peak memory takes XGiB; the rest of the memory reserved for KV Cache is XGiB" after "total_gpu_memory (XGiB)"
    "model_loading_gib": [r"Model loading took " + FIXED + r" ?GiB", r"Loading model weights took " + FIXED + r" ?GB"],
    "available_kv_cache_memory_gib": [r"Available KV cache memory: " + FIXED + r" ?GiB", r"kv_cache_size=" + FIXED + r" ?GiB",
                                      r"the rest of the memory reserved for KV Cache is " + FIXED + r" ?GiB"],
    "total_gpu_memory_gib": [r"total_gpu_memory=" + FIXED + r" ?GiB", r"memory snapshot:.*?total_memory=" + FIXED + r" ?GiB",
                             r"total_gpu_memory \(" + FIXED + r" ?GiB\)"],
    "init_free_memory_gib": [r"memory snapshot:.*?free_memory=" + FIXED + r" ?GiB"],
    "init_cuda_memory_gib": [r"memory snapshot:.*?cuda_memory=" + FIXED + r" ?GiB"],
    "init_non_torch_memory_gib": [r"memory snapshot:.*?\bnon_torch_memory=" + FIXED + r" ?GiB"],
    "requested_memory_gib": [r"worker requested memory: " + FIXED + r" ?GiB",
                             r"Requested memory: [0-9.]+ \(util\), " + FIXED + r" ?GiB"],
    "non_kv_memory_gib": [r"Total non KV cache memory: " + FIXED + r" ?GiB"],
    "activation_peak_gib": [r"torch peak memory increase: " + FIXED + r" ?GiB",
                            r"PyTorch activation peak memory takes " + FIXED + r" ?GiB"],
    "non_torch_forward_gib": [r"non-torch forward increase memory: " + FIXED + r" ?GiB",
                              r"non_torch_memory takes " + FIXED + r" ?GiB"],
    "weights_memory_gib": [r"; weights memory: " + FIXED + r" ?GiB", r"model weights take " + FIXED + r" ?GiB"],
    "cuda_graph_estimated_gib": [r"Estimated CUDA graph memory: " + FIXED + r" ?GiB total"],
    "cuda_graph_memory_gib": [r"CUDA graph pool memory: " + FIXED + r" ?GiB \(actual\)",
                              r"Graph capturing finished in .*? took " + FIXED + r" ?GiB"],
    "num_gpu_blocks": [r"# GPU blocks: " + NUM, r"num_gpu_blocks is: " + NUM],
    # 0.33 prints "<device>[ + host] KV cache size: N tokens, Maximum concurrency ..." on one line
    # (kv_cache_utils.py:1147, _kv_cache_device_name: "GPU" on CUDA, else the device type upper-cased)
    "kv_cache_tokens": [r"\b(?:GPU|XPU|HPU|TPU|NPU)(?: \+ host)? KV cache size: " + NUM + r" tokens"],
}
_FIG_RX = {k: [re.compile(p) for p in ps] for k, ps in FIGURES.items()}
# the same lines with any token where the number goes: a figure line whose value is not a printed number
# ("1e30", "nan", "inf") is named in a note, never dropped silently (vLLM prints fixed-point figures: ``:.2f``)
_FIG_LOOSE = {k: [re.compile(p.replace(NUM, r"(\S+)").replace(FIXED, r"(\S+)")) for p in ps]
              for k, ps in FIGURES.items()}
_INT_FIELDS = {"num_gpu_blocks", "kv_cache_tokens", "max_concurrency_tokens"}
_CONC = re.compile(r"Maximum concurrency for " + NUM + r" tokens per request: " + FIXED + r"x")
_CONC_LOOSE = re.compile(r"Maximum concurrency for (\S+) tokens per request: (\S+)")
# cheap substring test before any regex: a 50 MB log is mostly lines none of these touch
_KEYS = ("took", "KV cache", "kv_cache_size", "total_gpu_memory", "memory snapshot", "requested memory",
         "Requested memory", "non KV cache", "CUDA graph", "Graph capturing", "GPU blocks", "num_gpu_blocks",
         "Maximum concurrency", "LLM engine", "API server version", "non-default args", "vllm serve",
         "Defaulting", "Chunked prefill", "gpu_memory_utilization", "max seq len", "failed to start",
         "No available memory", "Memory profiling", "block_size=", "weights take", "memory takes",
         "reserved for KV Cache")
def excerpt_line(excerpt: str | None, field: str) -> int | None:
    """The log line number an observation's ``excerpt`` shows ``field`` was read from, else None.

    Args:
        excerpt: the entry's ``excerpt`` (``<line>: <text>`` rows, :meth:`ParsedLog.excerpt`); a curated excerpt
            without line numbers gives None.
        field: a :data:`FIGURES` key, or ``max_concurrency`` / ``max_concurrency_tokens`` (the "Maximum concurrency"
            line).

    Returns:
        The first row's number whose text matches the field's pattern (the patterns :func:`parse_log` reads with),
        so kvreg/checks/208_observation_figures_disagree.sql names the log lines of both figures it compares.
    """
    rxs = [_CONC] if field in ("max_concurrency", "max_concurrency_tokens") else _FIG_RX.get(field, [])
    for row in (excerpt or "").splitlines():
        n, sep, text = row.partition(": ")
        if sep and n.strip().isdigit() and any(rx.search(text) for rx in rxs):
            return int(n)
    return None


_PREFILTER = re.compile("|".join(re.escape(k) for k in _KEYS))
_VERSION = [re.compile(r"V1 LLM engine \(v([0-9][0-9A-Za-z.+\-]*)\)"),
            re.compile(r"vLLM API server version v?([0-9][0-9A-Za-z.+\-]*)"),
            re.compile(r"LLM engine \(v([0-9][0-9A-Za-z.+\-]*)\)")]
_CONFIG = re.compile(r"LLM engine \(v[^)]*\) with config: (.*)")
_CONFIG_KEYS = {  # config-line key → setting
    "model": "model", "tensor_parallel_size": "tp", "pipeline_parallel_size": "pp", "data_parallel_size": "dp",
    "dtype": "dtype", "max_seq_len": "max_model_len", "quantization": "quantization",
    "enforce_eager": "enforce_eager", "kv_cache_dtype": "kv_cache_dtype", "block_size": "block_size",
}
_UTIL = [re.compile(r"Requested memory: " + NUM + r" \(util\)"), re.compile(r"gpu_memory_utilization=" + NUM),
         re.compile(r"gpu_memory_utilization \(" + NUM + r"\)")]
_DEFAULTING = [("max_num_batched_tokens", re.compile(r"Defaulting max_num_batched_tokens to " + NUM)),
               ("max_num_seqs", re.compile(r"Defaulting max_num_seqs to " + NUM)),
               ("max_num_batched_tokens", re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=" + NUM))]
_NON_DEFAULT = re.compile(r"non-default args: (\{.*\})")
_SERVE = re.compile(r"vllm serve (\S+)((?: +--?[A-Za-z0-9\-_]+(?:[ =](?!--)\S+)?)*)")
_FLAG = re.compile(r"--([A-Za-z0-9\-_]+)(?:[ =](?!--)(\S+))?")
_NOT_STARTED = [re.compile(r"max seq len \(" + NUM + r"\) is larger than the maximum number of tokens"),
                re.compile(r"EngineCore failed to start"),
                re.compile(r"No available memory for the cache blocks"),
                re.compile(r"is larger than the available KV cache memory")]
_SEEN_V1 = re.compile(r"EngineCore|gpu_worker\.py|kv_cache_utils\.py|V1 LLM engine")
_SEEN_V0 = re.compile(r"# GPU blocks:|Memory profiling results|Loading model weights took")
_PROCESS = re.compile(r"^\s*\(([A-Za-z_][A-Za-z0-9_]* pid=[0-9]+)\)")

ARG_KEYS = {  # CLI flag / engine arg → observation setting
    "tensor-parallel-size": "tp", "tensor_parallel_size": "tp", "tp": "tp",
    "pipeline-parallel-size": "pp", "pipeline_parallel_size": "pp",
    "data-parallel-size": "dp", "data_parallel_size": "dp",
    "max-model-len": "max_model_len", "max_model_len": "max_model_len",
    "gpu-memory-utilization": "gpu_memory_utilization", "gpu_memory_utilization": "gpu_memory_utilization",
    "max-num-batched-tokens": "max_num_batched_tokens", "max_num_batched_tokens": "max_num_batched_tokens",
    "max-num-seqs": "max_num_seqs", "max_num_seqs": "max_num_seqs",
    "kv-cache-dtype": "kv_cache_dtype", "kv_cache_dtype": "kv_cache_dtype",
    "block-size": "block_size", "block_size": "block_size",
    "enforce-eager": "enforce_eager", "enforce_eager": "enforce_eager",
    "speculative-config": "speculative_config", "speculative_config": "speculative_config",
    "quantization": "quantization", "dtype": "dtype", "model": "model",
}


def _cut(text: str, used: list[str]) -> str:
    """A stored excerpt line: the line itself if short, else its head plus the values read from it."""
    text = text.rstrip("\n")
    if len(text) <= EXCERPT_LINE_CHARS:
        return text
    return text[:EXCERPT_LINE_CHARS - 40] + " … [read: " + ", ".join(used)[:400] + "]"


def _coerce(v):
    if v is None:
        return True
    if isinstance(v, (int, float, bool)):
        return v
    s = str(v).strip().strip("'\"")
    if s in ("True", "False"):
        return s == "True"
    if s == "None":
        return None
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def _config_value(body: str, key: str) -> str | None:
    """The value of ``key=`` in an engine config line (quoted, a Name(...) object, or up to the next comma)."""
    m = re.search(r"(?:^|, )" + re.escape(key) + r"=", body)
    if not m:
        return None
    rest = body[m.end():]
    if not rest or rest.startswith(","):
        return ""  # ``key=`` with nothing after it: the caller names the line (a truncated log)
    if rest[0] in "'\"":
        end = rest.find(rest[0], 1)
        return rest[1:end] if end > 0 else None
    om = re.match(r"[A-Za-z_][A-Za-z0-9_]*\(", rest)
    if om:  # an object repr: up to its closing parenthesis
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and ch == ")":
                return rest[:i + 1]
        return None
    return rest.split(", ")[0].strip()


def parse_speculative(value) -> dict:
    """Method, draft model and number of speculative tokens from a speculative config (dict or repr string)."""
    if value in (None, True, "None", ""):
        return {}
    if isinstance(value, dict):
        d = value
    else:
        s = str(value)
        d = {}
        for k in ("method", "model", "num_speculative_tokens", "num_spec_tokens"):
            m = re.search(r"\b" + k + r"""=['"]?([^,'")]+)""", s) or re.search(r"""['"]""" + k + r"""['"]: ['"]?([^,'"}]+)""", s)
            if m:
                d[k] = m.group(1).strip()
    out = {}
    if d.get("method") not in (None, "None"):
        out["method"] = str(d["method"])
    if d.get("model") not in (None, "None"):
        out["model"] = str(d["model"])
    n = d.get("num_speculative_tokens", d.get("num_spec_tokens"))
    try:
        if n is not None and int(n) > 0:
            out["num_speculative_tokens"] = int(n)
    except (TypeError, ValueError):
        pass
    return out


def parse_log(text: str | Iterable[str]) -> ParsedLog:
    """Extract the startup figures and settings from ``text``, each with the line it came from.

    Args:
        text: the log as one string (lines end at "\n"), or an iterable of its lines, each with or without its
            "\n" (a file read line by line: :func:`kvreg.ingest.read_log_lines`), so a big log is never held whole.

    Returns:
        A :class:`ParsedLog` (figures in the units vLLM prints: GiB, tokens; settings in ``args``).

    Raises:
        LogError: no recognised figure at all (not a vLLM startup log); a figure line cut off
            mid-number (a truncated log); one process printing the same figure twice with
            different values (``line A says X, line B says Y``); a non-default args dict cut off.
    """
    out = ParsedLog()
    found: dict[str, list[Hit]] = {}
    settings: dict[str, list[Hit]] = {}  # setting → hits in source priority order (config, args, serve, defaults)
    prio: dict[str, int] = {}
    lines_used: dict[int, str] = {}
    not_started = False

    def setting(key, value, hit_line, text_, process, rank):
        if key not in prio or rank < prio[key]:
            prio[key] = rank
            settings[key] = [Hit(value, hit_line, text_, process)]

    # numbered as an editor numbers them: "\n" ends a line (str.splitlines also splits at \x0b, \x1c, \u2028 ...)
    raw_lines = text.split("\n") if isinstance(text, str) else text
    generation_text, last, last_n, n = "", "", 0, 0
    for n, line in enumerate(raw_lines, start=1):
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        if line.strip():
            last, last_n = line, n
        if out.engine_generation != "V1":  # format markers, until the first V1 one (then nothing changes)
            if _SEEN_V1.search(line):
                out.engine_generation, out.generation_line, generation_text = "V1", n, line
            elif out.engine_generation is None and _SEEN_V0.search(line):
                out.engine_generation, out.generation_line, generation_text = "V0", n, line
        if not _PREFILTER.search(line):
            continue
        pm = _PROCESS.match(line)
        process = pm.group(1) if pm else ""
        for field, rxs in _FIG_RX.items():
            for k, rx in enumerate(rxs):
                m = rx.search(line)
                if m:
                    v = _num(m.group(1), field if field in _INT_FIELDS else "", n)
                    found.setdefault(field, []).append(Hit(int(v) if field in _INT_FIELDS else v, n, line, process,
                                                           k))
                    break
            else:
                lm = next((m for rx in _FIG_LOOSE[field] if (m := rx.search(line))), None)
                if lm:
                    out.notes.append(f"line {n}: {field} {lm.group(1)[:40]!r} is not a number as vLLM prints one "
                                     f"(a count like 157,936, a figure like 51.63): the figure is left out ({line.strip()[:120]!r})")
        m = _CONC.search(line)
        if m:
            found.setdefault("max_concurrency_tokens", []).append(
                Hit(_num(m.group(1), "max_concurrency_tokens", n), n, line, process))
            found.setdefault("max_concurrency", []).append(Hit(_num(m.group(2)), n, line, process))
        elif (cm_ := _CONC_LOOSE.search(line)):
            out.notes.append(f"line {n}: 'Maximum concurrency for {cm_.group(1)[:40]} tokens per request: "
                             f"{cm_.group(2)[:40]}' is not as vLLM prints it (a count like 8,192 and a factor "
                             f"like 19.31x): the figure is left out ({line.strip()[:120]!r})")
        if out.version is None:
            for rx in _VERSION:
                vm = rx.search(line)
                if vm:
                    out.version = vm.group(1).rstrip(".")
                    out.hits["version"] = Hit(out.version, n, line, process)
                    break
        cm = _CONFIG.search(line)
        if cm:
            body = cm.group(1)
            values = {key: _config_value(body, key) for key in (*_CONFIG_KEYS, "speculative_config")}
            for key, raw in values.items():
                if raw == "":
                    raise LogError(f"line {n}: the engine config line gives no value for {key}= (truncated log?)")
            for key, skey in _CONFIG_KEYS.items():
                raw = values[key]
                if raw is not None and raw != "None":
                    setting(skey, _coerce(raw), n, line, process, 0)
            spec = values["speculative_config"]
            if spec is not None:
                setting("speculative_config", spec, n, line, process, 0)
        nm = _NON_DEFAULT.search(line)
        if nm:
            try:
                d = ast.literal_eval(nm.group(1))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                raise LogError(f"line {n}: the 'non-default args' line is not a complete Python dict (truncated log?)")
            if not isinstance(d, dict):
                raise LogError(f"line {n}: the 'non-default args' value is not a dict")
            for k, v in d.items():
                if k in ARG_KEYS:
                    setting(ARG_KEYS[k], v if ARG_KEYS[k] == "speculative_config" else _coerce(v), n, line,
                            process, 1)
        sm = _SERVE.search(line)
        if sm:
            setting("model", sm.group(1), n, line, process, 2)
            for fm in _FLAG.finditer(sm.group(2)):
                if fm.group(1) in ARG_KEYS:
                    setting(ARG_KEYS[fm.group(1)], _coerce(fm.group(2)), n, line, process, 2)
        for key, rx in _DEFAULTING:
            dm = rx.search(line)
            if dm:
                setting(key, _num(dm.group(1), key, n), n, line, process, 3)
        for rx in _UTIL:
            um = rx.search(line)
            if um:
                setting("gpu_memory_utilization", _num(um.group(1)), n, line, process, 4)
                break
        if any(rx.search(line) for rx in _NOT_STARTED):
            not_started = True
            lines_used[n] = line

    for field, hits in found.items():
        # the preferred line wins; two different lines measuring the same thing differently (the CUDA
        # graph pool vs "Graph capturing ... took", "# GPU blocks" vs the metrics line) are noted, not
        # a conflict.  The same line printed twice with two values is.
        best = min(h.pattern for h in hits)
        first = next(h for h in hits if h.pattern == best)
        for h in hits:
            if h.pattern != best and h.value != first.value:
                out.notes.append(f"{field}: line {h.line} says {h.value}, line {first.line} says {first.value}; "
                                 f"kept line {first.line}")
                break
        for h in hits:
            if h.pattern == best and h.value != first.value:
                same_source = h.process == first.process or not (h.process.startswith("Worker")
                                                                  and first.process.startswith("Worker"))
                if same_source:
                    raise LogError(f"conflicting figures for {field}: line {first.line} says {first.value} "
                                   f"({first.text.strip()[:160]!r}) but line {h.line} says {h.value} "
                                   f"({h.text.strip()[:160]!r}); a log of two startups? cut it to one")
                out.notes.append(f"{field} differs between ranks: {first.value} (line {first.line}, {first.process}) "
                                 f"and {h.value} (line {h.line}, {h.process}); the first is kept")
                break
        setattr(out, field, first.value)
        out.hits[field] = first
        if field != "max_concurrency_tokens":
            out.matched.append(field)
    for key, hits in settings.items():
        v = hits[0].value
        if key == "model":
            out.model = str(v)
        elif v is not None:
            out.args[key] = v
        out.hits[f"settings.{key}"] = hits[0]
    if not_started:
        out.started = False
    if out.available_kv_cache_memory_gib is not None and out.available_kv_cache_memory_gib < 0:
        out.started = False
    out._line_text = {n: t for n, t in lines_used.items()}
    if out.generation_line:
        out._line_text[out.generation_line] = generation_text
    for n, t in lines_used.items():
        out.hits.setdefault(f"not_started.{n}", Hit(False, n, t))
    if not out.matched:
        raise LogError("no vLLM startup figure found (looked for 'Model loading took', 'Available KV cache memory', "
                       "'# GPU blocks', 'GPU KV cache size', 'Maximum concurrency for N tokens per request')")
    last = last.rstrip().splitlines()[-1] if last.strip() else ""
    if re.search(r"(GPU KV cache size:|tokens per request:|Available KV cache memory:)\s*[0-9,.\-]*$", last):
        raise LogError(f"line {last_n}: the last line is cut off mid-figure: {last.strip()[:200]!r} (truncated log?)")
    return out
