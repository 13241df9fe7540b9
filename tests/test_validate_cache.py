"""The validate cache (kvreg/validate_cache.py): an unchanged entry file is not validated again, a changed one
is, and a cache file that is corrupt, foreign or from other kvreg code is ignored, never trusted."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import pytest

from kvreg import validate_cache
from kvreg.problems import KvregError
from kvreg.registry import load_registry
from kvreg.validate_cache import MAGIC, ValidateCache, fingerprint
from tests.registry_factory import engine_entry, hardware_entry, write_project

ROOT = Path(__file__).resolve().parents[1]
GROUPS = [dict(kind="full", count=2, kv_heads=8, head_dim=128)]


def project(root: Path) -> Path:
    return write_project(root, models={m: {"layers": 2, "groups": GROUPS} for m in ("a", "b")},
                         hardware={"hw": hardware_entry("hw"), "hw2": hardware_entry("hw2")},
                         engines={"first-principles": engine_entry()})


def _entries(reg) -> dict:
    return {(kind, i): (item.entry, item.doc) for kind, d in reg.entries.items() for i, item in d.items()}


def test_the_shipped_registry_from_the_cache_is_the_validated_one(tmp_path):
    """Every shipped entry (engines with extends, models with a config.json) comes back from the cache equal
    to its validation (entry, document with positions, config check) and builds the same base tables."""
    from kvreg.tables import frames

    cold = ValidateCache(tmp_path)
    first = load_registry(ROOT, cold)
    assert cold.hits == 0 and cold.misses > 200
    cold.save()
    warm = ValidateCache(tmp_path)
    second = load_registry(ROOT, warm)
    assert warm.misses == 0 and warm.hits == cold.misses  # every entry and every config check
    assert _entries(second) == _entries(first)
    assert second.config_checked == first.config_checked and first.config_checked
    a, b = frames(first), frames(second)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name


def test_an_edited_entry_is_validated_again(tmp_path):
    root = project(tmp_path / "p")
    cache = ValidateCache(tmp_path / "cache")
    load_registry(root, cache)
    path = root / "hardware" / "hw.yaml"
    path.write_text(path.read_text().replace("79.6 GiB", "79.0 GiB"))
    hits = cache.hits
    reg = load_registry(root, cache)
    assert cache.misses == 5 + 1 and cache.hits == hits + 4  # only hw.yaml missed
    assert reg.entries["hardware"]["hw"].entry.memory_usable.value == pytest.approx(79.0 * 2**30)
    path.write_text(path.read_text().replace("79.0 GiB", "-1 GiB"))
    with pytest.raises(KvregError) as err:   # no cached entry stands in for an invalid file
        load_registry(root, cache)
    assert any(p.file == "hardware/hw.yaml" for p in err.value.problems)


def test_an_engine_is_validated_again_when_any_engine_file_changes(tmp_path):
    """``extends:`` merges a parent in, so an engine's key covers every engine file."""
    root = project(tmp_path / "p")
    cache = ValidateCache(tmp_path / "cache")
    load_registry(root, cache)
    (root / "registry/engines/other.yaml").write_text("id: other\nextends: first-principles\nname: other\n"
                                                       "releases: '1'\n")
    before = cache.misses
    try:
        load_registry(root, cache)
    except KvregError:
        pass  # whatever the fixture's engine makes of it: the point is what was looked up
    assert cache.misses == before + 2  # both engine files, not the models or accelerators


def test_two_sides_share_the_unchanged_entries(tmp_path):
    """What kvreg diff does: BASE and HEAD through one cache; HEAD misses only its edited file."""
    base, head = project(tmp_path / "base"), project(tmp_path / "head")
    path = head / "registry/models/b.yaml"
    path.write_text(path.read_text().replace("hidden_size: 4096", "hidden_size: 8192"))
    cache = ValidateCache(tmp_path / "cache")
    load_registry(base, cache)
    misses = cache.misses
    reg = load_registry(head, cache)
    assert cache.misses == misses + 1 and reg.entries["model"]["b"].entry.hidden_size == 8192
    assert reg.entries["model"]["a"].entry is not load_registry(base, cache).entries["model"]["a"].entry


def _write(path: Path, payload: bytes, fp: str | None = None) -> None:
    path.write_bytes(MAGIC + (fp or fingerprint()).encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode()
                     + b"\n" + payload)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "digest", "fingerprint"])
def test_a_corrupt_or_foreign_cache_file_is_ignored(tmp_path, damage):
    root = project(tmp_path / "p")
    cache = ValidateCache(tmp_path / "cache")
    load_registry(root, cache)
    cache.save()
    path = cache.path
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x00not a cache\n" * 10)
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "digest":
        path.write_bytes(raw[:-10] + bytes(10))
    else:  # a cache written by other kvreg code: same file name, another fingerprint inside
        _write(path, raw.split(b"\n", 3)[3], fp="0" * 64)
    again = ValidateCache(tmp_path / "cache")
    assert again.items == {}
    reg = load_registry(root, again)
    assert again.hits == 0 and set(reg.entries["model"]) == {"a", "b"}
    again.save()
    assert len(ValidateCache(tmp_path / "cache").items) == again.misses  # rewritten whole


def test_a_cache_file_resolves_no_foreign_global(tmp_path):
    """A well-formed file whose pickle calls something (here os.system) is refused, not run."""
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            import os
            return os.system, (f"touch {marker}",)

    folder = tmp_path / "cache"
    folder.mkdir()
    key_blob = pickle.dumps({"k": pickle.dumps(Evil())})
    _write(folder / ValidateCache(folder).path.name, key_blob)
    cache = ValidateCache(folder)
    assert set(cache.items) == {"k"}          # the outer file is plain str → bytes
    assert cache.get("k") is None and not marker.exists()
    _write(folder / ValidateCache(folder).path.name, pickle.dumps(Evil()))
    assert ValidateCache(folder).items == {} and not marker.exists()


def test_an_unwritable_cache_folder_is_no_error(tmp_path, monkeypatch):
    root = project(tmp_path / "p")
    (root / ".kvreg").write_text("not a folder")
    cache = ValidateCache.for_project(root)
    load_registry(root, cache)
    cache.save()   # .kvreg is a file: nothing saved, nothing raised
    assert (root / ".kvreg").read_text() == "not a folder"
    monkeypatch.setenv("KVREG_VALIDATE_CACHE", "0")
    off = ValidateCache.for_project(tmp_path / "q")
    off.put("k", 1)
    off.save()
    assert off.get("k") is None and not (tmp_path / "q").exists()


def test_the_fingerprint_covers_kvregs_own_code(monkeypatch):
    """Editing any kvreg source file changes the fingerprint, so its cache file is another one."""
    validate_cache.fingerprint.cache_clear()   # of the files as they are now, not when the session began
    before = fingerprint()
    validate_cache.fingerprint.cache_clear()
    real = Path.read_bytes

    def edited(self):
        data = real(self)
        return data + b"# edited" if self.name == "registry.py" and self.parent.name == "kvreg" else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    try:
        assert fingerprint() != before
    finally:
        monkeypatch.undo()
        validate_cache.fingerprint.cache_clear()
    assert fingerprint() == before
