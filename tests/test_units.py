"""The one unit parser: base units out, ambiguous strings refused with a precise hint."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvreg.units import BINARY, DECIMAL, UnitError, parse_pool_bytes, parse_quantity


@pytest.mark.parametrize("text,kind,expected", [
    ("80 GB", "bytes", 80e9),
    ("79.6 GiB", "bytes", 79.6 * 2**30),
    ("512 MiB", "bytes", 512 * 2**20),
    ("3.35 TB/s", "bandwidth", 3.35e12),
    ("989 TFLOP/s", "flops", 989e12),
    ("8K", "tokens", 8000),
    ("32Ki", "tokens", 32768),
    ("128Ki tokens", "tokens", 131072),
    ("131,072", "tokens", 131072),
    ("1,410 GB", "bytes", 1410e9),
    ("86e9", "bytes", 86e9),          # YAML reads this as a string: a bare number is the base unit
    (85899345920, "bytes", 85899345920),
    ("70.6e9", "count", 70.6e9),
])
def test_parses_to_base_units(text, kind, expected):
    assert parse_quantity(text, kind) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text,kind,hint", [
    ("80G", "bytes", "'80G' is ambiguous: write 80 GB (10^n bytes) or 80 GiB (2^n bytes)"),
    ("3.35 T", "bandwidth", "'3.35T' is ambiguous: write 3.35 TB/s (10^n bytes/s) or 3.35 TiB/s (2^n bytes/s)"),
    ("80 gb", "bytes", "units are case-sensitive: write 80 GB"),
    ("79.6 gib", "bytes", "units are case-sensitive: write 79.6 GiB"),
    ("128 GB", "tokens", "'GB' is a bytes unit but this field takes tokens: write e.g. 8K, 32Ki, 131072"),
    ("3.35 TB", "bandwidth", "'TB' is a bytes unit but this field takes bandwidth: write e.g. 3.35 TB/s, 819 GB/s"),
    ("80 GiB/s", "bytes", "'GiB/s' is a bandwidth unit but this field takes bytes: write e.g. 80 GB, 79.6 GiB, 512 MiB"),
    ("eighty", "bytes", "write e.g. 80 GB, 79.6 GiB, 512 MiB"),
    # attack trial (issue 15): "1_41 GB" was read as 141 GB and "1,41 GB" likewise: a typo, never a number
    ("1_41 GB", "bytes", "write the digits without it (or with commas in groups of three: 1,000): "
                         "e.g. 80 GB, 79.6 GiB, 512 MiB"),
    ("131_072", "tokens", "write the digits without it (or with commas in groups of three: 1,000): "
                          "e.g. 8K, 32Ki, 131072"),
])
def test_refuses_with_a_precise_hint(text, kind, hint):
    with pytest.raises(UnitError) as exc:
        parse_quantity(text, kind)
    assert exc.value.hint == hint


@pytest.mark.parametrize("value", [True, None, [80], float("nan"), float("inf")])
def test_refuses_non_numbers(value):
    with pytest.raises(UnitError):
        parse_quantity(value, "bytes")


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(sorted({**BINARY, **DECIMAL}.items())))
def test_every_prefix_multiplies(n, prefix):
    # Values are floats: exact up to 2^53 (8 PiB), within a rounding step beyond.
    name, mult = prefix
    if n * mult >= 2**63:  # beyond MAX_QUANTITY (a BIGINT): refused, never stored (issue 15)
        with pytest.raises(UnitError, match="too large"):
            parse_quantity(f"{n} {name}B", "bytes")
        return
    expected = n * mult if n * mult < 2**53 else pytest.approx(n * mult, rel=1e-15)
    assert parse_quantity(f"{n} {name}B", "bytes") == expected
    assert parse_quantity(f"{n}{name}B/s", "bandwidth") == expected


@pytest.mark.parametrize("text", ["1,41 GB", "1,2345 GB", "12,34,567"])
def test_commas_only_in_groups_of_three(text):
    with pytest.raises(UnitError, match="groups of three"):
        parse_quantity(text, "bytes")


@pytest.mark.parametrize("value,message", [
    (40, "40 has no unit"), ("40", "'40' has no unit"), ("-1", "must be a positive size, got '-1'"),
    ("0GiB", "must be a positive size, got '0GiB'"), ("-1GiB", "must be a positive size, got '-1GiB'"),
])
def test_a_kv_pool_needs_a_unit_and_a_positive_size(value, message):
    # one parser for `kvreg fit --kv-pool` and kvreg.fit(kv_pool=): 40 was 40 bytes in the API, refused by the CLI
    with pytest.raises(UnitError, match=re.escape(message)):
        parse_pool_bytes(value)
    assert parse_pool_bytes("40GiB") == 40 * 2**30 and parse_pool_bytes("42949672960 B") == 42949672960
