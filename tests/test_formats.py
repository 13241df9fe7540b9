"""The named number formats (kvreg/formats.py), shared by the CLI and the report's Jinja filters: a count and its
noun agree ("1 user", not "1 users": the new-user trial's finding in `kvreg plan` and the report)."""

from __future__ import annotations

import pytest

from kvreg import formats as f


@pytest.mark.parametrize("n, noun, nouns, text", [
    (1, "user", None, "1 user"), (0, "user", None, "0 users"), (200, "user", None, "200 users"),
    (1, "entry", "entries", "1 entry"), (1_024, "entry", "entries", "1,024 entries"),
    (1.0, "device", None, "1 device"), (None, "device", None, "n/a devices")])
def test_counted_agrees_with_its_count(n, noun, nouns, text):
    assert f.counted(n, noun, nouns) == text


def test_tokens_of_one_is_one_token():
    assert (f.tokens(1), f.tokens(32_768), f.tokens(None)) == ("1 token", "32,768 tokens", "n/a")


def test_the_report_templates_have_the_filter():
    from kvreg.report.render import environment

    t = environment().from_string("{{ a | counted('concurrent sequence') }}; {{ b | counted('block') }} of 16")
    assert t.render(a=1, b=2) == "1 concurrent sequence; 2 blocks of 16"


def test_plan_header_says_one_user(con):
    from kvreg.plan import plan, render_plan

    out = render_plan(plan(con, "llama-3.1-8b", users=1, context_tokens=8192, tpot_s=0.05,
                           hardware=["h100-sxm-80gb"])).splitlines()
    assert out[0].startswith("llama-3.1-8b · 1 user × 8,192 tokens · TPOT ≤ 50.0 ms")
