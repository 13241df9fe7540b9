"""Read a YAML file into plain Python values plus the position of every key.

PyYAML's safe loader forgets where values came from and silently keeps the
last of two duplicate keys.  Here the composed node tree is walked by hand so
that each key path maps to its (line, col) and duplicates become problems.
"""

from __future__ import annotations

import dataclasses
import re
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
    # Key paths whose data another file gave (a model's geometry filled from its shipped config.json,
    # kvreg/configfill.py) → that file; their positions are in it.
    origins: dict[Path_, str] = dataclasses.field(default_factory=dict)

    def where(self, path: Path_) -> tuple[int, int]:
        """The position of ``path`` or of its nearest ancestor that has one."""
        path = tuple(path)
        while path and path not in self.positions:
            path = path[:-1]
        return self.positions.get(path, (1, 1))

    def file_of(self, path: Path_) -> str:
        """The file that holds ``path``: the file of its nearest ancestor in ``origins``, else this document's."""
        path = tuple(path)
        while path:
            if path in self.origins:
                return self.origins[path]
            path = path[:-1]
        return self.file


def _source_excerpt(text: str, line: int) -> str:
    """Up to three numbered source lines ending at ``line`` (1-based), dbt style."""
    lines = text.splitlines()
    lo = max(1, line - 2)
    out = [f"{n:>4} | {lines[n - 1]}" for n in range(lo, min(line, len(lines)) + 1)]
    return "\n".join(out)


MAX_BYTES = 2 * 2**20
"""Largest entry file read (2 MiB; the largest shipped entry is 7 KB): anything bigger is refused unread."""
MAX_NODES = 100_000
"""Most values one document may expand to (aliases included): a billion-laughs file stops here."""


class _Strict(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema implicit types instead of YAML 1.1's.

    YAML 1.1 reads ``yes``/``no``/``on``/``off`` as booleans, ``8_0`` as 80, ``1:20`` as 80 and
    ``012`` as 10 — silent wrong numbers in a registry.  Here a plain scalar is a bool only when
    ``true``/``false``, an int only when digits (or ``0x``/``0o``), a float only in decimal or
    exponent notation; anything else stays a string, and the schema then names it wrong-type.
    Dates (``2024-05-01``) keep their YAML meaning (sources' ``date``).
    """


_Strict.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
     "-+0123456789."),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:timestamp", r"^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?$", "0123456789"),
]:
    _Strict.add_implicit_resolver(_tag, re.compile(_regexp), list(_first))

class _StrictC(getattr(yaml, "CSafeLoader", _Strict)):
    """:class:`_Strict`'s rules on libyaml's C parser when PyYAML has it (≈ 3× faster composing)."""


_StrictC.yaml_implicit_resolvers = _Strict.yaml_implicit_resolvers
_INT = re.compile(r"^[-+]?[0-9]+$|^0o[0-7]+$|^0x[0-9a-fA-F]+$")
_FLOAT = _Strict.yaml_implicit_resolvers["."][0][1]
BIG = 2**53
"""Largest magnitude of a bare YAML number (exact in a float; 8 PiB as bytes)."""


class _Bad(Exception):
    """A value that cannot be read; carries the problem's code, message and hint."""

    def __init__(self, node, code: str, message: str, hint: str):
        super().__init__(message)
        self.node, self.code, self.message, self.hint = node, code, message, hint


def _scalar(node: yaml.ScalarNode):
    """The Python value of a scalar under the strict rules (see :class:`_Strict`)."""
    tag, v = node.tag, node.value
    if tag == "tag:yaml.org,2002:str":
        return v
    if tag == "tag:yaml.org,2002:null":
        if v.strip() in ("", "~", "null", "Null", "NULL"):
            return None
        raise _Bad(node, "bad-tagged-value", f"!!null {v!r} is not null", "write null, ~ or nothing")
    if tag == "tag:yaml.org,2002:bool":
        if v in ("true", "True", "TRUE", "false", "False", "FALSE"):
            return v.lower() == "true"
        raise _Bad(node, "bad-tagged-value", f"!!bool {v!r} is not true or false", "write true or false")
    if tag == "tag:yaml.org,2002:int":
        if not _INT.match(v):
            raise _Bad(node, "bad-tagged-value", f"{v!r} is not an integer",
                       "write digits only (no _, no sexagesimal 1:20), e.g. 8")
        x = int(v, 0) if v[:2] in ("0x", "0o") else int(v)
        if abs(x) > BIG:
            raise _Bad(node, "bad-number", f"{v} is too large to be a registry number (more than 2^53)",
                       "check the number of digits; write large quantities with a unit (80 GB)")
        return x
    if tag == "tag:yaml.org,2002:float":
        if not _FLOAT.match(v):
            raise _Bad(node, "bad-tagged-value", f"{v!r} is not a number", "write e.g. 0.9 or 70.6e9")
        x = float(v.lower().replace(".inf", "inf").replace(".nan", "nan"))
        if not (abs(x) <= BIG * 2**64):  # inf, nan and absurd magnitudes
            raise _Bad(node, "bad-number", f"{v} is not a finite number of plausible size",
                       "registry numbers are finite: write the measured or published value")
        return x
    if tag == "tag:yaml.org,2002:timestamp":
        try:
            return yaml.SafeLoader.construct_yaml_timestamp(_Strict(""), node)
        except (ValueError, TypeError, AttributeError, yaml.YAMLError):
            raise _Bad(node, "bad-tagged-value", f"{v!r} is not a date",
                       "write a date as YYYY-MM-DD, or quote it to keep it text") from None
    raise _Bad(node, "unknown-tag", f"the tag {tag!r} is not allowed in a registry entry",
               "remove the tag: entries hold plain mappings, lists, strings and numbers")


def _walk(node, path, positions, problems, file, budget, ancestors=()):
    budget[0] -= 1
    if budget[0] < 0:
        raise _Bad(node, "yaml-too-large", f"the document expands to more than {MAX_NODES:,} values",
                   "an alias (*name) repeated inside aliases multiplies the document; write the values out")
    if id(node) in ancestors:
        raise _Bad(node, "yaml-too-large", "an alias refers to a value that contains it (a cycle)",
                   "remove the recursive alias")
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise _Bad(node, "unknown-tag", f"the tag {node.tag!r} is not allowed on a mapping",
                       "remove the tag: entries hold plain mappings")
        out = {}
        inner = ancestors + (id(node),)
        for knode, vnode in node.value:
            if isinstance(knode, yaml.ScalarNode):
                key = _scalar(knode)
                key = knode.value if key is None else key
            else:
                raise _Bad(knode, "wrong-type", "a key must be a plain word, not a list or mapping",
                           "write key: value")
            if not isinstance(key, str):
                key = str(key)
            if key == "<<":
                raise _Bad(knode, "unknown-tag", "YAML merge keys (<<) are not allowed in a registry entry",
                           "write the keys out")
            kpath = path + (key,)
            if key in out:
                problems.append(Problem(
                    file, knode.start_mark.line + 1, knode.start_mark.column + 1, ".".join(map(str, kpath)),
                    "duplicate-key", f"key {key!r} appears twice in this mapping",
                    f"first at line {positions[kpath][0]}; YAML would silently keep only the last one"))
            out[key] = _walk(vnode, kpath, positions, problems, file, budget, inner)
            positions[kpath] = (knode.start_mark.line + 1, knode.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise _Bad(node, "unknown-tag", f"the tag {node.tag!r} is not allowed on a list",
                       "remove the tag: entries hold plain lists")
        inner = ancestors + (id(node),)
        return [_walk(v, path + (i,), positions, problems, file, budget, inner) for i, v in enumerate(node.value)]
    return _scalar(node)


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
        size = path.stat().st_size
        if size > MAX_BYTES:
            return None, [Problem(display, 1, 1, "", "yaml-too-large",
                                  f"the file is {size:,} bytes; entries are at most {MAX_BYTES:,}",
                                  "an entry holds facts and sources, not data dumps; keep excerpts short")]
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        return None, [Problem(display, line, 1, "", "bad-encoding", f"the file is not UTF-8 text: {exc.reason}",
                              "save the file as UTF-8")]
    except OSError as exc:
        return None, [Problem(display, 1, 1, "", "unreadable-file", f"cannot read the file: {exc.strerror or exc}",
                              "check the file's permissions, or that it is a file")]
    return parse_text(text, display)


def parse_text(text: str, display: str) -> tuple[Document | None, list[Problem]]:
    """Parse YAML ``text`` (see :func:`load_document`); ``display`` names it in problems."""
    try:
        node = yaml.compose(text, Loader=_StrictC)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reason = getattr(exc, "problem", None) or str(exc)
        return None, [Problem(display, line, col, "", "yaml-syntax", f"malformed YAML: {reason}",
                              "near line %d:\n%s" % (line, _source_excerpt(text, line)))]
    except RecursionError:
        return None, [Problem(display, 1, 1, "", "yaml-too-large", "the document nests too deeply",
                              "entries nest a few levels, not hundreds")]
    if node is None:
        return None, [Problem(display, 1, 1, "", "empty-file", "the file holds no YAML document",
                              "write an entry or delete the file")]
    positions: dict = {}
    problems: list[Problem] = []
    try:
        data = _walk(node, (), positions, problems, display, [MAX_NODES])
    except _Bad as bad:
        m = bad.node.start_mark
        return None, problems + [Problem(display, m.line + 1, m.column + 1, "", bad.code, bad.message, bad.hint)]
    except RecursionError:
        return None, [Problem(display, 1, 1, "", "yaml-too-large", "the document nests too deeply",
                              "entries nest a few levels, not hundreds")]
    return Document(display, data, positions), problems
