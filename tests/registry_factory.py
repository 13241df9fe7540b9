"""Build small fixture registries from dicts (CONVENTIONS.md habit 7)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

SOURCE = [{"id": "fixture", "title": "test fixture"}]
# Fixture numbers are made up for the test; they name the fixture as their source explicitly
# (registry/README.md "Provenance": a bare number needs an explicit default source).
FIELD_SOURCES = {"fixture": ["*"]}


def model_entry(mid: str, layers: int, groups: list[dict], **extra) -> dict:
    """A minimal valid model entry with the given layer groups."""
    e = {"id": mid, "layers": layers, "hidden_size": 4096, "native_context": 131072, "params_total": 8e9,
         "layer_groups": groups, "sources": SOURCE, "field_sources": FIELD_SOURCES}
    e.update(extra)
    return e


def hardware_entry(hid: str, **extra) -> dict:
    e = {"id": hid, "vendor": "test", "memory_marketed": "80 GB", "memory_usable": "79.6 GiB",
         "memory_basis": "runtime", "bandwidth": "3.35 TB/s", "sources": SOURCE, "field_sources": FIELD_SOURCES}
    e.update(extra)
    return e


def engine_entry(eid: str = "first-principles", **extra) -> dict:
    e = {"id": eid, "engine": "first-principles", "gpu_memory_utilization": 1.0, "runtime_reserve": "6 GiB",
         "sources": SOURCE, "field_sources": FIELD_SOURCES}
    e.update(extra)
    return e


def write_project(root: Path, models: dict | None = None, hardware: dict | None = None,
                  engines: dict | None = None) -> Path:
    """Write a project: ``models`` maps id -> {layers, groups, ...extra} or a full entry dict."""
    for folder, entries in (("registry/models", models), ("hardware", hardware), ("registry/engines", engines)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for eid, e in (entries or {}).items():
            if folder == "registry/models" and "groups" in e:
                e = model_entry(eid, e["layers"], e["groups"], **{k: v for k, v in e.items() if k not in ("layers", "groups")})
            (root / folder / f"{eid}.yaml").write_text(yaml.safe_dump(e, sort_keys=False))
    return root


def con_for(models=None, hardware=None, engines=None):
    """An in-memory database over a temporary fixture project."""
    from kvreg.build import memory_connection

    root = Path(tempfile.mkdtemp(prefix="kvreg-fixture-"))
    write_project(root, models, hardware or {"hw": hardware_entry("hw")}, engines or {"first-principles": engine_entry()})
    return memory_connection(root)
