"""Report definitions that name entries the registry does not have (after a change removes one).

Works on the raw YAML of ``reports/*.yaml`` so it runs whether or not the
``report`` entry kind is loaded by this version of kvreg: a report lists
entries under ``models:``, ``hardware:`` and ``engine(s):`` (an id, a list of
ids, or a list of mappings with an ``id``).
"""

from __future__ import annotations

from pathlib import Path

from kvreg.problems import Problem
from kvreg.yamlsrc import load_document

REPORTS_FOLDER = "reports"
# report key -> the entry kind its ids name
REFERENCE_KEYS: dict[str, str] = {"models": "model", "model": "model", "hardware": "hardware",
                                  "engines": "engine", "engine": "engine"}


def _ids(value, path: tuple):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str):
                yield path + (i,), v
            elif isinstance(v, dict) and isinstance(v.get("id"), str):
                yield path + (i, "id"), v["id"]


def dangling_report_references(root: Path, ids: dict[str, set[str]], removed: dict[str, set[str]]) -> list[Problem]:
    """Problems for every report id reference that ``ids`` does not contain.

    Args:
        root: the project directory holding ``reports/``.
        ids: ``{kind: ids present}`` in this project.
        removed: ``{kind: ids}`` the change removed (named in the message).
    Returns:
        One ``missing-reference`` problem per dangling id, at its line.
    """
    folder = root / REPORTS_FOLDER
    if not folder.is_dir():
        return []
    problems = []
    for path in sorted(folder.glob("*.y*ml")):
        display = path.relative_to(root).as_posix()
        doc, _ = load_document(path, display)  # syntax problems are the validator's to report
        if doc is None or not isinstance(doc.data, dict):
            continue
        for key, kind in REFERENCE_KEYS.items():
            if key not in doc.data or kind not in ids:
                continue
            for kpath, eid in _ids(doc.data[key], (key,)):
                if eid in ids[kind]:
                    continue
                line, col = doc.where(kpath)
                why = "this change removes it" if eid in removed.get(kind, ()) else "it is not in the registry"
                problems.append(Problem(
                    display, line, col, ".".join(map(str, kpath)), "missing-reference",
                    f"report {path.stem!r} names {kind} {eid!r}, but {why}",
                    f"keep the {kind} entry, or remove {eid!r} from {display}"))
    return problems
