"""Where a kvreg project keeps its entries: one folder per kind, with no schema attached.

The CLI checks ``--project`` and the build checks its database's freshness on every command; both only need
the folder names, so they read them here instead of importing :mod:`kvreg.registry` (which loads the pydantic
schemas: ~0.3 s of every ``kvreg plan`` / ``kvreg calibrate`` otherwise; benchmarks/README.md, "Speed
commands").  :data:`kvreg.registry.KINDS` takes its folders from :data:`FOLDERS`, so there is one list.
"""

from __future__ import annotations

from pathlib import Path

FOLDERS: dict[str, str] = {
    "model": "registry/models",
    "engine": "registry/engines",
    "hardware": "hardware",
    "report": "reports",
    "observation": "registry/observations",
    "throughput": "registry/throughput",
}
"""Entry kind → its folder below the project root, in the order entries are validated."""


def is_project(root: Path | str) -> bool:
    """True when ``root`` holds at least one registry folder (:data:`FOLDERS`): the one test the CLI's
    ``--project``, the Python API and ``import-hf``'s default output folder apply, so running in the wrong
    folder never passes as an empty registry."""
    root = Path(root)
    return any((root / folder).is_dir() for folder in FOLDERS.values())


def project_folders() -> str:
    """The registry folders a project has, for messages (``registry/models, registry/engines, …``)."""
    return ", ".join(FOLDERS.values())


def entry_files(root: Path) -> list[Path]:
    """Every entry file below ``root`` (``*.yaml`` / ``*.yml`` of each kind's folder), sorted by kind order then
    path — the files :func:`kvreg.registry.discover` validates."""
    found = []
    for folder in FOLDERS.values():
        d = root / folder
        if d.is_dir():
            found.extend(sorted(d.glob("*.y*ml")))
    return found


def cache_folder(project: Path | str | None, name: str) -> Path | None:
    """``PROJECT/.kvreg/<name>``, created, when it can be written; None when there is no project or it cannot
    (a read-only checkout: the caller works without its cache, as before).  The one rule the report's caches
    (compiled templates, render.py; charts, chart_cache.py) follow."""
    import os

    if project is None:
        return None
    folder = Path(project) / ".kvreg" / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK | os.X_OK) else None
