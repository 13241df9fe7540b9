"""The Python API (docs/api.md): same numbers as the CLI, dataclasses and relations, clear errors."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import kvreg
from kvreg.suggest import near_ids

ROOT = Path(__file__).resolve().parents[1]
API_MD = (ROOT / "docs/api.md").read_text()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("api")
    for rel in ("registry/models/llama-3.1-8b.yaml", "registry/models/llama-3.1-8b.config.json", "hardware/h100-sxm-80gb.yaml", "hardware/h100-pcie-80gb.yaml",
                "registry/engines/first-principles.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    return root


def test_fit_gives_the_seed_58(project):
    r = kvreg.fit("llama-3.1-8b", "h100-sxm-80gb", context="8Ki", project=project)
    assert isinstance(r, kvreg.FitResult)
    assert [(x["context_tokens"], x["max_seqs"], x["seq_bytes"]) for x in r.rows] == [(8192, 58, 2**30)]


def test_fit_with_a_pool_and_several_contexts(project):
    r = kvreg.fit("llama-3.1-8b", None, context=["8K", "32Ki"], kv_pool="40GiB", project=project)
    # 128 KiB per token: 40 GiB / (8,000 × 128 KiB) = 40.96 → 40; / (32,768 × 128 KiB) = 10
    assert [(x["context_tokens"], x["max_seqs"]) for x in r.rows] == [(8000, 40), (32768, 10)]


def test_capacity_is_a_relation_filtered_by_columns(project):
    rel = kvreg.capacity(project=project, model_id="llama-3.1-8b", hardware_id="h100-sxm-80gb", tp=1,
                         context_tokens=8192, kv_dtype=["bf16"], weights_dtype="bf16")
    rows = rel.aggregate("min(max_seqs) AS lo, max(max_seqs) AS hi").fetchall()
    assert rows == [(58, 58)]
    with pytest.raises(kvreg.UsageError, match="did you mean model_id"):
        kvreg.capacity(project=project, modl_id="x")


def test_plan_returns_ranked_options(project):
    p = kvreg.plan("llama-3.1-8b", users=64, context="8K", tpot_ms=50, project=project)
    assert isinstance(p, kvreg.PlanResult) and p.feasible
    assert {r["hardware_id"] for r in p.feasible} <= {"h100-sxm-80gb", "h100-pcie-80gb"}
    with pytest.raises(kvreg.UsageError):
        kvreg.plan("llama-3.1-8b", users=64, context="8K", tpot_ms=float("inf"), project=project)


def test_query_is_locked(project):
    assert kvreg.query("SELECT count(*) FROM models", project=project).fetchall() == [(1,)]
    with pytest.raises(kvreg.UsageError, match="disabled by configuration"):
        kvreg.query("COPY models TO 'x.csv'", project=project)


def test_errors_are_usage_errors_or_problems(project, tmp_path):
    with pytest.raises(kvreg.UsageError, match="did you mean h100-sxm-80gb, h100-pcie-80gb"):
        kvreg.fit("llama-3.1-8b", "h100", project=project)
    bad = tmp_path / "bad"
    shutil.copytree(project, bad, ignore=shutil.ignore_patterns(".kvreg"))
    p = bad / "registry/models/llama-3.1-8b.yaml"
    p.write_text(p.read_text().replace("    kv_heads: 8", "    kv_heads: yes"))
    with pytest.raises(kvreg.KvregError) as info:
        kvreg.validate(bad)
    line = next(n for n, l in enumerate(p.read_text().splitlines(), 1) if l == "    kv_heads: yes")
    assert [(x.file, x.line, x.code) for x in info.value.problems] == [
        ("registry/models/llama-3.1-8b.yaml", line, "wrong-type")]


def test_every_api_function_is_documented_with_a_docstring():
    for name in kvreg.__all__:
        obj = getattr(kvreg, name)
        assert obj.__doc__, name
        if callable(obj) and not isinstance(obj, type):
            assert f"kvreg.{name}(" in API_MD, f"kvreg.{name} missing from docs/api.md"


def test_module_names_do_not_shadow_the_api():
    import kvreg.fit  # noqa: F401  (re-importing a module must not rebind the attribute)
    from kvreg.fit import FitResult

    assert callable(kvreg.fit) and kvreg.fit.__module__ == "kvreg.api"
    assert FitResult is kvreg.FitResult


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", API_MD, re.S))
def test_doc_examples_run(project, monkeypatch, block):
    monkeypatch.chdir(project)
    exec(block.replace('"path/to/project"', '"."'), {"kvreg": kvreg, "print": lambda *a, **k: None})


@pytest.mark.parametrize("typed,known,expected", [
    ("h100", ["a100-sxm-80gb", "h100-pcie-80gb", "h100-sxm-80gb", "h200"], ["h100-sxm-80gb", "h100-pcie-80gb", "h200"]),
    ("H100-SXM-80GB", ["h100-pcie-80gb", "h100-sxm-80gb"], ["h100-sxm-80gb", "h100-pcie-80gb"]),
    ("h100-pcie", ["h100-pcie-80gb", "h100-sxm-80gb"], ["h100-pcie-80gb"]),
    ("lama-3.1-8b", ["llama-3.1-8b", "qwen3-8b"], ["llama-3.1-8b"]),
    ("zzz", ["llama-3.1-8b"], []),
    # attack trial (issue 15): the spelled-out SKU suggested h100/a100 ids, not the h200 it starts with
    ("h200-sxm-141gb", ["a100-sxm-80gb", "h100-sxm-80gb", "h200", "h20"], ["h200", "h100-sxm-80gb", "a100-sxm-80gb"]),
    ("h2000", ["h200"], ["h200"]),
    ("", ["llama-3.1-8b"], []),
])
def test_did_you_mean(typed, known, expected):
    assert near_ids(typed, known) == expected


def test_progress_goes_to_stderr_only_when_asked(project, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kvreg.cli import main

    fresh = tmp_path / "p"
    shutil.copytree(project, fresh, ignore=shutil.ignore_patterns(".kvreg"))
    monkeypatch.setenv("KVREG_PROGRESS", "1")
    r = CliRunner().invoke(main, ["sql", "SELECT count(*) AS n FROM models", "--format", "json", "--project",
                                  str(fresh)])
    assert r.exit_code == 0
    assert "… validating" in r.stderr and "… creating" in r.stderr
    assert r.stdout.strip() == '[\n  {\n    "n": 1\n  }\n]'
    monkeypatch.setenv("KVREG_PROGRESS", "0")
    r = CliRunner().invoke(main, ["build", "--project", str(fresh)])
    assert "…" not in r.output


@pytest.mark.parametrize("kv_pool,message", [(40, "40 has no unit"), ("40", "'40' has no unit"),
                                             ("-1", "must be a positive size"), ("0GiB", "must be a positive size")])
def test_kv_pool_is_read_as_the_cli_reads_it(project, kv_pool, message):
    # attack trial (issue 15): kv_pool=40 was taken as 40 bytes (max_seqs 0, no warning); the CLI refuses '40'
    with pytest.raises(kvreg.UsageError, match=re.escape(message)):
        kvreg.fit("llama-3.1-8b", None, context="8Ki", kv_pool=kv_pool, project=project)


@pytest.mark.parametrize("options,message", [
    ({"tp": "2"}, "tp must be a whole number (1, 2, 4, 8 ...), got '2'"), ({"tp": True}, "got True"),
    ({"engine": 3}, "engine must be an id (a string), got 3"), ({"tpp": 2}, "fit() has no option tpp"),
    ({"knobs": {"gpu_memory_utilization": "0.9"}}, "gpu_memory_utilization must be a number in (0, 1]"),
    ({"knobs": {"max_num_seqs": 2.5}}, "max_num_seqs must be a whole number, got 2.5"),
])
def test_argument_types_are_usage_errors_not_type_errors(project, options, message):
    # tp='2' was a raw TypeError ('>' not supported between 'str' and 'int') from deep in kvreg.fit.fit
    with pytest.raises(kvreg.UsageError, match=re.escape(message)):
        kvreg.fit("llama-3.1-8b", "h100-sxm-80gb", context="8Ki", project=project, **options)
