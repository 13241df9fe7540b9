"""Validated entries cached by content hash, so an unchanged entry file is not parsed and validated again.

:func:`kvreg.registry.load_registry` takes a :class:`ValidateCache`: an entry file whose bytes are unchanged
(and, for an engine release, the bytes of every engine file, since ``extends:`` merges parents in) comes back
as the (document, entry) it validated to, without YAML parsing or pydantic; a model's shipped ``config.json``
check (kvreg/configcheck.py) is cached the same way, keyed by both files' bytes.  Only entries that validated
without a problem are stored; cross-entry checks (kvreg/checks/) always run.  ``kvreg diff`` gives both sides
one cache, so the entries BASE and HEAD share are validated once (and not at all on a second run).

The cache is one file under the project's ``.kvreg/`` (gitignored), ``validate-cache-<fingerprint>.pickle``,
written atomically (temporary file, then rename).  The fingerprint hashes the running kvreg's own source
files and the versions of Python, pydantic and PyYAML, so a cache written by any other kvreg code is never
read (a file with another fingerprint is removed on the next save).  The file is read with an unpickler that
resolves no global but the entry classes (kvreg's pydantic models, enums and dataclasses) and plain
containers, and carries a SHA-256 of its payload: a corrupt, truncated or foreign file is ignored (an empty
cache), never an error.  ``KVREG_VALIDATE_CACHE=0`` turns it off.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import io
import os
import pickle
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel

MAGIC = b"kvreg-validate-cache 1\n"
PREFIX = "validate-cache-"
MAX_ITEMS = 4096
"""Most entries kept in the file; beyond it, those not used by the run that saves are dropped."""


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """SHA-256 (hex) of the running kvreg's source files (``kvreg/**/*.py``, path and bytes) and of the kvreg,
    Python, pydantic and PyYAML versions: the code that turns an entry file into a validated entry (random per
    process when no source file is found)."""
    import importlib.metadata

    import pydantic
    import yaml

    try:
        version = importlib.metadata.version("kvreg")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    h = hashlib.sha256()
    h.update(f"{version}\0{sys.version}\0{pydantic.VERSION}\0{yaml.__version__}\0".encode())
    pkg = Path(__file__).resolve().parent
    sources = sorted(pkg.rglob("*.py"))
    if not sources:  # installed without sources: nothing pins the code, so no run trusts another's cache
        h.update(os.urandom(16))
    for path in sources:
        h.update(path.relative_to(pkg).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def digest(*parts: bytes | str) -> str:
    """SHA-256 (hex) of ``parts``, each length-prefixed (so no two part lists collide)."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _model_classes() -> dict[str, type[BaseModel]]:
    """Token → pydantic model class for every model reachable from the entry schemas (``registry.KINDS``).

    Parametrized generics (``Measure[int]``) are not importable by name, so each class is named by the first
    schema field path that reaches it (a deterministic walk; the fingerprint pins the code it walks).
    """
    from kvreg.registry import KINDS, _inner_models as inner

    out: dict[str, type[BaseModel]] = {}
    seen: set[type] = set()

    def walk(cls: type[BaseModel], token: str) -> None:
        if cls in seen:
            return
        seen.add(cls)
        out[token] = cls
        for name, field in cls.model_fields.items():
            for i, sub in enumerate(inner(field.annotation)):
                walk(sub, f"{token}.{name}#{i}")

    for kind in KINDS:
        walk(kind.schema, f"{kind.schema.__module__}:{kind.schema.__qualname__}")
    return out


@functools.lru_cache(maxsize=1)
def _model_tokens() -> dict[type, str]:
    return {cls: token for token, cls in _model_classes().items()}


def _token(cls: type) -> str:
    """How a pickled model names its class: ``module:qualname`` when importable, else its schema path."""
    mod = sys.modules.get(cls.__module__)
    if cls.__module__.startswith("kvreg.") and getattr(mod, cls.__qualname__, None) is cls:
        return f"{cls.__module__}:{cls.__qualname__}"
    return _model_tokens()[cls]  # KeyError: not an entry class (the value is then not cached)


def _model_class(token: str) -> type[BaseModel]:
    found = _model_classes().get(token)
    if found is None:
        module, _, name = token.partition(":")
        obj = getattr(sys.modules.get(module), name, None) if module.startswith("kvreg.") else None
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            found = obj
    if found is None:
        raise pickle.UnpicklingError(f"validate cache: no entry class {token!r}")
    return found


def _rebuild(token: str, state: dict) -> BaseModel:
    """A pydantic model instance from its pickled state (the unpickler's one constructor)."""
    cls = _model_class(token)
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, BaseModel):
            return _rebuild, (_token(type(obj)), obj.__getstate__())
        return NotImplemented


_SAFE_GLOBALS = {("builtins", n) for n in ("set", "frozenset", "dict", "list", "tuple", "bytes", "bytearray",
                                           "complex", "int", "float", "str", "bool", "slice", "range")}
_SAFE_GLOBALS |= {("datetime", n) for n in ("date", "datetime", "time", "timedelta", "timezone")}
_SAFE_GLOBALS |= {("decimal", "Decimal"), ("pathlib", "PurePosixPath"), ("pathlib", "PosixPath")}


class _Unpickler(pickle.Unpickler):
    """Resolves only :func:`_rebuild`, kvreg's enum and dataclass types, and plain value types."""

    def find_class(self, module: str, name: str):
        if (module, name) == (__name__, "_rebuild"):
            return _rebuild
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        if module.startswith("kvreg.") and module in sys.modules:
            obj = getattr(sys.modules[module], name, None)
            if isinstance(obj, type) and (issubclass(obj, enum.Enum) or dataclasses.is_dataclass(obj)):
                return obj
        raise pickle.UnpicklingError(f"validate cache: {module}.{name} is not allowed")


def _dumps(value) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, protocol=5).dump(value)
    return buf.getvalue()


def _loads(blob: bytes):
    return _Unpickler(io.BytesIO(blob)).load()


class ValidateCache:
    """Validated values by content key, loaded from and saved to one file under ``folder``.

    ``get`` returns a fresh copy on every call (each side of a diff gets its own objects); ``put`` stores a
    value (silently skipped when it cannot be pickled); ``save`` writes the file atomically when something
    was added.  A disabled cache (``folder`` None) stores nothing.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.items: dict[str, bytes] = {}
        self.used: set[str] = set()
        self.added = False
        self.hits = self.misses = 0
        if folder is not None:
            self.items = self._read(self.path)

    @classmethod
    def for_project(cls, root: Path | str) -> ValidateCache:
        """The cache of the project at ``root`` (``root/.kvreg/``), disabled by ``KVREG_VALIDATE_CACHE=0``."""
        if os.environ.get("KVREG_VALIDATE_CACHE", "1") == "0":
            return cls(None)
        return cls(Path(root) / ".kvreg")

    @property
    def path(self) -> Path | None:
        return None if self.folder is None else self.folder / f"{PREFIX}{fingerprint()[:16]}.pickle"

    @staticmethod
    def _read(path: Path) -> dict[str, bytes]:
        """The file's items, or {} when it is missing, unreadable, corrupt or of another fingerprint."""
        try:
            raw = path.read_bytes()
            head, fp, sha, payload = raw.split(b"\n", 3)
            if head + b"\n" != MAGIC or fp.decode() != fingerprint() or hashlib.sha256(payload).hexdigest() != sha.decode():
                return {}
            items = _loads(payload)
            if isinstance(items, dict) and all(isinstance(k, str) and isinstance(v, bytes) for k, v in items.items()):
                return items
        except Exception:  # a cache never fails the command: anything unreadable is a miss
            pass
        return {}

    def get(self, key: str):
        """The value stored under ``key``, or None."""
        blob = self.items.get(key)
        if blob is not None:
            try:
                value = _loads(blob)
            except Exception:
                value = None
            if value is not None:
                self.used.add(key)
                self.hits += 1
                return value
            del self.items[key]
        self.misses += 1
        return None

    def put(self, key: str, value) -> None:
        """Store ``value`` under ``key`` (nothing when disabled or when it cannot be pickled)."""
        if self.folder is None:
            return
        try:
            blob = _dumps(value)
        except Exception:
            return
        self.items[key] = blob
        self.used.add(key)
        self.added = True

    def save(self) -> None:
        """Write the file atomically when something was added; remove files of other fingerprints.

        Never raises: a folder that cannot be written (read-only, ``.kvreg`` a file) leaves the cache unsaved.
        """
        if self.folder is None or not self.added:
            return
        items = self.items
        if len(items) > MAX_ITEMS:
            items = {k: v for k, v in items.items() if k in self.used}
        payload = pickle.dumps(items, protocol=5)
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{PREFIX}", dir=self.folder)
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + fingerprint().encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode()
                        + b"\n" + payload)
            os.replace(tmp, self.path)
            tmp = None
            self.added = False
            for other in self.folder.glob(f"{PREFIX}*.pickle"):
                if other != self.path:
                    other.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
