"""Find, parse and validate every entry of a kvreg project.

A project is a directory holding ``registry/models``, ``registry/engines``,
``hardware`` (and, as other kinds are added, more folders); each YAML file is
one entry whose ``id`` is the file stem.  :func:`load_registry` returns the
validated entries or raises :class:`KvregError` with every problem found.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from pathlib import Path

from pydantic import BaseModel, ValidationError

from kvreg.folders import FOLDERS, is_project, project_folders  # noqa: F401  (re-exported: registry.is_project)
from kvreg.problems import KvregError, Problem
from kvreg.schema.common import Entry
from kvreg.yamlsrc import Document, load_document


@dataclasses.dataclass(frozen=True)
class Kind:
    """One kind of entry: where its files live and which schema validates them.

    ``schema_path`` is ``module:Class``; :attr:`schema` imports it when first used, so a command that reads one kind
    (``kvreg report`` with its database up to date validates the report definitions only, kvreg/report/make.py)
    does not import every kind's pydantic models (~0.13 s CPU, benchmarks/README.md "html11").
    """

    name: str
    folder: str
    schema_path: str

    @property
    def schema(self) -> type[Entry]:
        """The entry kind's pydantic model (imported on first use)."""
        import importlib

        module, _, cls = self.schema_path.partition(":")
        return getattr(importlib.import_module(module), cls)


KINDS: list[Kind] = [
    Kind("model", FOLDERS["model"], "kvreg.schema.model:ModelEntry"),
    Kind("engine", FOLDERS["engine"], "kvreg.schema.engine:EngineEntry"),
    Kind("hardware", FOLDERS["hardware"], "kvreg.schema.hardware:HardwareEntry"),
    Kind("report", FOLDERS["report"], "kvreg.schema.report:ReportEntry"),
    Kind("observation", FOLDERS["observation"], "kvreg.schema.observation:ObservationEntry"),
    Kind("throughput", FOLDERS["throughput"], "kvreg.schema.throughput:ThroughputEntry"),
]


@dataclasses.dataclass
class Loaded:
    """A validated entry with the document it came from (for file:line lookups)."""

    kind: str
    entry: Entry
    doc: Document


@dataclasses.dataclass
class Registry:
    """Every validated entry of a project, by kind and id."""

    root: Path
    entries: dict[str, dict[str, Loaded]]
    invalid: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    """(kind, file stem) of entry files that exist but failed validation; references to
    them are not reported again as missing."""
    frames: dict | None = dataclasses.field(default=None, repr=False)
    """The base-table frames (kvreg/tables.py), built once: by the cross-entry checks during
    validation, then reused by the build (issue 14 item 5: not twice per build)."""
    config_checked: dict[str, dict[tuple, object]] = dataclasses.field(default_factory=dict)
    """Per model id, the key paths (and values) its shipped config.json reproduced
    (kvreg/configcheck.py); their provenance is the shipped config."""

    def of(self, kind: str) -> dict[str, Entry]:
        """Entries of one kind, ``{id: entry}``, sorted by id."""
        return {k: v.entry for k, v in sorted(self.entries.get(kind, {}).items())}


_CODES = {
    "extra_forbidden": "unknown-key",
    "missing": "missing-key",
    "literal_error": "bad-choice",
    "string_pattern_mismatch": "bad-id",
    "layer_sum": "layer-count-mismatch",
    "too_short": "too-few-items",
}


# wrong-type: what to write instead, by pydantic's error type (the field's own description is in the schema)
_TYPE_HINTS = {
    "int": "write a whole number such as 8: no words, units or digit separators",
    "float": "write a number, or a quantity with its unit where the field takes one (80 GB, 79.6 GiB, 3.35 TB/s)",
    "bool": "write true or false",
    "string": "write text; quote it when it looks like a number or a date",
    "list": "write a list: [a, b], or one '- item' line each below the key",
    "dict": "write a mapping: 'key: value' lines indented below the key",
    "model": "write a mapping: 'key: value' lines indented below the key",
}


def _type_hint(err_type: str) -> str:
    """The hint of a wrong-type problem from pydantic's error type (``int_parsing`` → int, …); a generic
    pointer to the schema for any other."""
    for prefix, hint in _TYPE_HINTS.items():
        if err_type.startswith(prefix):
            return hint
    return "see the field's description in the entry kind's JSON Schema (kvreg/schemas/) or docs/validation.md"


def _code(err: dict) -> str:
    t = err["type"]
    if t in ("greater_than", "greater_than_equal") and (err.get("ctx") or {}).get("gt", (err.get("ctx") or {}).get("ge")) in (0, 0.0):
        return "not-positive"
    if t in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return "out-of-range"
    if t.endswith("_type") or t.endswith("_parsing") or t in ("model_attributes_type", "is_instance_of"):
        return "wrong-type"
    return _CODES.get(t, t.replace("_", "-"))


def _inner_models(annotation) -> list[type[BaseModel]]:
    """Pydantic model classes reachable inside a type annotation (Optional, list, dict, Measure)."""
    out = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        out.append(annotation)
    for arg in typing.get_args(annotation):
        out.extend(_inner_models(arg))
    return out


def _fields_at(schema: type[BaseModel], path: tuple) -> set[str]:
    """Known field names of the model found at ``path`` below ``schema``."""
    models = [schema]
    for part in path:
        if isinstance(part, int):
            continue
        nxt = []
        for m in models:
            f = m.model_fields.get(part)
            if f is not None:
                nxt.extend(_inner_models(f.annotation))
        models = nxt or models
    return {name for m in models for name in m.model_fields}


def _filled() -> tuple:
    """``(FILLED, MISSING_HINT)`` of :mod:`kvreg.configfill`, imported only when a model entry lacks a key."""
    from kvreg.configfill import FILLED, MISSING_HINT

    return FILLED, MISSING_HINT


def _problems_from_validation(exc: ValidationError, doc: Document, schema: type[Entry]) -> list[Problem]:
    """One :class:`Problem` per pydantic error, placed at the offending key of ``doc``.

    A misspelt required key shows up twice in pydantic (the typo is unknown, the
    real key is missing); the two are reported as one unknown-key problem whose
    hint names the missing key.
    """
    problems: list[tuple[tuple, Problem]] = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith("function-"))))
        ctx = err.get("ctx") or {}
        if ctx.get("path"):
            loc = loc + tuple(int(p) if p.isdigit() else p for p in str(ctx["path"]).split("."))
        code = _code(err)
        if code == "unknown-key" and err["loc"] and (not loc or loc[-1] != err["loc"][-1]):
            loc = loc + (err["loc"][-1],)  # the unknown key itself, even when it looks like a union tag ("a[b]")
        key = ".".join(map(str, loc))
        line, col = doc.where(loc)
        msg = err["msg"].removeprefix("Value error, ")
        hint = ctx.get("hint", "")
        if code == "unknown-key":
            known = _fields_at(schema, loc[:-1])
            near = difflib.get_close_matches(str(loc[-1]), sorted(known), n=1, cutoff=0.5)
            msg = f"unknown key {loc[-1]!r}"
            hint = (f"did you mean {near[0]!r}? " if near else "") + f"known keys here: {', '.join(sorted(known))}"
        elif code == "missing-key" and loc and loc[-1] == "sources":
            code, msg = "missing-source", "the entry cites no source"
            hint = "add sources: [{url: ..., note: ...}]; every entry must say where its numbers come from"
        elif code == "too-few-items" and loc and loc[-1] == "sources":
            code, msg = "missing-source", "the entry's sources list is empty"
            hint = "add at least one source with a url or a title"
        elif code == "bad-id":
            msg = f"id {err.get('input')!r} is not a valid entry id"
            hint = "ids are lower-case letters, digits, dots and dashes, starting with a letter or digit"
        elif code == "bad-unit":
            msg = ctx.get("message", msg)
        elif code in ("wrong-type", "bad-choice", "not-positive", "out-of-range") and "input" in err:
            msg = f"{msg} (got {err['input']!r})"
        if code == "wrong-type" and not hint:
            hint = _type_hint(err["type"])
        if code == "missing-key" and schema.__name__ == "ModelEntry" and len(loc) == 1 and loc[0] in _filled()[0]:
            # a model with a shipped config has these filled from it (kvreg/configfill.py)
            hint = _filled()[1]
        problems.append((loc, Problem(doc.file_of(loc), line, col, key, code, msg, hint)))
    missing = {loc for loc, p in problems if p.code == "missing-key"}
    merged: set[tuple] = set()
    out = []
    for loc, p in problems:
        if p.code == "unknown-key":
            near = difflib.get_close_matches(str(loc[-1]), sorted(_fields_at(schema, loc[:-1])), n=1, cutoff=0.5)
            if near and loc[:-1] + (near[0],) in missing:
                merged.add(loc[:-1] + (near[0],))
                p = dataclasses.replace(p, hint=f"did you mean {near[0]!r}? it is required and missing here")
        out.append((loc, p))
    return [p for loc, p in out if not (p.code == "missing-key" and loc in merged)]


def discover(root: Path) -> list[tuple[Kind, Path]]:
    """Every entry file below ``root``, sorted by kind order then path."""
    found = []
    for kind in KINDS:
        folder = root / kind.folder
        if folder.is_dir():
            found.extend((kind, p) for p in sorted(folder.glob("*.y*ml")))
    return found


def _validate(kind: Kind, path: Path, display: str, doc: Document | None, problems: list[Problem]) -> Entry | None:
    """The validated entry of one parsed file, or None after appending its problems."""
    if doc is None:
        return None
    if not isinstance(doc.data, dict):
        problems.append(Problem(display, 1, 1, "", "wrong-type", "an entry must be a YAML mapping",
                                "start the file with id: " + path.stem))
        return None
    try:
        entry = kind.schema.model_validate(doc.data)
    except ValidationError as exc:
        problems.extend(_problems_from_validation(exc, doc, kind.schema))
        return None
    if entry.id != path.stem:
        line, col = doc.where(("id",))
        problems.append(Problem(display, line, col, "id", "id-file-mismatch",
                                f"id {entry.id!r} differs from the file name {path.stem!r}",
                                f"rename the file to {entry.id}.yaml or set id: {path.stem}"))
        return None
    return entry


def _cache_key(kind: Kind, path: Path, display: str, engines: list, fill_geometry: bool = True) -> str | None:
    """The validate-cache key of one entry file (kvreg/validate_cache.py): its kind, path and bytes, and for an
    engine release every engine file's (``extends:`` merges parents in), for a model its shipped config's when
    the geometry fill applies (else a marker: the same bytes read unfilled are another entry); None when the file
    is unreadable or too large (validation reports it)."""
    from kvreg.validate_cache import digest
    from kvreg.yamlsrc import MAX_BYTES

    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        data = path.read_bytes()
        if kind.name == "engine" and not engines:
            engines.append(digest(*(part for p in sorted(path.parent.glob("*.y*ml"))
                                    for part in (p.name, p.read_bytes()))))
    except OSError:
        return None
    if kind.name == "engine":
        return digest("entry", kind.name, display, data, engines[0])
    if kind.name == "model" and not fill_geometry:
        return digest("entry", kind.name, display, data, "unfilled")
    if kind.name == "model":  # geometry the entry omits comes from its shipped config (kvreg/configfill.py)
        from kvreg.configcheck import config_path

        try:
            cfg = config_path(path).read_bytes()
        except OSError:
            cfg = b""
        return digest("entry", kind.name, display, data, cfg)
    return digest("entry", kind.name, display, data)


def load_registry(root: Path | str = ".", cache=None, fill_geometry: bool = True) -> Registry:
    """Parse and validate every entry under ``root`` (a kvreg project directory).

    Runs the per-entry schema checks, then the cross-entry checks
    (``kvreg/checks/*.sql``) over the loaded tables.

    Args:
        root: the project directory.
        cache: a :class:`kvreg.validate_cache.ValidateCache` (None: none): entry files whose bytes it has seen
            validate are taken from it (document and entry, and a model's config.json check) instead of being
            parsed and validated again; the entries validated here are added to it (the caller saves it).
            The cross-entry checks always run.
        fill_geometry: fill the geometry a model entry omits from its shipped config (kvreg/configfill.py).
            False reads an omitted key as the registry did before the fill existed (unknown, or the schema's
            default): ``kvreg diff`` of a revision older than the fill (kvreg/diff/revisions.py
            ``fills_geometry``), whose entries omitted what they did not know.  The configs are still checked.

    Raises:
        KvregError: with all problems found, sorted by file and line.
    """
    root = Path(root)
    problems: list[Problem] = []
    entries: dict[str, dict[str, Loaded]] = {k.name: {} for k in KINDS}
    invalid: set[tuple[str, str]] = set()
    seen: dict[tuple[str, str], str] = {}
    engines_digest: list[str] = []
    from kvreg.configfill import fill_model
    from kvreg.extends import EngineParents

    parents = EngineParents(root, "registry/engines")
    readings: dict = {}  # each shipped config.json imported once: by the fill, reused by the config check
    for kind, path in discover(root):
        display = path.relative_to(root).as_posix()
        # Two files with one stem (m.yaml, m.yml) are one id twice, valid or not.
        first = seen.setdefault((kind.name, path.stem), display)
        key = _cache_key(kind, path, display, engines_digest, fill_geometry) if cache is not None and first == display else None
        hit = cache.get(key) if key is not None else None
        if hit is not None:  # validated before from these very bytes (and the same kvreg code)
            doc, entry = hit
            entries[kind.name][entry.id] = Loaded(kind.name, entry, doc)
            continue
        before = len(problems)
        doc, probs = load_document(path, display)
        problems.extend(probs)
        if first != display:
            line, col = doc.where(("id",)) if doc else (1, 1)
            problems.append(Problem(display, line, col, "id", "duplicate-id",
                                    f"{kind.name} id {path.stem!r} is already used by {first}",
                                    "ids must be unique within a kind"))
            continue
        if kind.name == "engine" and doc is not None:
            doc, probs = parents.resolve(doc, path.stem)  # extends: parent's data merged in first
            problems.extend(probs)
        if kind.name == "model" and doc is not None and fill_geometry:
            doc, probs = fill_model(doc, path, readings)  # geometry the entry omits: its shipped config's
            problems.extend(probs)
        entry = _validate(kind, path, display, doc, problems)
        if entry is None:
            invalid.add((kind.name, path.stem))
        else:
            entries[kind.name][entry.id] = Loaded(kind.name, entry, doc)
            if key is not None and len(problems) == before:
                cache.put(key, (doc, entry))
    registry = Registry(root, entries, invalid)
    from kvreg.checks import run_checks  # late: needs duckdb
    from kvreg.configcheck import check_registry

    # Geometry against each model's shipped config.json first: what agrees is provenance the
    # checks' tables record as read from that file.
    problems.extend(check_registry(registry, cache, readings))

    problems.extend(run_checks(registry))
    if problems:
        raise KvregError(problems)
    return registry
