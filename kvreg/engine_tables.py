"""Engine-accounting base tables: engine release rules, quirks, support (platforms, precision rules), served model
sets, observations, axes.

Merged into :data:`kvreg.tables.TABLES` so they are validated by pandera and
loaded like every other base table.  Column names carry units; logged GiB
figures are converted to bytes (GiB = 2^30) and keep their printed decimals
(``*_decimals``) so the calibration can bound the rounding.
"""

from __future__ import annotations

from typing import Annotated, NamedTuple

from kvreg.logparse import excerpt_line
from kvreg.entry_tables import Derived, EntryTable, columns, rows as entry_rows
from kvreg.schema.columns import Column
from kvreg.table_specs import RecordTable
from kvreg.schema.engine import EngineEntry
from kvreg.schema.hardware import HardwareEntry
from kvreg.schema.model import ModelEntry
from kvreg.schema.observation import ObservationEntry

I, F, S, B = "Int64", "Float64", "string", "boolean"

# max_model_len ladder (tokens): common serving settings, 4Ki … 1Mi; observation values, report contexts
# and report workload contexts are added (so a report asking for 48Ki gets engine figures at 48Ki).
MAX_MODEL_LEN_LADDER = [4096, 8192, 16384, 32768, 40960, 65536, 131072, 262144, 524288, 1048576]

PROFILE_GEOMETRY = EntryTable("model_profile_geometry", "model", ModelEntry, ("model_id",), home="models")
# An engine release's accounting rules (kvreg/schema/accounting.py): one row per release with an
# ``accounting:`` block; ``reserve`` flattened in, ``reserve.cudagraph_profile`` as ``cudagraph_*`` (with
# ``cudagraph_profiled`` saying whether it is given), ``mem_fraction_rule`` as ``mem_fraction_*``; lists comma-joined.
ACCOUNTING = EntryTable("engine_accounting", "engine", EngineEntry, ("engine_id",), ("accounting",))
MEM_FRACTION_TIERS = EntryTable("engine_mem_fraction_tiers", "engine", EngineEntry, ("engine_id", "tier_idx"),
                                ("accounting", "mem_fraction_rule", "tiers"))
MLA_BACKEND_RULES = EntryTable("engine_mla_backend_rules", "engine", EngineEntry, ("engine_id", "rule_idx"),
                               ("accounting", "mla_backends"))
QUIRKS = EntryTable("engine_quirks", "engine", EngineEntry, ("engine_id", "quirk_idx"), ("accounting", "quirks"))
# An engine release's support: block (kvreg/schema/support.py), and each device's compute capability.
PLATFORMS = EntryTable("engine_platforms", "engine", EngineEntry, ("engine_id", "platform_idx"), ("support", "platforms"))
PRECISION_RULES = EntryTable("engine_precision_rules", "engine", EngineEntry, ("engine_id", "rule_idx"),
                             ("support", "precisions"))
CAPABILITIES = EntryTable("hardware_capabilities", "hardware", HardwareEntry, ("hardware_id",), home="hardware")


def _observed_served_id(r) -> str | None:
    o, s = r.obj, r.obj.settings
    n_spec = s.num_speculative_tokens or 0
    return served_id(o.model, s.draft_model, n_spec) if o.model and (s.draft_model or n_spec) else o.model


_FIGURE_PATHS = {"kv_cache_tokens": ("logged", "kv_cache_tokens"), "num_gpu_blocks": ("logged", "num_gpu_blocks"),
                 "max_concurrency": ("logged", "max_concurrency"),
                 "max_concurrency_tokens": ("logged", "max_concurrency_tokens"),
                 "available_kv": ("logged", "available_kv_cache_memory_gib"), "max_model_len": ("settings", "max_model_len")}
"""Column stem → the entry path of a figure kvreg/checks/208_observation_figures_disagree.sql compares."""
_FIGURE_FIELD = {"available_kv": "available_kv_cache_memory_gib"}


def _line(*path):
    return Derived(I, False, lambda r: r.item.doc.where(path)[0])


OBSERVATIONS = EntryTable(
    "observations", "observation", ObservationEntry, ("observation_id",), exclude=("name", "confidence"), derived={
        # the served-model set the log ran (target + draft / MTP head + speculative tokens): served_models
        "served_id": Derived(S, True, _observed_served_id),
        "available_kv_decimals": Derived(I, True, lambda r: _decimals(r.obj.logged.available_kv_cache_memory_gib)),
        "source_url": Derived(S, True, lambda r: next((src.url for src in r.obj.sources if src.url), None)),
        "file": Derived(S, False, lambda r: r.item.doc.file),
        "line": _line("id"), "engine_line": _line("engine"), "hardware_line": _line("hardware"),
        "draft_line": _line("settings", "draft_model"),
        # where each figure check 208 (observation_figures_disagree) compares sits: the entry's line and the log's
        **{f"{k}_line": _line(*path) for k, path in _FIGURE_PATHS.items()},
        **{f"{k}_log_line": Derived(I, True, lambda r, k=k: excerpt_line(r.obj.excerpt, _FIGURE_FIELD.get(k, k)))
           for k in _FIGURE_PATHS if k != "max_model_len"}})

class ServedModel(NamedTuple):
    """One model of a served set: each model alone (``served_id`` = the model, role target), and each target +
    draft (or MTP head) + speculative tokens an observation ran (kvreg/sql views join on ``served_id``)."""

    served_id: Annotated[str, Column()]
    model_id: Annotated[str, Column()]
    role: Annotated[str, Column()]
    num_speculative_tokens: Annotated[int, Column()]


class ConvRows(NamedTuple):
    """Rows of a recurrent group's conv state (kernel − 1): speculative decoding adds num_spec rows."""

    model_id: Annotated[str, Column()]
    group_idx: Annotated[int, Column()]
    conv_rows: Annotated[int, Column()]


class MaxModelLen(NamedTuple):
    max_model_len: Annotated[int, Column()]


class BatchedTokens(NamedTuple):
    max_num_batched_tokens: Annotated[int, Column()]


def _served(registry):
    models = registry.entries.get("model", {})
    for mid in sorted(models):
        yield None, ServedModel(mid, mid, "target", 0)
    sets: set[tuple[str, str | None, int]] = set()
    for item in registry.entries.get("observation", {}).values():
        o, s = item.entry, item.entry.settings
        n_spec = s.num_speculative_tokens or 0
        if o.model and (s.draft_model or n_spec):
            sets.add((o.model, s.draft_model, n_spec))
    for target, draft, n_spec in sorted(sets, key=lambda x: (x[0], x[1] or "", x[2])):
        if target in models and (draft is None or draft in models):
            sid = served_id(target, draft, n_spec)
            yield None, ServedModel(sid, target, "target", n_spec)
            if draft:
                yield None, ServedModel(sid, draft, "draft", n_spec)


def _conv_rows(registry):
    for mid, item in sorted(registry.entries.get("model", {}).items()):
        for gi, g in enumerate(item.entry.layer_groups):
            for t in (g.state or []):
                if t.role == "conv":
                    yield None, ConvRows(mid, gi, t.shape[0])


def _max_model_lens(registry):
    lens = set(MAX_MODEL_LEN_LADDER)
    lens |= {i.entry.settings.max_model_len for i in registry.entries.get("observation", {}).values()
             if i.entry.settings.max_model_len}
    for item in registry.entries.get("report", {}).values():
        lens |= set(item.entry.contexts) | {item.entry.workload.context}
    return [(None, MaxModelLen(n)) for n in sorted(lens)]


def _batched_tokens(registry):
    batched = {2048, 4096, 8192, 16384}
    for a in (item.entry.accounting for item in registry.entries.get("engine", {}).values()):
        if a is not None:
            batched.add(a.max_num_batched_tokens.value)
            if a.max_num_batched_tokens_large_gpu is not None:
                batched.add(a.max_num_batched_tokens_large_gpu.value)
            for t in (a.mem_fraction_rule.tiers if a.mem_fraction_rule else []):
                batched.add(t.chunked_prefill_size.value)
    batched |= {i.entry.settings.max_num_batched_tokens for i in registry.entries.get("observation", {}).values()
                if i.entry.settings.max_num_batched_tokens}
    return [(None, BatchedTokens(n)) for n in sorted(batched)]


# The engine tables computed throughout (columns: the records' marked fields, kvreg/table_specs.py RecordTable).
ENGINE_RECORDS: dict[str, RecordTable] = {t.name: t for t in [
    RecordTable("served_models", ServedModel, _served), RecordTable("recurrent_conv_rows", ConvRows, _conv_rows),
    RecordTable("max_model_lens", MaxModelLen, _max_model_lens),
    RecordTable("batched_tokens", BatchedTokens, _batched_tokens)]}

ENGINE_TABLES: dict[str, dict[str, tuple[str, bool]]] = {
    "engine_accounting": columns(ACCOUNTING),
    # accounting.mem_fraction_rule.tiers: the defaults by device memory, in order (kvreg/sql/205 engine_memory_pools_at)
    "engine_mem_fraction_tiers": columns(MEM_FRACTION_TIERS),
    # accounting.mla_backends: the MLA backend and its default block per device architecture, in rule order
    # (kvreg/sql/200_engine_layer_specs.sql engine_mla_backend; lists comma-joined, NULL = any)
    "engine_mla_backend_rules": columns(MLA_BACKEND_RULES),
    # The model geometry the engine's profile run depends on (kvreg/sql/204_engine_reserve.sql): the model
    # fields marked Column(table="model_profile_geometry") (kvreg/entry_tables.py).
    "model_profile_geometry": columns(PROFILE_GEOMETRY),
    "engine_quirks": columns(QUIRKS),
    "served_models": ENGINE_RECORDS["served_models"].columns(),
    "recurrent_conv_rows": ENGINE_RECORDS["recurrent_conv_rows"].columns(),
    # One row per observation entry (kvreg/schema/observation.py): the settings and logged figures flattened in,
    # logged GiB figures in bytes; the served set, printed decimals, source url and YAML lines computed here.
    "observations": columns(OBSERVATIONS),
    # support: the platforms an engine release runs on (in match order) and its per-precision rules
    # (kvreg/schema/support.py; lists comma-joined, NULL = any); judged by kvreg/sql/058_engine_support.sql
    "engine_platforms": columns(PLATFORMS),
    "engine_precision_rules": columns(PRECISION_RULES),
    # hardware compute_capability (CUDA devices; NULL elsewhere)
    "hardware_capabilities": columns(CAPABILITIES),
    "max_model_lens": ENGINE_RECORDS["max_model_lens"].columns(),
    "batched_tokens": ENGINE_RECORDS["batched_tokens"].columns(),
}


# The engine tables whose columns follow from the entry models' markers (their pandera checks too: kvreg/tables.py).
ENGINE_SPECS = (ACCOUNTING, MEM_FRACTION_TIERS, MLA_BACKEND_RULES, QUIRKS, PROFILE_GEOMETRY, PLATFORMS, PRECISION_RULES,
                CAPABILITIES, OBSERVATIONS)


def _decimals(x: float | None) -> int | None:
    """Decimals a logged figure was printed with (50.32 → 2), from its shortest repr; one written with an exponent
    (``1e30``, ``1.5e-05``: repr's mantissa and exponent) has the mantissa's decimals less the exponent, at least 0."""
    if x is None:
        return None
    mantissa, _, exp = repr(float(x)).partition("e")
    frac = mantissa.partition(".")[2]
    return max(0, (0 if frac in ("", "0") else len(frac)) - int(exp or 0))


def served_id(target: str, draft: str | None, num_spec: int) -> str:
    """The served-model id of a target with an optional draft (or MTP head) and speculative tokens."""
    return target + (f"+{draft}" if draft else "") + (f"+spec{num_spec}" if num_spec else "")


def engine_rows(registry) -> dict[str, list[dict]]:
    """Rows of :data:`ENGINE_TABLES` from validated entries (see kvreg/schema/accounting.py)."""
    rows = {spec.name: entry_rows(spec, registry) for spec in ENGINE_SPECS}
    return rows | {name: t.rows(registry) for name, t in ENGINE_RECORDS.items()}
