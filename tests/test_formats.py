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


@pytest.mark.parametrize("x, ms, duration", [
    (1e-6, "0.001 ms", "0.001 ms"), (1.23e-5, "0.0123 ms", "0.0123 ms"), (5e-5, "0.1 ms", "0.1 ms"),
    (0.05, "50.0 ms", "50.0 ms"), (0.0, "0.0 ms", "0.0 ms"), (1.27, "1,270.0 ms", "1.27 s"), (None, "n/a", "n/a")])
def test_a_sub_millisecond_target_keeps_its_digits(x, ms, duration):
    # trial 11 finding 7: --ttft-ms 0.001 printed "TTFT ≤ 0.0 ms" and "> TTFT 0.00 s"
    assert (f.ms(x), f.duration(x)) == (ms, duration)


def test_the_report_templates_have_the_filter():
    from kvreg.report.render import environment

    t = environment().from_string("{{ a | counted('concurrent sequence') }}; {{ b | counted('block') }} of 16")
    assert t.render(a=1, b=2) == "1 concurrent sequence; 2 blocks of 16"


def test_plan_header_says_one_user(con):
    from kvreg.plan import plan, render_plan

    out = render_plan(plan(con, "llama-3.1-8b", users=1, context_tokens=8192, tpot_s=0.05,
                           hardware=["h100-sxm-80gb"])).splitlines()
    assert out[0].startswith("llama-3.1-8b · 1 user × 8,192 tokens · TPOT ≤ 50.0 ms")


@pytest.mark.parametrize("n, text", [(1, "format"), (2, "formats"), (0, "formats"), (None, "formats")])
def test_noun_for_names_items_without_counting_them(n, text):
    assert f.noun_for(n, "format") == text


def test_one_problem_is_one_problem_found():
    # the new-user trial (F11): import-hf printed "1 problem(s) found."
    from kvreg.problems import KvregError, Problem

    one = KvregError([Problem("a.json", 1, 1, "", "bad-config-value", "x")])
    two = KvregError([Problem("a.json", 1, 1, "", "bad-config-value", "x"), Problem("b.json", 2, 1, "", "c", "y")])
    assert (str(one), one.render().splitlines()[-1]) == ("1 problem", "1 problem found.")
    assert two.render().splitlines()[-1] == "2 problems found."


def test_no_parenthesised_plural_in_kvregs_text():
    """Every printed count goes through counted/noun_for: no "group(s)" left in a string of kvreg/."""
    import io
    import re
    import tokenize
    from pathlib import Path

    root = Path(f.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        prev = tokenize.NEWLINE
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            # docstrings (a string standing alone as a statement) are not printed; an f-string's {…} is code
            text = re.sub(r"\{[^{}]*\}", "", tok.string).replace("http(s)", "")
            if tok.type == tokenize.STRING and prev not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) \
                    and re.search(r"[A-Za-z]\(s\)", text):
                found.append(f"{path.relative_to(root)}:{tok.start[0]}")
            if tok.type not in (tokenize.COMMENT, tokenize.NL):
                prev = tok.type
    assert found == []
