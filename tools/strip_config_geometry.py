"""By hand: remove from each model entry the geometry its shipped config.json gives (issue 14 item 1).

``python tools/strip_config_geometry.py [--check] [ENTRY.yaml ...]`` (default: every
``registry/models/*.yaml`` with a ``<id>.config.json`` beside it).  A top-level geometry key
(kvreg/configfill.py ``FILLED``: layers, hidden_size, vocab_size, attention_heads, native_context,
moe, layer_groups) is removed when the entry validated without it (the key then filled from the
config, kvreg/configfill.py) is equal to the entry validated with it, field for field
(``model_dump``, and the same stated numbers), so a grouping, a note, a variant or an own source the importer does not give keeps
the key.  The removal is line-based: the key's line and the lines under it up to the next line that
starts at column 0; every other line (comments, sources, notes) stays byte for byte.  Each stripped
file is loaded again and must validate to the very entry the full one did, else it is left alone.
``--check`` writes nothing and exits 1 when some entry would shrink.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvreg.configcheck import config_path  # noqa: E402
from kvreg.configfill import FILLED, fill_model  # noqa: E402
from kvreg.provenance import field_facts  # noqa: E402
from kvreg.schema.model import ModelEntry  # noqa: E402
from kvreg.yamlsrc import load_document  # noqa: E402


def _entry(path: Path, text: str | None = None):
    """The validated entry of ``path`` (or of ``text`` read as that file), filled from its config."""
    if text is not None:
        tmp = path.with_name(f".{path.stem}.strip-tmp.yaml")
        tmp.write_text(text, encoding="utf-8")
        try:
            doc, probs = load_document(tmp, path.as_posix())
        finally:
            tmp.unlink()
    else:
        doc, probs = load_document(path, path.as_posix())
    if probs or doc is None:
        return None
    doc, _ = fill_model(doc, path)
    try:
        return ModelEntry.model_validate(doc.data)
    except Exception:  # noqa: BLE001  (an entry that does not validate is not stripped)
        return None


def _same(a, b) -> bool:
    """Equal field for field, and stating the same numbers (a schema default is not a stated number)."""
    return (a.model_dump() == b.model_dump()
            and [(f.path, f.value) for f in field_facts(a)] == [(f.path, f.value) for f in field_facts(b)])


def remove_keys(text: str, keys: set[str]) -> str:
    """``text`` without the top-level ``keys``: each key's line and the indented lines under it."""
    out, dropping = [], False
    for line in text.splitlines(keepends=True):
        top = line[:1] not in ("", " ", "\t", "\n", "\r", "#", "-")
        if top:
            dropping = line.split(":", 1)[0].strip() in keys
        elif line[:1] == "#":
            dropping = False  # a full-line comment at column 0 belongs to what follows
        if not dropping:
            out.append(line)
    return "".join(out)


def strip(path: Path) -> tuple[str, list[str]] | None:
    """The stripped text of one entry and the keys removed, or None when nothing can go."""
    full = _entry(path)
    if full is None:
        return None
    doc, _ = load_document(path, path.as_posix())
    text = path.read_text(encoding="utf-8")
    gone = []
    for key in FILLED:
        if key not in doc.data:
            continue
        trial = _entry(path, remove_keys(text, set(gone) | {key}))
        if trial is not None and _same(trial, full):
            gone.append(key)
    if not gone:
        return None
    new = remove_keys(text, set(gone))
    again = _entry(path, new)
    if again is None or not _same(again, full):
        return None
    return new, gone


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or [
        p for p in sorted((ROOT / "registry/models").glob("*.yaml")) if config_path(p).exists()]
    shrunk = 0
    for p in paths:
        res = strip(p)
        if res is None:
            continue
        shrunk += 1
        new, gone = res
        print(f"{p.name}: {', '.join(gone)}")
        if not check:
            p.write_text(new, encoding="utf-8")
    print(f"{shrunk} of {len(paths)} entries {'would shrink' if check else 'stripped'}")
    return 1 if check and shrunk else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
