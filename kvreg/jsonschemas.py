"""JSON Schemas for every YAML entry kind, generated from the pydantic entry models.

``kvreg schema --write`` writes ``kvreg/schemas/<kind>.schema.json`` (package
data) and puts a ``# yaml-language-server: $schema=…`` first line in every
entry, so editors with the YAML language server complete keys and flag
mistakes as people type.  ``kvreg schema --check`` lists stale schema files
and entries without the header (a test runs the same check).

The schemas describe what the validator accepts: a quantity is a number in
its base unit or a string with a unit (``"80 GB"``, pattern from
:func:`kvreg.units.unit_pattern`), and a measure is that value bare or as
``{value, source, confidence, note}``.  Cross-entry rules (ids that resolve,
layer counts that sum) stay with ``kvreg validate``.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import kvreg

SCHEMA_DIR = Path(kvreg.__file__).parent / "schemas"
HEADER_PREFIX = "# yaml-language-server: $schema="
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _kinds():
    from kvreg.registry import KINDS

    return KINDS


def _nice_defs(schema: dict) -> dict:
    """Rename pydantic's generated ``$defs`` names for measures (``Measure_Annotated_int__Before…``)
    to ``Measure_<value title>``, rewriting every ``$ref``; names that would collide are kept."""
    defs = schema.get("$defs", {})
    renames: dict[str, str] = {}
    taken = set(defs)
    for name, body in defs.items():
        title = body.get("title", "")
        if name.startswith(("Measure", "kvreg__")) and title.startswith("Measure of "):
            nice = "Measure_" + re.sub(r"[^A-Za-z0-9]+", "_", title.removeprefix("Measure of ")).strip("_")
            if nice != name and nice not in taken:
                renames[name] = nice
                taken.add(nice)
    if not renames:
        return schema
    text = json.dumps(schema)
    for old, new in renames.items():
        text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    out = json.loads(text)
    out["$defs"] = {renames.get(k, k): v for k, v in out["$defs"].items()}
    out["$defs"] = dict(sorted(out["$defs"].items()))
    return out


def _without_required(node):
    """A copy of a schema fragment with every ``required`` list dropped."""
    if isinstance(node, dict):
        return {k: _without_required(v) for k, v in node.items() if k != "required"}
    if isinstance(node, list):
        return [_without_required(v) for v in node]
    return node


def _extends_aware(body: dict) -> dict:
    """An engine entry with ``extends:`` inherits its parent's keys (kvreg/extends.py), so the editor
    checks it without required keys: ``if extends then <partial> else <full>``; the partial copy
    of each definition is ``<name>__partial``."""
    defs = body.get("$defs", {})
    text = json.dumps(_without_required({k: v for k, v in body.items() if k not in ("$defs", "title")}))
    part_defs = json.dumps(_without_required(defs))
    for name in defs:
        text = text.replace(f'"#/$defs/{name}"', f'"#/$defs/{name}__partial"')
        part_defs = part_defs.replace(f'"#/$defs/{name}"', f'"#/$defs/{name}__partial"')
    partial = json.loads(text)
    part = json.loads(part_defs)
    for d in part.values():   # an item with an id may drop the parent's item: {id: X, remove: true}
        if "id" in d.get("properties", {}):
            d["properties"]["remove"] = {"type": "boolean", "description": "drop the parent's item of this id"}
    full = {k: v for k, v in body.items() if k not in ("$defs", "title", "type")}
    out = {"type": "object", "$defs": dict(sorted({**defs, **{f"{k}__partial": v for k, v in part.items()}}.items())),
           "if": {"required": ["extends"]}, "then": partial, "else": full}
    return out


def _config_aware(body: dict) -> dict:
    """A model entry with a shipped ``<id>.config.json`` omits the geometry it gives (kvreg/configfill.py);
    a schema cannot see the file beside the entry, so those keys are not required here (``kvreg validate``
    requires them of a model without a config, with a located error)."""
    from kvreg.configfill import FILLED

    out = dict(body)
    out["required"] = [k for k in body.get("required", []) if k not in FILLED]
    out["$comment"] = (f"{', '.join(k for k in body.get('required', []) if k in FILLED)} are required unless "
                       "registry/models/<id>.config.json is shipped beside the entry, which gives them "
                       "(kvreg/configfill.py); kvreg validate checks it")
    return out


def generate(kind) -> dict:
    """The JSON Schema (draft 2020-12) of one :class:`kvreg.registry.Kind`'s entries."""
    body = _nice_defs(kind.schema.model_json_schema(mode="validation"))
    if "extends" in body.get("properties", {}):
        body = _extends_aware(body)
    if kind.name == "model":
        body = _config_aware(body)
    head = {"$schema": DIALECT, "$id": f"{kind.name}.schema.json",
            "title": f"kvreg {kind.name} entry ({kind.folder}/<id>.yaml)"}
    return head | {k: v for k, v in body.items() if k != "title"}


def schema_text(kind) -> str:
    """The schema file's exact text: 2-space JSON, UTF-8, one trailing newline."""
    return json.dumps(generate(kind), indent=2, ensure_ascii=False) + "\n"


def schema_path(kind, schema_dir: Path = SCHEMA_DIR) -> Path:
    return schema_dir / f"{kind.name}.schema.json"


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def stale_schemas(schema_dir: Path = SCHEMA_DIR) -> list[Path]:
    """Schema files that are missing or differ from what the entry models generate now."""
    return [schema_path(k, schema_dir) for k in _kinds()
            if not schema_path(k, schema_dir).exists()
            or schema_path(k, schema_dir).read_text(encoding="utf-8") != schema_text(k)]


def write_schemas(schema_dir: Path = SCHEMA_DIR) -> list[Path]:
    """Write every stale schema file (atomically); return those written."""
    stale = stale_schemas(schema_dir)
    by_path = {schema_path(k, schema_dir): k for k in _kinds()}
    for path in stale:
        _atomic_write(path, schema_text(by_path[path]))
    return stale


def header_line(kind, root: Path, schema_dir: Path = SCHEMA_DIR) -> str:
    """The ``# yaml-language-server`` line for an entry of ``kind`` in project ``root``.

    The path is relative to the entry's folder (``../../kvreg/schemas/model.schema.json``
    from ``registry/models``), pointing at ``ROOT/kvreg/schemas`` — the schemas
    committed beside the registry in this repository.
    """
    target = root / "kvreg" / "schemas" / schema_path(kind, schema_dir).name
    rel = os.path.relpath(target, root / kind.folder)
    return HEADER_PREFIX + Path(rel).as_posix()


def _entry_files(root: Path):
    for kind in _kinds():
        folder = root / kind.folder
        if folder.is_dir():
            for path in sorted(folder.glob("*.y*ml")):
                yield kind, path


def missing_headers(root: Path) -> list[Path]:
    """Entries whose first line is not their kind's schema header."""
    out = []
    for kind, path in _entry_files(root):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        if first != header_line(kind, root):
            out.append(path)
    return out


def write_headers(root: Path) -> list[Path]:
    """Make each entry's first line its schema header (replacing an old one); return the files changed.

    The header is a YAML comment, so the entry's data is unchanged (its lines move down by one).
    """
    changed = []
    for kind, path in _entry_files(root):
        text = path.read_text(encoding="utf-8")
        line = header_line(kind, root)
        first, _, rest = text.partition("\n")
        if first == line:
            continue
        body = rest if first.startswith(HEADER_PREFIX) else text
        _atomic_write(path, f"{line}\n{body}")
        changed.append(path)
    return changed
