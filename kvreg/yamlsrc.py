"""Read a YAML file into plain Python values plus the position of every key.

PyYAML's safe loader forgets where values came from and silently keeps the
last of two duplicate keys.  Here the composed node tree is walked by hand so
that each key path maps to its (line, col) and duplicates become problems.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from kvreg.problems import Problem

Path_ = tuple  # a key path: tuple of str keys and int list indices


@dataclasses.dataclass
class Document:
    """One parsed YAML file: its data and where each key path starts (1-based)."""

    file: str
    data: object
    positions: dict[Path_, tuple[int, int]]

    def where(self, path: Path_) -> tuple[int, int]:
        """The position of ``path`` or of its nearest ancestor that has one."""
        path = tuple(path)
        while path and path not in self.positions:
            path = path[:-1]
        return self.positions.get(path, (1, 1))


def _source_excerpt(text: str, line: int) -> str:
    """Up to three numbered source lines ending at ``line`` (1-based), dbt style."""
    lines = text.splitlines()
    lo = max(1, line - 2)
    out = [f"{n:>4} | {lines[n - 1]}" for n in range(lo, min(line, len(lines)) + 1)]
    return "\n".join(out)


def _walk(node, path, positions, problems, file):
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for knode, vnode in node.value:
            key = yaml.safe_load(yaml.serialize(knode)) if not isinstance(knode, yaml.ScalarNode) else knode.value
            if not isinstance(key, str):
                key = str(key)
            kpath = path + (key,)
            if key in out:
                problems.append(Problem(
                    file, knode.start_mark.line + 1, knode.start_mark.column + 1, ".".join(map(str, kpath)),
                    "duplicate-key", f"key {key!r} appears twice in this mapping",
                    f"first at line {positions[kpath][0]}; YAML would silently keep only the last one"))
            out[key] = _walk(vnode, kpath, positions, problems, file)
            positions[kpath] = (knode.start_mark.line + 1, knode.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(v, path + (i,), positions, problems, file) for i, v in enumerate(node.value)]
    # Scalars: let the safe constructor resolve types (int, float, bool, null, str).
    return yaml.safe_load(yaml.serialize(node))


def load_document(path: Path, display: str) -> tuple[Document | None, list[Problem]]:
    """Parse one YAML file.

    Args:
        path: file to read.
        display: the path to print in problems (relative to the project).

    Returns:
        (document, problems).  The document is None when the file is not valid
        YAML; the problem then shows the offending line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        return None, [Problem(display, line, 1, "", "bad-encoding", f"the file is not UTF-8 text: {exc.reason}",
                              "save the file as UTF-8")]
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reason = getattr(exc, "problem", None) or str(exc)
        return None, [Problem(display, line, col, "", "yaml-syntax", f"malformed YAML: {reason}",
                              "near line %d:\n%s" % (line, _source_excerpt(text, line)))]
    if node is None:
        return None, [Problem(display, 1, 1, "", "empty-file", "the file holds no YAML document",
                              "write an entry or delete the file")]
    positions: dict = {}
    problems: list[Problem] = []
    data = _walk(node, (), positions, problems, display)
    return Document(display, data, positions), problems
