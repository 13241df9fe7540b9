"""Named number formats, defined once for the CLI and the Jinja templates.

Binary sizes always carry KiB/MiB/GiB (2^10, 2^20, 2^30 bytes); decimal sizes
carry GB (10^9 bytes).  No unnamed unit is ever printed.
"""

from __future__ import annotations

import math

_BINARY = [("B", 1), ("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30), ("TiB", 2**40)]


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x - round(x)) < 1e-9 else f"{x:,.2f}"


def bytes_binary(n: float | None) -> str:
    """Bytes in the smallest binary unit that keeps the figure under 10,000: ``2,080 MiB``, ``30 GiB``."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "n/a"
    for unit, size in _BINARY:
        if abs(n) / size < 10_000 or unit == "TiB":
            return f"{_num(n / size)} {unit}"
    raise AssertionError("unreachable")


def gib(n: float | None) -> str:
    """Bytes as GiB with two decimals: ``79.60 GiB``."""
    return "n/a" if n is None else f"{n / 2**30:,.2f} GiB"


def mib(n: float | None) -> str:
    """Bytes as whole MiB: ``2,080 MiB``."""
    return "n/a" if n is None else f"{n / 2**20:,.0f} MiB"


def gb(n: float | None) -> str:
    """Bytes as decimal GB with two decimals: ``54.00 GB``."""
    return "n/a" if n is None else f"{n / 1e9:,.2f} GB"


def tokens(n: float | None) -> str:
    """A token count with thousands separators: ``32,768 tokens``, ``1 token``."""
    return "n/a" if n is None else counted(n, "token")


def count(n: float | None) -> str:
    """A whole count with thousands separators."""
    return "n/a" if n is None else f"{int(n):,}"


def counted(n: float | None, noun: str, nouns: str | None = None) -> str:
    """A whole count and its noun, singular for exactly one: ``1 user``, ``200 users``, ``1,024 sequences``.

    ``nouns`` is the plural where it is not ``noun + "s"`` (``counted(2, "replica of", "replicas of")``);
    None counts as ``n/a`` with the plural.  The one place CLI text and templates say "1 user", not "1 users".
    """
    return f"{'n/a' if n is None else f'{int(n):,}'} {noun_for(n, noun, nouns)}"


def noun_for(n: float | None, noun: str, nouns: str | None = None) -> str:
    """The noun alone, singular for exactly one: ``noun_for(1, "format")`` is ``format``, 2 gives ``formats``.

    For text that names the items rather than counting them ("unknown formats a, b"); ``nouns`` and None as
    in :func:`counted`, which prints its noun through this.
    """
    return noun if n is not None and int(n) == 1 else (nouns if nouns is not None else noun + "s")


def ratio(x: float | None) -> str:
    """A ratio such as ``14.77×``; n/a when undefined."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.2f}×"


def tok_s(x: float | None) -> str:
    """Tokens per second: ``23.3 tok/s``."""
    return "n/a" if x is None else f"{x:,.1f} tok/s"


def ms(seconds: float | None) -> str:
    """Seconds shown as milliseconds: ``43.0 ms``; below 0.05 ms three significant digits (``0.001 ms``,
    ``0.0123 ms``), so a small target never prints as ``0.0 ms``."""
    if seconds is None:
        return "n/a"
    if 0 < abs(seconds) < 5e-5:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e3:,.1f} ms"


def duration(x: float | None) -> str:
    """Seconds as :func:`seconds` from 1 s up, else as :func:`ms`: ``2.00 s``, ``30.0 ms``, ``0.001 ms``."""
    return "n/a" if x is None else (seconds(x) if abs(x) >= 1 else ms(x))


def seconds(x: float | None) -> str:
    """Seconds with two significant decimals: ``2.00 s``."""
    return "n/a" if x is None else f"{x:,.2f} s"


def usd(x: float | None) -> str:
    """US dollars: ``$3.78``."""
    return "n/a" if x is None else f"${x:,.2f}"


def usd_whole(x: float | None) -> str:
    """US dollars rounded to the dollar, for sums where cents are noise (a month's rent): ``$5,672``."""
    return "n/a" if x is None else f"${x:,.0f}"


def percent(x: float | None) -> str:
    """A fraction as a whole percentage: ``0.294`` → ``29 %``."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 100:,.0f} %"


FILTERS = {f.__name__: f for f in (bytes_binary, gib, mib, gb, tokens, count, counted, ratio, tok_s, ms, seconds, usd,
                                   usd_whole, percent)}
