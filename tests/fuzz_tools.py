"""Shared pieces of the fuzz suites (tests/test_fuzz_*.py): hypothesis settings and hostile values.

The suites run derandomized by default, so CI is reproducible; ``KVREG_FUZZ=explore`` draws new
random cases (and ten times as many) for a local hunt.  Every case must end in a value or a
located problem (registry, config.json) or exit 0/1/2 (CLI) — never an exception, never a hang.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXPLORE = os.environ.get("KVREG_FUZZ") == "explore"


def fuzz_settings(n: int):
    """Hypothesis settings for ``n`` generated cases (``10 n`` random ones with KVREG_FUZZ=explore)."""
    return settings(max_examples=n * 10 if EXPLORE else n, deadline=None, derandomize=not EXPLORE, database=None,
                    suppress_health_check=list(HealthCheck))


# Values a careless or hostile edit puts where a registry or config value was.
TRICKY_STRINGS = ["yes", "no", "on", "off", "8_0", "1:20", "012", "0x1f", "1e30 GB", "80 GB", "80G", "79.6 GiB",
                  "3.35 TB/s", "989 TFLOP/s", "32Ki", "8K", "1e400", "-1", "0", "nan", ".inf", "-.inf", "", " ",
                  "null", "~", "True", "2024-13-45", "h100", "H100-SXM-80GB", "../../etc/passwd", "'; DROP TABLE x; --",
                  "\u202e", "a" * 300]

VALUES = st.one_of(
    st.integers(min_value=-2**70, max_value=2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**53, 2**53 + 1, 2**63, 2**64, 10**20]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=12),
    st.sampled_from(TRICKY_STRINGS),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
    st.dictionaries(st.sampled_from(["value", "source", "x", "kind"]), st.integers(min_value=-3, max_value=10**6),
                    max_size=2),
)

# Raw YAML text spliced in where a value was (what yaml.safe_dump can never write).
RAW_YAML = st.one_of(st.sampled_from([
    "yes", "8_0", "!custom x", '!!int "abc"', '!!float "abc"', '!!timestamp "xyz"', "!!binary aGVsbG8=",
    "!!python/object/apply:os.system ['true']", "&a [*a]", "*undefined", ".inf", ".nan", "1e30 GB", "1e400",
    "99999999999999999999", "''", "[", "{", '"unterminated', "\t1", "- x", "{a: 1, a: 2}", "<<: {x: 1}",
    "!!set {a, b}", "? [a]\n  : 1", "|\n  text", "&x 1", "1 # comment", "%YAML 1.1", "---", "...",
]), st.text(max_size=15))


def leaves(obj, path=()):
    """Every (path, value) of a parsed YAML/JSON value, mappings and lists walked."""
    out = [(path, obj)]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += leaves(v, path + (i,))
    return out


def replaced(obj, path, value):
    """A copy of ``obj`` with the value at ``path`` replaced (``path`` () replaces the whole)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, dict):
        return {k: replaced(v, rest, value) if k == head else v for k, v in obj.items()}
    return [replaced(v, rest, value) if i == head else v for i, v in enumerate(obj)]


def deleted(obj, path):
    """A copy of ``obj`` without the key or item at ``path``."""
    head, rest = path[0], path[1:]
    if rest:
        if isinstance(obj, dict):
            return {k: deleted(v, rest) if k == head else v for k, v in obj.items()}
        return [deleted(v, rest) if i == head else v for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return {k: v for k, v in obj.items() if k != head}
    return [v for i, v in enumerate(obj) if i != head]
