"""Model geometry checked against the model's shipped config.json (issue 14, "geometry by construction").

A model entry ``registry/models/<id>.yaml`` may ship its Hugging Face config beside it as
``registry/models/<id>.config.json`` (origins in ``registry/models/CONFIGS.md``).  Validation runs
the importer (:func:`kvreg.importhf.import_config`, the same rules as ``kvreg import-hf``) on the
shipped config and compares the entry's geometry with what the config gives:

- ``layers``, ``hidden_size``, ``vocab_size``, ``attention_heads``, ``native_context`` and the
  ``moe`` routing, key by key;
- the layer groups as a multiset of per-layer geometries (kind, KV heads, head dims, window,
  chunk, MLA ranks, state tensors), so an entry may group or order its layers differently from
  the importer, but may not change a layer's geometry or the number of layers of each geometry.

A disagreement is a ``config-mismatch`` problem at the entry's key, naming both values.  Every
number that agrees is recorded as read from the shipped config (``provenance.basis =
'shipped-config'``).  Per-model work here is validation of one file against another, not a
per-scenario computation (those stay in SQL).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from kvreg.problems import KvregError, Problem

TOP_FIELDS = ("layers", "hidden_size", "vocab_size", "attention_heads")
MOE_FIELDS = ("experts", "experts_per_token", "shared_experts")
# Geometry of one layer: what prices its memory.  Strings (variant, reuses, note) name things and
# are not numbers; `count` is what the multiset sums.
GROUP_FIELDS = ("kv_heads", "head_dim", "v_head_dim", "k_eq_v", "window", "chunk", "kv_lora_rank", "q_lora_rank",
                "qk_rope_head_dim", "index_head_dim", "compress", "shares_layers")


def config_path(entry_file: Path) -> Path:
    """``registry/models/<id>.config.json`` for ``registry/models/<id>.yaml``."""
    return entry_file.with_name(entry_file.stem + ".config.json")


def config_reading(cfg_file: Path, entry_id: str, params_total: int | None, shown: str,
                   readings: dict | None = None) -> dict:
    """The importer's entry dict for ``cfg_file`` (:func:`kvreg.importhf.import_config`, as ``kvreg import-hf``),
    the one reading both the geometry fill (kvreg/configfill.py) and this check use.  A config too thin to count
    parameters from (Falcon-H1's docs table: ``missing-dimension``) is read again with the entry's own
    ``params_total`` standing in, when it states one: only geometry is taken from or compared with it.

    ``readings`` (optional, ``{config path: {params_total stood in (None: none): reading or KvregError}}``): an
    import recorded by an earlier call for the same file and the same stand-in is reused (its error raised again)
    instead of importing the file a second time; a new one is recorded.  Loading a registry passes one such dict
    to the fill and to :func:`check_registry`, so a shipped config is read once per validation.

    Raises:
        KvregError: the importer cannot read the config.
    """
    from kvreg.importhf import import_config

    memo = readings.setdefault(cfg_file, {}) if readings is not None else {}

    def read(params: int | None) -> dict:
        if params not in memo:
            try:
                memo[params] = import_config(cfg_file, entry_id=entry_id, params_total=params, display=shown).entry
            except KvregError as exc:
                memo[params] = exc
        if isinstance(memo[params], KvregError):
            raise memo[params]
        return memo[params]

    try:
        return read(None)
    except KvregError as exc:
        if params_total is None or not any(p.code == "missing-dimension" for p in exc.problems):
            raise
        return read(params_total)


def _signature(g) -> tuple:
    """One layer group's per-layer geometry, normalised (V head dim defaults to K's)."""
    vals = {f: getattr(g, f) for f in GROUP_FIELDS}
    vals["v_head_dim"] = vals["v_head_dim"] or vals["head_dim"]
    vals["k_eq_v"] = bool(vals["k_eq_v"])
    state = tuple((t.role, tuple(t.shape), t.dtype, t.axis) for t in (g.state or []))
    return (g.kind,) + tuple(vals[f] for f in GROUP_FIELDS) + (state,)


def _describe(sig: tuple, count: int) -> str:
    kind, *vals, state = sig
    parts = [f"{f} {v}" for f, v in zip(GROUP_FIELDS, vals) if v not in (None, False)]
    parts += [f"{r} state {list(s)} {d}" for r, s, d, _ in state]
    return f"{count} × {kind}" + (f" ({', '.join(parts)})" if parts else "")


def _group_leaves(entry) -> dict[tuple, object]:
    """Key path → value of every number stated inside ``layer_groups``."""
    from kvreg.provenance import _leaves

    return {path: v for path, v, _ in _leaves(entry, ()) if path and path[0] == "layer_groups"}


def check_model(entry, doc, cfg_file: Path, shown: str,
                readings: dict | None = None) -> tuple[list[Problem], dict[tuple, object]]:
    """Compare one model entry with its shipped config.

    Args:
        entry: the validated :class:`~kvreg.schema.model.ModelEntry`.
        doc: its YAML document (for file:line of each key).
        cfg_file: the shipped ``config.json``.
        shown: how to name the config in messages (project-relative path).
        readings: the config readings the geometry fill recorded (:func:`config_reading`), reused.

    Returns:
        (problems, checked): one ``config-mismatch`` problem per disagreeing key (or a
        ``config-unreadable`` one when the importer refuses the config), and the key paths whose
        values the config reproduced.
    """
    from kvreg.schema.model import ModelEntry

    def problem(path: tuple, code: str, message: str, hint: str) -> Problem:
        line, col = doc.where(path)
        return Problem(doc.file_of(path), line, col, ".".join(map(str, path)), code, message, hint)

    fix = (f"correct the entry to the config's value; if the shipped config is wrong, replace {shown} "
           "with the model's published config.json and record its origin in registry/models/CONFIGS.md")
    try:
        theirs = ModelEntry.model_validate(config_reading(cfg_file, entry.id, entry.params_total.value, shown, readings))
    except KvregError as exc:
        why = "; ".join(p.message for p in exc.problems)
        return [problem(("id",), "config-unreadable", f"the shipped config {shown} cannot be imported: {why}",
                        "fix the config, or remove it until kvreg import-hf reads this family")], {}
    problems: list[Problem] = []
    checked: dict[tuple, object] = {}
    for f in TOP_FIELDS:
        mine, cfg = getattr(entry, f), getattr(theirs, f)
        if mine is None or cfg is None:
            continue
        if mine == cfg:
            checked[(f,)] = mine
        else:
            problems.append(problem((f,), "config-mismatch", f"{f} is {mine} but the shipped config {shown} gives {cfg}", fix))
    if entry.native_context.value != theirs.native_context.value:
        problems.append(problem(("native_context",), "config-mismatch",
                                f"native_context is {entry.native_context.value} but the shipped config {shown} "
                                f"gives {theirs.native_context.value} (max_position_embeddings)", fix))
    else:
        checked[("native_context",)] = entry.native_context.value
    if (entry.moe is None) != (theirs.moe is None):
        problems.append(problem(("moe",), "config-mismatch",
                                f"moe is {'absent' if entry.moe is None else 'given'} but the shipped config {shown} "
                                f"{'routes experts' if theirs.moe else 'has no experts'}", fix))
    elif entry.moe is not None:
        for f in MOE_FIELDS:
            mine, cfg = getattr(entry.moe, f), getattr(theirs.moe, f)
            if mine == cfg:
                if f in entry.moe.model_fields_set:
                    checked[("moe", f)] = mine
            else:
                problems.append(problem(("moe", f), "config-mismatch",
                                        f"moe.{f} is {mine} but the shipped config {shown} gives {cfg}", fix))
    problems += _compare_groups(entry, theirs, shown, fix, problem, checked)
    return problems, checked


def _compare_groups(entry, theirs, shown, fix, problem, checked) -> list[Problem]:
    mine_ms, cfg_ms = Counter(), Counter()
    for g in entry.layer_groups:
        mine_ms[_signature(g)] += g.count
    for g in theirs.layer_groups:
        cfg_ms[_signature(g)] += g.count
    if mine_ms == cfg_ms:
        checked.update(_group_leaves(entry))
        return []
    out = []
    if [g.kind for g in entry.layer_groups] == [g.kind for g in theirs.layer_groups]:
        # Same layout: point at the very key that differs, group by group.
        for i, (a, b) in enumerate(zip(entry.layer_groups, theirs.layer_groups)):
            for f in ("count",) + GROUP_FIELDS:
                va, vb = getattr(a, f), getattr(b, f)
                if f == "v_head_dim":
                    va, vb = va or a.head_dim, vb or b.head_dim
                if f in ("k_eq_v", "shares_layers"):
                    va, vb = bool(va), bool(vb)
                if va != vb:
                    out.append(problem(("layer_groups", i, f), "config-mismatch",
                                       f"layer_groups.{i}.{f} is {va} but the shipped config {shown} gives {vb}", fix))
            sa = [(t.role, t.shape, t.dtype) for t in a.state or []]
            sb = [(t.role, t.shape, t.dtype) for t in b.state or []]
            if sa != sb:
                out.append(problem(("layer_groups", i, "state"), "config-mismatch",
                                   f"layer_groups.{i}.state is {sa} but the shipped config {shown} gives {sb}", fix))
        if out:
            return out
    extra = [_describe(s, n - cfg_ms[s]) for s, n in mine_ms.items() if n > cfg_ms[s]]
    missing = [_describe(s, n - mine_ms[s]) for s, n in cfg_ms.items() if n > mine_ms[s]]
    return [problem(("layer_groups",), "config-mismatch",
                    f"layer_groups differ from the shipped config {shown}: the entry has "
                    f"{'; '.join(extra) or 'nothing more'} where the config gives {'; '.join(missing) or 'nothing'}",
                    fix)]


def check_registry(registry, cache=None, readings: dict | None = None) -> list[Problem]:
    """Check every model entry that ships a config; fill ``registry.config_checked``.

    ``cache`` (a :class:`kvreg.validate_cache.ValidateCache`, optional): a model whose entry and config bytes
    passed before takes the key paths checked then; a passing check is added to it.
    ``readings``: the config readings the geometry fill made while loading (:func:`config_reading`), reused so
    that a config is imported once, not once by the fill and again here.

    Returns the problems found (the caller raises them with the others).
    """
    problems: list[Problem] = []
    for mid, item in sorted(registry.entries.get("model", {}).items()):
        entry_file = registry.root / item.doc.file
        cfg = config_path(entry_file)
        if not cfg.exists():
            continue
        shown = Path(item.doc.file).with_name(cfg.name).as_posix()
        key = None
        if cache is not None:
            from kvreg.validate_cache import digest

            try:
                key = digest("config", item.doc.file, entry_file.read_bytes(), shown, cfg.read_bytes())
            except OSError:
                key = None
            checked = cache.get(key) if key is not None else None
            if checked is not None:
                registry.config_checked[mid] = checked
                continue
        probs, checked = check_model(item.entry, item.doc, cfg, shown, readings)
        problems += probs
        registry.config_checked[mid] = checked
        if key is not None and not probs:
            cache.put(key, checked)
    return problems
