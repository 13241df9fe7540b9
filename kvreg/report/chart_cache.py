"""Report charts kept between runs: each chart's SVG in ``PROJECT/.kvreg/charts/``, keyed by what draws it.

A chart is a pure function of its kind, its rows and arguments, the charts code and matplotlib (charts.py: fixed
rcParams, ``svg.hashsalt``, no date), so a second report of an unchanged registry draws nothing: the Q4 2026 report's
31 charts are ~2.2 s CPU of drawing plus ~0.9 s of starting a worker and importing matplotlib (benchmarks/README.md,
pdf10).  The key is the SHA-256 of the rows' ``repr`` (exact for the ints, floats, strings and None the queries
return), the chart kind and arguments, charts.py's source and matplotlib's version; a changed row, style, layout
constant or library draws the chart again.  Files are written atomically (temp file, then rename) and a read that
fails is a miss, so a corrupt or half-written file is never served; a chart that came out empty (None) is an empty
file.  The folder is pruned to the :data:`KEEP` most recently used files.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

KEEP = 400  # charts kept: ~25 kB each (10 MB); a report of the shipped registry draws 31
_FINGERPRINT: str | None = None


def _fingerprint() -> str:
    """charts.py's source and matplotlib's installed version (read from its metadata: no import)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        from importlib.metadata import version

        from kvreg.report import charts

        h = hashlib.sha256(Path(charts.__file__).read_bytes())
        h.update(version("matplotlib").encode())
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


class ChartCache:
    """SVG strings by chart key in one folder.

    Args:
        folder: where the files live (created on first write).
    """

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.written = 0

    @classmethod
    def for_project(cls, project: Path | str | None) -> ChartCache | None:
        """The cache in ``PROJECT/.kvreg/charts``, or None when there is no project or the folder cannot be written
        (a read-only checkout draws every chart, as before)."""
        from kvreg.folders import cache_folder

        folder = cache_folder(project, "charts")
        return None if folder is None else cls(folder)

    @staticmethod
    def key(kind: str, fields: tuple, rows: list, args: tuple) -> str:
        """The hex SHA-256 naming chart ``kind`` drawn from ``rows`` (tuples of the ``fields``) and ``args``."""
        h = hashlib.sha256(_fingerprint().encode())
        h.update(repr((kind, tuple(fields), [tuple(r) for r in rows], args)).encode())
        return h.hexdigest()

    def get(self, key: str) -> tuple[bool, str | None]:
        """``(True, SVG or None)`` for a kept chart (its use recorded for pruning), ``(False, None)`` for a miss."""
        path = self.folder / f"{key}.svg"
        try:
            text = path.read_text(encoding="utf-8")
            os.utime(path)
        except (OSError, UnicodeDecodeError):
            return False, None
        if text and not (text.startswith("<svg") and text.rstrip().endswith("</svg>")):
            return False, None   # not a whole chart: drawn again (and rewritten)
        return True, text or None

    def put(self, key: str, svg: str | None) -> None:
        """Keep ``svg`` (None: an empty file) under ``key``; a failed write only means the chart is drawn next time."""
        try:
            fd, tmp = tempfile.mkstemp(prefix=".chart.", suffix=".tmp", dir=self.folder)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(svg or "")
            os.replace(tmp, self.folder / f"{key}.svg")
            self.written += 1
        except OSError:
            return

    def holds_any(self) -> bool:
        """Whether any chart is kept (a first run's cache holds none: every chart will be drawn)."""
        try:
            return any(p.suffix == ".svg" for p in self.folder.iterdir())
        except OSError:
            return False

    def prune(self, keep: int = KEEP) -> None:
        """Remove all but the ``keep`` most recently used charts (and any temp file a killed run left)."""
        try:
            files = [(p.stat().st_mtime, p) for p in self.folder.iterdir() if p.suffix in (".svg", ".tmp")]
        except OSError:
            return
        files.sort(reverse=True)
        for _, p in files[keep:]:
            try:
                p.unlink()
            except OSError:
                pass
