"""A model entry's geometry filled from its shipped config.json (issue 14, "geometry by construction").

A model entry states only what its shipped config (``registry/models/<id>.config.json``, origins in
``registry/models/CONFIGS.md``) cannot say.  Before the entry validates, every geometry key it omits
is taken from the importer's reading of that config (:func:`kvreg.importhf.import_config`, the same
rules as ``kvreg import-hf``):

- the whole top-level keys ``layers``, ``hidden_size``, ``vocab_size``, ``attention_heads``,
  ``native_context``, ``moe`` and ``layer_groups``;
- inside a ``moe`` the entry does state, the routing keys it leaves out (``experts``,
  ``experts_per_token``, ``shared_experts``).

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

from pathlib import Path

from kvreg.configcheck import MOE_FIELDS, TOP_FIELDS, config_path
from kvreg.extends import _merge
from kvreg.problems import KvregError, Problem  # noqa: F401  (Problem: the return type)
from kvreg.yamlsrc import Document

FILLED = TOP_FIELDS + ("native_context", "moe", "layer_groups")
"""Top-level keys of a model entry a shipped config can give (whole)."""

MISSING_HINT = "ship its config.json beside it (registry/models/<id>.config.json, origin in CONFIGS.md), or state the field"
"""The hint of a geometry key missing from a model entry that has no shipped config."""


def _stated_params(data: dict) -> int | None:
    """The entry's own parameter count, when stated as a plain number or ``{value: N}``."""
    p = data.get("params_total")
    p = p.get("value") if isinstance(p, dict) else p
    return p if isinstance(p, int) and not isinstance(p, bool) else None


def _config_reading(cfg_file: Path, entry_id: str, params_total: int | None, shown: str) -> dict:
    """The importer's entry dict for ``cfg_file`` (raises KvregError when it cannot read it)."""
    from kvreg.importhf import import_config

    try:
        return import_config(cfg_file, entry_id=entry_id, display=shown).entry
    except KvregError as exc:
        if params_total is None or not any(p.code == "missing-dimension" for p in exc.problems):
            raise
        # A config too thin to count parameters from (Falcon-H1's docs table): the entry's count stands in,
        # as in kvreg/configcheck.py; only geometry is taken from it here.
        return import_config(cfg_file, entry_id=entry_id, params_total=params_total, display=shown).entry


def fill_model(doc: Document, entry_file: Path) -> tuple[Document, list[Problem]]:
    """``doc`` with the geometry keys it omits taken from the shipped config beside ``entry_file``.

    Args:
        doc: the parsed model entry (its data a mapping).
        entry_file: the entry's path on disk (the config is ``<id>.config.json`` beside it).

    Returns:
        (document, problems): the same ``doc`` when there is no config or nothing is omitted; else a new
        document whose filled key paths point at the config file (``origins``, position 1:1).  A config the
        importer refuses gives no keys (``doc`` comes back unchanged; kvreg/configcheck.py reports it as
        ``config-unreadable``, and a required key still omitted is ``missing-key``).  No problems are returned
        today; the list keeps the shape of :meth:`kvreg.extends.EngineParents.resolve`.
    """
    data = doc.data
    cfg = config_path(entry_file)
    if not isinstance(data, dict) or not cfg.exists():
        return doc, []
    omitted = [k for k in FILLED if k not in data]
    moe = data.get("moe")
    moe_omitted = [f for f in MOE_FIELDS if f not in moe] if isinstance(moe, dict) else []
    if not omitted and not moe_omitted:
        return doc, []
    shown = Path(doc.file).with_name(cfg.name).as_posix()
    try:
        theirs = _config_reading(cfg, str(data.get("id", entry_file.stem)), _stated_params(data), shown)
    except KvregError:
        # kvreg/configcheck.py reports the unreadable config (config-unreadable); a key the entry needs is
        # then reported missing, with MISSING_HINT
        return doc, []
    parent: dict = {}
    for k in omitted:
        if k in theirs:
            v = theirs[k]
            if k == "native_context" and isinstance(v, dict):
                v = {x: y for x, y in v.items() if x != "source"}  # its source is the shipped config itself
            parent[k] = v
    if moe_omitted and isinstance(theirs.get("moe"), dict):
        parent["moe"] = {f: theirs["moe"][f] for f in moe_omitted if f in theirs["moe"]}
    if not parent:
        return doc, []
    merged = _merge(parent, data)
    positions = dict(doc.positions)
    origins = dict(doc.origins)
    for k, v in parent.items():
        paths = [(k,)] if k in omitted else [(k, f) for f in v]
        for p in paths:
            positions[p] = (1, 1)
            origins[p] = shown
    return Document(doc.file, merged, positions, origins), []
