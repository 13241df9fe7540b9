"""A model entry's geometry filled from its shipped config.json (issue 14, "geometry by construction").

A model entry states only what its shipped config (``registry/models/<id>.config.json``, origins in
``registry/models/CONFIGS.md``) cannot say.  Before the entry validates, every geometry key it omits
is taken from the importer's reading of that config (:func:`kvreg.importhf.import_config`, the same
rules as ``kvreg import-hf``):

- the whole top-level keys ``layers``, ``hidden_size``, ``vocab_size``, ``attention_heads``,
  ``native_context``, ``moe`` and ``layer_groups``;
- inside a ``moe`` the entry does state, the routing keys it leaves out (``experts``,
  ``experts_per_token``, ``shared_experts``);
- inside ``layer_groups`` the entry does state, laid out as the importer lays them (same kinds and
  counts in the same order), a group's geometry keys it leaves out (``kv_heads``, ``head_dim``,
  ``window``, …: configcheck ``GROUP_FIELDS``), from the config's group of the same place.

The data is merged with :func:`kvreg.extends._merge` (the step an engine release inherits its
parent with): the config's reading is the parent, the entry the child, so a key the entry states
always wins, and is then checked against the config (kvreg/configcheck.py, ``config-mismatch``).
A filled key is located in the config file (``Document.origins``): a problem about it names the
config, and its provenance is that file (basis ``shipped-config``, confidence ``read``; the filled
``native_context`` carries no ``source`` of its own so that the shipped config is its source).

A model without a shipped config states everything: a missing key is a ``missing-key`` problem
whose hint says to ship the config or state the field (kvreg/registry.py).
"""

from __future__ import annotations

import copy
from pathlib import Path

from kvreg.configcheck import GROUP_FIELDS, MOE_FIELDS, TOP_FIELDS, config_path, config_reading
from kvreg.extends import _merge
from kvreg.problems import KvregError, Problem
from kvreg.yamlsrc import Document

FILLED = TOP_FIELDS + ("native_context", "moe", "layer_groups")
"""Top-level keys of a model entry a shipped config can give (whole)."""

MISSING_HINT = "ship its config.json beside it (registry/models/<id>.config.json, origin in CONFIGS.md), or state the field"
"""The hint of a geometry key missing from a model entry that has no shipped config."""


def _stated_params(data: dict) -> int | None:
    """The entry's own parameter count, when stated as a plain number or ``{value: N}``."""
    p = data.get("params_total")
    p = p.get("value") if isinstance(p, dict) else p
    if isinstance(p, float) and p.is_integer():  # 7e9 reads as a float
        p = int(p)
    return p if isinstance(p, int) and not isinstance(p, bool) else None


def _group_keys(mine, theirs) -> dict[int, dict]:
    """Per stated group (by index): the geometry keys (configcheck ``GROUP_FIELDS``) it omits, from the config's
    group of the same place, when the entry lays its groups out as the importer does (same kinds and counts in
    the same order); else nothing (a different grouping states its geometry itself)."""
    if not isinstance(theirs, list) or len(mine) != len(theirs):
        return {}
    if any(not isinstance(a, dict) or (a.get("kind"), a.get("count")) != (b.get("kind"), b.get("count"))
           for a, b in zip(mine, theirs)):
        return {}
    out = {}
    for i, (a, b) in enumerate(zip(mine, theirs)):
        keys = {f: b[f] for f in GROUP_FIELDS if f not in a and f in b}
        if keys:
            out[i] = keys
    return out


def fill_model(doc: Document, entry_file: Path, readings: dict | None = None) -> tuple[Document, list[Problem]]:
    """``doc`` with the geometry keys it omits taken from the shipped config beside ``entry_file``.

    Args:
        doc: the parsed model entry (its data a mapping).
        entry_file: the entry's path on disk (the config is ``<id>.config.json`` beside it).
        readings: when given, the config's import is recorded in it (:func:`kvreg.configcheck.config_reading`),
            so the config check (:func:`kvreg.configcheck.check_registry`) reuses it instead of importing the
            file again.

    Returns:
        (document, problems): the same ``doc`` when there is no config or nothing is omitted; else a new
        document whose filled key paths point at the config file (``origins``, position 1:1).  A config the
        importer refuses gives no keys and ``doc`` comes back unchanged: when the entry omits a required key
        that is one ``config-unreadable`` problem at ``id`` here (the key is then reported missing too), else
        kvreg/configcheck.py reports it once the entry validates.
    """
    data = doc.data
    cfg = config_path(entry_file)
    if not isinstance(data, dict) or not cfg.exists():
        return doc, []
    omitted = [k for k in FILLED if k not in data]
    moe = data.get("moe")
    moe_omitted = [f for f in MOE_FIELDS if f not in moe] if isinstance(moe, dict) else []
    groups = data.get("layer_groups")
    group_omitted = isinstance(groups, list) and any(
        isinstance(g, dict) and any(f not in g for f in GROUP_FIELDS) for g in groups)
    if not omitted and not moe_omitted and not group_omitted:
        return doc, []
    shown = Path(doc.file).with_name(cfg.name).as_posix()
    try:
        theirs = config_reading(cfg, str(data.get("id", entry_file.stem)), _stated_params(data), shown, readings)
    except KvregError as exc:
        from kvreg.schema.model import ModelEntry

        needed = [k for k in omitted if ModelEntry.model_fields[k].is_required()]
        if not needed:  # kvreg/configcheck.py reports the unreadable config once the entry validates
            return doc, []
        line, col = doc.where(("id",))
        why = "; ".join(p.message for p in exc.problems)
        return doc, [Problem(doc.file, line, col, "id", "config-unreadable",
                             f"the entry omits {', '.join(needed)}, but its shipped config {shown} cannot be "
                             f"imported: {why}", "fix the config, or state the fields in the entry")]
    theirs = copy.deepcopy(theirs)  # the reading is shared with the config check (``readings``): never aliased
    parent: dict = {}
    for k in omitted:
        if k in theirs:
            v = theirs[k]
            if k == "native_context" and isinstance(v, dict):
                v = {x: y for x, y in v.items() if x != "source"}  # its source is the shipped config itself
            parent[k] = v
    if moe_omitted and isinstance(theirs.get("moe"), dict):
        parent["moe"] = {f: theirs["moe"][f] for f in moe_omitted if f in theirs["moe"]}
    filled_groups = _group_keys(groups, theirs.get("layer_groups")) if group_omitted else {}
    if not parent and not filled_groups:
        return doc, []
    merged = _merge(parent, data)
    if filled_groups:  # a list of groups has no ids to merge by (extends replaces it): merged group by group
        merged["layer_groups"] = [_merge(filled_groups.get(i, {}), g) for i, g in enumerate(groups)]
    positions = dict(doc.positions)
    origins = dict(doc.origins)
    paths = [(k,) if k in omitted else (k, f) for k, v in parent.items() for f in ([None] if k in omitted else v)]
    paths += [("layer_groups", i, f) for i, g in filled_groups.items() for f in g]
    for p in paths:
        positions[p] = (1, 1)
        origins[p] = shown
    return Document(doc.file, merged, positions, origins), []


def filled_data(entry_file: Path, display: str | None = None) -> dict:
    """The data of the model entry at ``entry_file`` with the geometry it omits filled from its shipped config:
    the entry as it would be written in full (for tools and tests that derive new entries from a shipped one).

    Raises:
        KvregError: when the file does not parse.
    """
    from kvreg.yamlsrc import load_document

    doc, problems = load_document(entry_file, display or entry_file.name)
    if problems or doc is None:
        raise KvregError(problems)
    return fill_model(doc, entry_file)[0].data
