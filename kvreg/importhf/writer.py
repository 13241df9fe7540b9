"""Write an imported model entry as registry YAML: schema header, stable key order, atomic."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import yaml

from kvreg.problems import KvregError, Problem

SCHEMA_HEADER = "# yaml-language-server: $schema=../../kvreg/schemas/model.schema.json\n"


class _Dumper(yaml.SafeDumper):
    """Safe dumper that keeps short lists (shapes, index lists) on one line."""


def _list(dumper, data):
    flow = all(not isinstance(x, (dict, list)) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _dict(dumper, data):
    # State tensors and Measures read best as one line each.
    flow = set(data) <= {"role", "shape", "dtype", "split_axis"}
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


_Dumper.add_representer(list, _list)
_Dumper.add_representer(dict, _dict)


def render(entry: dict, comment: str | None = None) -> str:
    """The entry as YAML text, headed by the JSON-schema line and an optional comment block."""
    body = yaml.dump(entry, Dumper=_Dumper, sort_keys=False, width=110, allow_unicode=True)
    lines = [SCHEMA_HEADER]
    if comment:
        lines.extend(f"# {line}\n".replace("# \n", "#\n") for line in comment.splitlines())
    return "".join(lines) + body


def _same_hf_id(out_dir: Path, hf_id: str, entry_id: str) -> list[str]:
    """Other entries in ``out_dir`` that already claim ``hf_id`` (checks/030 would reject the pair)."""
    found = []
    for p in sorted(out_dir.glob("*.y*ml")):
        if p.stem == entry_id:
            continue
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and data.get("hf_id") == hf_id:
            found.append(p.name)
    return found


def write_entry(text: str, out_dir: Path, entry_id: str, force: bool = False, hf_id: str | None = None) -> Path:
    """Write ``text`` to ``out_dir/<entry_id>.yaml`` via a temp file and rename.

    Raises:
        KvregError: ``entry-exists`` when the file exists and ``force`` is false;
            ``duplicate-hf-id`` when another entry in ``out_dir`` has the same ``hf_id``.
    """
    out_dir = Path(out_dir)
    target = out_dir / f"{entry_id}.yaml"
    others = _same_hf_id(out_dir, hf_id, entry_id) if hf_id and out_dir.is_dir() else []
    if others:
        raise KvregError([Problem(target.as_posix(), 0, 0, "hf_id", "duplicate-hf-id",
                                  f"hf_id {hf_id!r} is already used by {', '.join(others)}",
                                  "one entry per checkpoint: pass --id with that entry's id and --force to "
                                  "replace it, or --stdout to compare")])
    if target.exists() and not force:
        raise KvregError([Problem(target.as_posix(), 0, 0, "id", "entry-exists",
                                  f"{target.as_posix()} already exists; not overwritten",
                                  "pass --force to replace it, --id to choose another id, or --stdout to compare")])
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{entry_id}.", suffix=".yaml.tmp", dir=out_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
