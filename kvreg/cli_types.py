"""The one numeric option type of the command line: a bounded number whose usage error names the accepted range.

click's ``IntRange`` says ``'1e20' is not a valid integer range`` for ``--users 1e20`` (no range, an odd noun) and
``FloatRange`` lets NaN through (every comparison with NaN is false), so a NaN reached the library and came back as
a message naming no option.  :class:`Bounded` reads the value once (scientific notation included: ``1e3`` users is
1,000), refuses NaN/infinity and out-of-range values, and says in one line which values the option takes; click
adds the option's name (``Invalid value for '--users': ...``) and exits 2.  The bounds themselves are the options'
own (the commands in kvreg/cli.py state them), not this module's.
"""

from __future__ import annotations

import math

import click


def _shown(x: float) -> str:
    """A bound as a reader writes it: whole numbers with thousands separators, others in short %g form."""
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


class Bounded(click.ParamType):
    """A number in a stated range, as one click option type.

    ``Bounded(int, 1, 10**9)`` takes whole numbers 1 … 10^9 (``1e3`` is read as 1000; ``2.5`` is refused);
    ``Bounded(float, 0, 1, low_open=True)`` takes 0 < x ≤ 1.  ``what`` names the quantity and its unit in the
    message (``"concurrent requests"``, ``"ms"``).  Returns ``int`` or ``float``; raises click's usage error
    (exit 2) naming the option, the value given and the accepted range — never a traceback, never a silent clamp.
    """

    def __init__(self, kind: type, low: float, high: float, *, low_open: bool = False, what: str = ""):
        self.kind, self.low, self.high, self.low_open, self.what = kind, low, high, low_open, what
        self.name = "integer" if kind is int else "number"

    def range_text(self) -> str:
        """The accepted values in words, e.g. ``whole numbers from 1 to 1,000,000,000 (concurrent requests)``."""
        noun = "whole numbers" if self.kind is int else "numbers"
        low = f"above {_shown(self.low)}" if self.low_open else f"from {_shown(self.low)}"
        unit = f" ({self.what})" if self.what else ""
        return f"{noun} {low} to {_shown(self.high)}{unit}"

    def get_metavar(self, param, ctx=None) -> str:  # shown in --help: the range, not a bare INTEGER
        return f"[{'>' if self.low_open else ''}{_shown(self.low)}..{_shown(self.high)}]"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            x = value
        else:
            text = str(value).strip().replace("_", "")
            try:
                x = int(text) if self.kind is int and text.lstrip("+-").isdigit() else float(text)
            except ValueError:
                self.fail(f"{value!r} is not a number; it takes {self.range_text()}", param, ctx)
        if isinstance(x, float) and not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number; it takes {self.range_text()}", param, ctx)
        if self.kind is int and isinstance(x, float):
            if not x.is_integer():
                self.fail(f"{value!r} is not a whole number; it takes {self.range_text()}", param, ctx)
            x = int(x)
        if x < self.low or (self.low_open and x == self.low) or x > self.high:
            self.fail(f"{value!r} is out of range; it takes {self.range_text()}", param, ctx)
        return self.kind(x)
