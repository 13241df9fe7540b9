"""The one problem record and the one error type that carries a list of them.

Every complaint kvreg makes about input (YAML syntax, schema, cross-entry
checks, report definitions) is a :class:`Problem` with a location, a key path,
a stable code, a message and a hint.  All problems are collected and reported
at once, sorted by file and line (CONVENTIONS.md, kvreg habit 4).
"""

from __future__ import annotations

import dataclasses
import json

from kvreg.formats import counted


@dataclasses.dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one input file.

    ``line`` and ``col`` are 1-based (0 when unknown); ``key`` is the dotted
    key path inside the file (``layer_groups.1.window``); ``code`` is stable
    and documented in docs/validation.md.
    """

    file: str
    line: int
    col: int
    key: str
    code: str
    message: str
    hint: str = ""
    # another file the problem is about, as problems name files (check 206: the first copy of a duplicated
    # startup), so a caller (ingest-log) reads it as data instead of parsing the message; "" when none
    related: str = dataclasses.field(default="", compare=False)

    def render(self) -> str:
        """``file:line:col: code: key: message (hint: ...)``, one line, for terminals."""
        # a problem with no position (an environment variable, a whole file) shows no ":0:0"
        where = self.file if not self.line else f"{self.file}:{self.line}:{self.col}"
        key = f" {self.key}:" if self.key else ""
        hint = f"\n    hint: {self.hint}" if self.hint else ""
        return f"{where}: {self.code}:{key} {self.message}{hint}"

    def github(self) -> str:
        """A GitHub Actions annotation line (``::error file=…,line=…::``).

        Newlines and ``%`` are escaped as the workflow-command syntax requires
        (``%0A``, ``%25``), and ``:``/``,`` in property values too, so a multi-line
        hint (a YAML excerpt) stays one annotation.
        """
        msg = f"{self.code}: {self.key}: {self.message}" + (f" (hint: {self.hint})" if self.hint else "")
        return (f"::error file={_escape(self.file, True)},line={self.line},col={self.col},"
                f"title={_escape('kvreg ' + self.code, True)}::{_escape(msg)}")

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _escape(text: str, prop: bool = False) -> str:
    """Escape a GitHub workflow-command message (or, with ``prop``, a property value)."""
    out = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return out.replace(":", "%3A").replace(",", "%2C") if prop else out


class KvregError(Exception):
    """Raised with every problem found; nothing is written when it is raised."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems))
        super().__init__(counted(len(self.problems), "problem"))

    def render(self, fmt: str = "text") -> str:
        """Render all problems as ``text`` (one block each), ``github`` or ``json``."""
        if fmt == "json":
            return json.dumps([p.as_dict() for p in self.problems], indent=2)
        if fmt == "github":
            return "\n".join(p.github() for p in self.problems)
        lines = [p.render() for p in self.problems]
        lines.append(f"{counted(len(self.problems), 'problem')} found.")
        return "\n".join(lines)
