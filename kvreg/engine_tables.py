"""Engine-accounting base tables: engine release rules, quirks, support (platforms, precision rules), served model
sets, observations, axes.

Merged into :data:`kvreg.tables.TABLES` so they are validated by pandera and
loaded like every other base table.  Column names carry units; logged GiB
figures are converted to bytes (GiB = 2^30) and keep their printed decimals
(``*_decimals``) so the calibration can bound the rounding.
"""

from __future__ import annotations

from kvreg.entry_tables import Derived, EntryTable, columns, rows as entry_rows
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
        "draft_line": _line("settings", "draft_model")})

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
    "served_models": {"served_id": (S, False), "model_id": (S, False), "role": (S, False),
                      "num_speculative_tokens": (I, False)},
    # Rows of each recurrent group's conv state (kernel − 1): speculative decoding adds num_spec rows.
    "recurrent_conv_rows": {"model_id": (S, False), "group_idx": (I, False), "conv_rows": (I, False)},
    # One row per observation entry (kvreg/schema/observation.py): the settings and logged figures flattened in,
    # logged GiB figures in bytes; the served set, printed decimals, source url and YAML lines computed here.
    "observations": columns(OBSERVATIONS),
    # support: the platforms an engine release runs on (in match order) and its per-precision rules
    # (kvreg/schema/support.py; lists comma-joined, NULL = any); judged by kvreg/sql/058_engine_support.sql
    "engine_platforms": columns(PLATFORMS),
    "engine_precision_rules": columns(PRECISION_RULES),
    # hardware compute_capability (CUDA devices; NULL elsewhere)
    "hardware_capabilities": columns(CAPABILITIES),
    "max_model_lens": {"max_model_len": (I, False)},
    "batched_tokens": {"max_num_batched_tokens": (I, False)},
}


# The engine tables whose columns follow from the entry models' markers (their pandera checks too: kvreg/tables.py).
ENGINE_SPECS = (ACCOUNTING, MEM_FRACTION_TIERS, MLA_BACKEND_RULES, QUIRKS, PROFILE_GEOMETRY, PLATFORMS, PRECISION_RULES,
                CAPABILITIES, OBSERVATIONS)


def _decimals(x: float | None) -> int | None:
    """Decimals a logged figure was printed with (50.32 → 2), from its shortest repr."""
    if x is None:
        return None
    s = repr(float(x))
    return 0 if s.endswith(".0") else len(s.split(".")[1])


def served_id(target: str, draft: str | None, num_spec: int) -> str:
    """The served-model id of a target with an optional draft (or MTP head) and speculative tokens."""
    return target + (f"+{draft}" if draft else "") + (f"+spec{num_spec}" if num_spec else "")


def engine_rows(registry) -> dict[str, list[dict]]:
    """Rows of :data:`ENGINE_TABLES` from validated entries (see kvreg/schema/accounting.py)."""
    rows: dict[str, list[dict]] = {name: [] for name in ENGINE_TABLES}
    for spec in ENGINE_SPECS:
        rows[spec.name] = entry_rows(spec, registry)
    models = set(registry.entries.get("model", {}))
    for mid in sorted(models):
        rows["served_models"].append(dict(served_id=mid, model_id=mid, role="target", num_speculative_tokens=0))
        m = registry.entries["model"][mid].entry
        for gi, g in enumerate(m.layer_groups):
            for t in (g.state or []):
                if t.role == "conv":
                    rows["recurrent_conv_rows"].append(dict(model_id=mid, group_idx=gi, conv_rows=t.shape[0]))
    served_sets: set[tuple[str, str | None, int]] = set()
    lens = set(MAX_MODEL_LEN_LADDER)
    batched = {2048, 4096, 8192, 16384}
    for a in (item.entry.accounting for item in registry.entries.get("engine", {}).values()):
        if a is not None:
            batched.add(a.max_num_batched_tokens.value)
            if a.max_num_batched_tokens_large_gpu is not None:
                batched.add(a.max_num_batched_tokens_large_gpu.value)
            for t in (a.mem_fraction_rule.tiers if a.mem_fraction_rule else []):
                batched.add(t.chunked_prefill_size.value)
    for item in registry.entries.get("observation", {}).values():
        o, s = item.entry, item.entry.settings
        n_spec = s.num_speculative_tokens or 0
        if o.model and (s.draft_model or n_spec):
            served_sets.add((o.model, s.draft_model, n_spec))
        if s.max_model_len:
            lens.add(s.max_model_len)
        if s.max_num_batched_tokens:
            batched.add(s.max_num_batched_tokens)
    for item in registry.entries.get("report", {}).values():
        lens |= set(item.entry.contexts) | {item.entry.workload.context}
    for target, draft, n_spec in sorted(served_sets, key=lambda x: (x[0], x[1] or "", x[2])):
        if target in models and (draft is None or draft in models):
            sid = served_id(target, draft, n_spec)
            rows["served_models"].append(dict(served_id=sid, model_id=target, role="target",
                                              num_speculative_tokens=n_spec))
            if draft:
                rows["served_models"].append(dict(served_id=sid, model_id=draft, role="draft",
                                                  num_speculative_tokens=n_spec))
    rows["max_model_lens"] = [dict(max_model_len=n) for n in sorted(lens)]
    rows["batched_tokens"] = [dict(max_num_batched_tokens=n) for n in sorted(batched)]
    return rows
