"""One parser for every quantity a registry entry may write with a unit.

Everything is stored in base units: bytes, bytes/s, FLOP/s, tokens, USD.
A bare number means the field's base unit.  Binary prefixes (Ki, Mi, Gi, Ti)
are powers of 2^10; decimal prefixes (K, M, G, T, P) are powers of 10^3, as
in SI (DESIGN.md "Units").  Strings that could mean either (``80G``, ``80 gb``)
are rejected with a hint rather than guessed.
"""

from __future__ import annotations

import math
import re

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
DECIMAL = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}

# kind -> accepted unit suffixes (after the prefix) and an example for hints.
KINDS = {
    "bytes": (("B",), "80 GB, 79.6 GiB, 512 MiB"),
    "bandwidth": (("B/s",), "3.35 TB/s, 819 GB/s"),
    "flops": (("FLOP/s", "FLOPS"), "989 TFLOP/s"),
    "tokens": (("", "tokens", "tok"), "8K, 32Ki, 131072"),
    "count": (("",), "70.6e9, 70.6B params is not accepted: write 70.6e9"),
}

# A number as written: thousands separated by commas only in groups of three (1,234,567; "1,41" is no
# number), never "_" (Python's digit separator: "1_41 GB" read as 141 GB hid a typo), an optional fraction
# and exponent.  unit_pattern() publishes the same grammar to the JSON Schemas.
_NUMBER = (r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
           r"|\.[0-9]+(?:[eE][+-]?[0-9]+)?")
_QUANTITY = re.compile(rf"^\s*(?P<num>{_NUMBER})\s*(?P<unit>[A-Za-z/ ]*?)\s*$")


class UnitError(ValueError):
    """A quantity string that cannot be read unambiguously; ``hint`` says how to write it."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def _split_prefix(unit: str) -> tuple[int, str] | None:
    """Return (multiplier, rest) for the longest known prefix of ``unit``."""
    for table in (BINARY, DECIMAL):
        for prefix in sorted(table, key=len, reverse=True):
            if prefix and unit.startswith(prefix):
                return table[prefix], unit[len(prefix):]
    return 1, unit


def _diagnose(num: str, unit: str, rest: str, kind: str, suffixes: tuple[str, ...]) -> str | None:
    """A precise hint for the common mistakes: a bare prefix, another kind's unit, wrong case."""
    _, example = KINDS[kind]
    if unit[-1:] in ("K", "M", "G", "T", "P") and kind in ("bytes", "bandwidth"):
        per_s = "/s" if kind == "bandwidth" else ""
        dec, binary = f"{unit}B{per_s}", f"{unit}iB{per_s}"
        return (f"'{num}{unit}' is ambiguous: write {num} {dec} (10^n bytes{per_s}) "
                f"or {num} {binary} (2^n bytes{per_s})")
    other = [k for k, (sfx, _) in KINDS.items() if k != kind and rest and rest in sfx]
    if other:
        return f"{unit!r} is a {other[0]} unit but this field takes {kind}: write e.g. {example}"
    spellings = {p + s for table in (BINARY, DECIMAL) for p in table for s in suffixes if p + s}
    right = [sp for sp in sorted(spellings) if sp.lower() == unit.lower()]
    if right:
        return f"units are case-sensitive: write {num} {right[0]}"
    return None


MAX_QUANTITY = 2.0**63
"""Largest quantity accepted in any base unit: beyond it a count no longer fits DuckDB's BIGINT
(``1e30 GB`` is a typo, not an accelerator)."""


def _finite(x: float, value: object, example: str) -> float:
    """``x`` when finite and at most :data:`MAX_QUANTITY`; UnitError naming the input otherwise."""
    if not (math.isfinite(x) and abs(x) < MAX_QUANTITY):
        raise UnitError(f"{value!r} is too large (more than 2^63 in base units) or not finite",
                        f"check the exponent and the prefix; write e.g. {example}")
    return x


def parse_quantity(value: object, kind: str) -> float:
    """Parse ``value`` into the base unit of ``kind``.

    Args:
        value: an int/float (already in base units) or a string such as
            ``"80 GB"``, ``"79.6 GiB"``, ``"3.35 TB/s"``, ``"989 TFLOP/s"``,
            ``"8K"`` or ``"32Ki"`` (tokens).
        kind: one of ``bytes``, ``bandwidth``, ``flops``, ``tokens``, ``count``.

    Returns:
        The value in base units (bytes, bytes/s, FLOP/s, tokens) as a float;
        callers round where the unit is integral.

    Raises:
        UnitError: the string has no number, an unknown or ambiguous unit, a
            unit of another kind (``80 GB`` where tokens are expected), or a value
            not finite or beyond :data:`MAX_QUANTITY` (``1e30 GB``).
    """
    suffixes, example = KINDS[kind]
    if isinstance(value, bool):
        raise UnitError(f"expected a {kind} quantity, got a boolean", f"write e.g. {example}")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise UnitError(f"{value} is not a finite number", f"write e.g. {example}")
        return _finite(float(value), value, example)
    if not isinstance(value, str):
        raise UnitError(f"expected a number or a string with a unit, got {type(value).__name__}",
                        f"write e.g. {example}")
    m = _QUANTITY.match(value)
    if not m:
        if "_" in value:
            raise UnitError(f"cannot read {value!r} as a {kind} quantity: '_' is not a digit separator here",
                            f"write the digits without it (or with commas in groups of three: 1,000): "
                            f"e.g. {example}")
        if re.match(r"^\s*[0-9][0-9,]*,", value):
            raise UnitError(f"cannot read {value!r} as a {kind} quantity: commas separate thousands only in "
                            f"groups of three (1,234,567)", f"write e.g. {example}")
        raise UnitError(f"cannot read {value!r} as a {kind} quantity", f"write e.g. {example}")
    number = float(m["num"].replace(",", ""))
    unit = m["unit"].replace(" ", "")
    if unit == "":
        return _finite(number, value, example)  # a bare number (YAML reads 86e9 as a string) is in base units
    if kind in ("tokens", "count") and unit in ("tokens", "tok"):
        return _finite(number, value, example)
    mult, rest = _split_prefix(unit)
    if rest in suffixes or (kind == "tokens" and rest in ("", "tokens", "tok")):
        return _finite(number * mult, value, example)
    hint = _diagnose(m["num"], unit, rest, kind, suffixes) or f"write e.g. {example}"
    raise UnitError(f"cannot read {value!r} as a {kind} quantity", hint)


def parse_pool_bytes(value: object) -> float:
    """Parse a KV pool size (``kvreg fit --kv-pool``, ``kvreg.fit(kv_pool=)``) into bytes: the one parser of both.

    Args:
        value: a string with a byte unit (``"40GiB"`` = 40 × 2^30, ``"40GB"`` = 40 × 10^9, ``"42949672960 B"``).

    Returns:
        The pool in bytes (float > 0).

    Raises:
        UnitError: a bare number (``40`` or ``"40"``: GB or GiB is almost always meant, never bytes, so it is
            refused rather than read as 40 bytes), not positive (``-1GiB``, ``0GiB``), or not a bytes quantity
            (see :func:`parse_quantity`).
    """
    _, example = KINDS["bytes"]
    if isinstance(value, bool):
        raise UnitError("expected a KV pool size, got a boolean", f"write e.g. {example}")
    text = value.strip() if isinstance(value, str) else value
    bare = text
    if isinstance(text, str):
        try:
            bare = float(text.replace(",", ""))
        except ValueError:
            bare = None
    if isinstance(bare, (int, float)):
        if not math.isfinite(bare):
            raise UnitError(f"{value!r} is not a finite size", f"write e.g. {example}")
        if bare <= 0:
            raise UnitError(f"the KV pool must be a positive size, got {value!r}", f"write e.g. {example}")
        raise UnitError(f"{value!r} has no unit: write {bare:g}GiB (2^30 bytes) or {bare:g}GB (10^9 bytes)",
                        f"a byte count as '{bare:.0f} B'")
    if isinstance(text, str) and text.startswith("-"):
        raise UnitError(f"the KV pool must be a positive size, got {value!r}", f"write e.g. {example}")
    pool = parse_quantity(value, "bytes")
    if not pool > 0:
        raise UnitError(f"the KV pool must be a positive size, got {value!r}", f"write e.g. {example}")
    return pool


# The --context help of every command that takes a context (kvreg fit, kvreg plan).
CONTEXT_HELP = ("Context length in tokens: 32K = 32,000 (K is 1,000), 32Ki = 32,768 (Ki is 1,024), "
                "or a plain count such as 20000")


def parse_context_tokens(value: object) -> int:
    """Parse a context length (``32K`` = 32,000, ``32Ki`` = 32,768, ``20000``) into whole tokens.

    The one parser of command-line contexts (``kvreg fit --context``, ``kvreg plan --context``);
    any positive whole count is a context, on the contexts axis or not.

    Returns:
        The context in tokens (int > 0).

    Raises:
        UnitError: not a tokens quantity (see :func:`parse_quantity`), not positive, not a
            whole number of tokens (``1.5`` tokens; ``1.5K`` = 1,500 is fine), or above
            :data:`MAX_CONTEXT_TOKENS`.
    """
    tokens = parse_quantity(value, "tokens")
    if tokens <= 0 or tokens != int(tokens):
        raise UnitError(f"context {value!r} is not a positive whole number of tokens",
                        "write e.g. 32K (32,000), 32Ki (32,768) or 20000")
    if tokens > MAX_CONTEXT_TOKENS:
        raise UnitError(f"context {value!r} is more than {MAX_CONTEXT_TOKENS:,} tokens (2^34)",
                        "kvreg's sums are 64-bit integers (tokens × bytes per token); models natively "
                        "hold at most ~10M tokens")
    return int(tokens)


MAX_CONTEXT_TOKENS = 2**34
"""Largest context accepted: 2^34 tokens × even 2^28 bytes per token stays below 2^63 (BIGINT)."""


def to_int(value: float) -> int:
    """Round a base-unit float to the nearest integer (bytes and tokens are whole)."""
    return int(round(value))


GIB = 2**30
MIB = 2**20
KIB = 2**10
GB = 10**9


def unit_pattern(kind: str) -> str:
    """A regular expression (ECMA-262 and Python) matching the strings :func:`parse_quantity` accepts for ``kind``.

    Published in the JSON Schemas so editors accept ``"80 GB"`` where a byte
    count is expected and flag ``"80G"`` while typing.  It mirrors the parser:
    a number, optional spaces, an optional binary or decimal prefix, then one of
    the kind's suffixes (tests check both agree on sample strings).
    """
    number = "(?:" + _NUMBER + ")"
    prefixes = sorted(BINARY, key=len, reverse=True) + sorted((p for p in DECIMAL if p), key=len, reverse=True)
    prefix = "(?:" + "|".join(prefixes) + ")"
    suffixes, _ = KINDS[kind]
    if kind in ("tokens", "count"):
        unit = rf"(?:{prefix}? *)?(?:tokens|tok)?"
    else:
        # the unit is optional: a bare number written as a string (YAML reads 86e9 so) is base units
        unit = rf"(?:{prefix}? *(?:" + "|".join(re.escape(s) for s in suffixes) + "))?"
    return rf"^\s*{number}\s*{unit}\s*$"
