"""A log's own figures must agree (kvreg/checks/208_observation_figures_disagree.sql), and a one-figure edit is still
the same startup (206): the trial16 #7 case (vLLM 0.19.0 Gemma 3 27B on H100, "GPU KV cache size: 36,560 tokens"
edited to 9,999,999), the shipped observations and logs, and the %.2f rounding boundary worked by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvreg.cli import main

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT.parent / "shared/data/vllm-0.19-h100-startups"   # the raw logs (outside the project)
needs_sweep = pytest.mark.skipif(not (SWEEP / "logs").is_dir(), reason="../shared/data/vllm-0.19-h100-startups absent")
GEMMA = "registry/observations/v0.19-h100-gemma-3-27b-tp1.yaml"
GEMMA_LOG = "google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192.log"
CODE = "observation-figures-disagree"


@pytest.fixture()
def project(tmp_path):
    """The shipped registry (models, engines, hardware) with no observation but those a test adds."""
    shutil.copytree(ROOT / "registry", tmp_path / "registry", ignore=shutil.ignore_patterns("observations"))
    shutil.copytree(ROOT / "hardware", tmp_path / "hardware")
    (tmp_path / "registry/observations").mkdir()
    return tmp_path


def _validate(project: Path) -> list[dict]:
    r = CliRunner().invoke(main, ["validate", "--project", str(project), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout) if r.exit_code else []


def _add(project: Path, rel: str, edit=None, new_id: str | None = None) -> Path:
    """Copy the shipped observation ``rel`` into ``project`` (as ``new_id``), ``edit`` applied to its dict."""
    e = yaml.safe_load((ROOT / rel).read_text())
    if edit:
        edit(e)
    if new_id:
        e["id"] = new_id
    out = project / "registry/observations" / f"{e['id']}.yaml"
    out.write_text(yaml.safe_dump(e, sort_keys=False, width=1000))
    return out


def _line_of(path: Path, prefix: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.lstrip().startswith(prefix))


def test_the_shipped_observations_pass_and_every_sweep_edit_is_caught(project):
    """All 66 shipped observations pass 208 and 206 (validate of the shipped registry); and in each of the 18
    sweep observations, tokens one block group more than printed (+ 16 × 7 = 112 for Gemma 3 27B's 7 groups; +112
    is a whole block count for every layout there) are caught: at TP 1 by the logged num_gpu_blocks (exact), at TP 2
    and 4 (the blocks are the min over the ranks, so more tokens could be another rank's) by the concurrency the
    same worker printed."""
    shipped = json.loads(CliRunner().invoke(main, ["validate", "--project", str(ROOT), "--format", "json"]).stdout
                         or "[]")
    assert [p for p in shipped if p["code"] in (CODE, "duplicate-observation")] == []
    sweep = sorted((ROOT / "registry/observations").glob("v0.19-h100-*.yaml"))
    assert len(sweep) == 18
    for f in sweep:
        _add(project, f"registry/observations/{f.name}",
             lambda e: e["logged"].update(kv_cache_tokens=e["logged"]["kv_cache_tokens"] + 112))
    probs = [p for p in _validate(project) if p["code"] == CODE]
    by = lambda other: {p["file"] for p in probs if p["key"] == "logged.kv_cache_tokens" and other in p["message"]}
    multi = {f"registry/observations/{f.name}" for f in sweep if yaml.safe_load(f.read_text())["settings"]["tp"] > 1}
    assert len(multi) == 4
    assert by("disagrees with logged.num_gpu_blocks") == {f"registry/observations/{f.name}" for f in sweep} - multi
    assert by("disagrees with logged.max_concurrency") >= multi


@needs_sweep
def test_the_18_sweep_logs_ingest_without_a_disagreement(tmp_path):
    """Each real log of the sweep, ingested alone into a registry without observations, passes check 208."""
    shutil.copytree(ROOT / "registry", tmp_path / "registry", ignore=shutil.ignore_patterns("observations"))
    shutil.copytree(ROOT / "hardware", tmp_path / "hardware")
    logs = sorted((SWEEP / "logs").glob("*.log"))
    assert len(logs) == 18
    for log in logs:
        r = CliRunner().invoke(main, ["ingest-log", str(log), "--project", str(tmp_path), "--id", "one",
                                      "--hardware", "h100-sxm-80gb", "--force"])
        assert r.exit_code == 0 and "figures disagree" not in r.output, (log.name, r.output)
        assert "figures_disagree" not in yaml.safe_load((tmp_path / "registry/observations/one.yaml").read_text())


@needs_sweep
def test_the_trial_edit_is_refused_naming_both_lines_and_forced_it_is_still_a_duplicate(project, tmp_path):
    """trial16 #7: sed 's/GPU KV cache size: 36,560 tokens/GPU KV cache size: 9,999,999 tokens/'.  vLLM 0.19 prints
    tokens = num_blocks // 7 groups × 16 = 15,997 // 7 × 16 = 36,560 (log line 740: 15,997 blocks), and the
    concurrency 4.46x is 15,997 / 3,590 blocks per request (512 full + 6 × 513 sliding), so 4.455–4.465 × 3,590 =
    15,994–16,029 blocks, 36,544–36,624 tokens: 9,999,999 is neither."""
    evil = tmp_path / "evil.log"
    # bytes, as sed edits them (read_text would turn the log's bare "\r" progress lines into more lines)
    evil.write_bytes((SWEEP / "logs" / GEMMA_LOG).read_bytes().replace(b"GPU KV cache size: 36,560 tokens",
                                                                      b"GPU KV cache size: 9,999,999 tokens"))
    args = ["ingest-log", str(evil), "--id", "trial-evil", "--model", "gemma-3-27b", "--hardware", "h100-sxm-80gb",
            "--project", str(project)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    assert "observation-figures-disagree: logged.kv_cache_tokens 9,999,999 (entry line" in r.output
    assert "log line 417) disagrees with logged.max_concurrency 4.46x" in r.output and "log line 418)" in r.output
    assert "36,544–36,624 tokens" in r.output
    assert "disagrees with logged.num_gpu_blocks 15,997" in r.output and "log line 740)" in r.output
    assert "prints 36,560 tokens for 15,997 blocks" in r.output
    assert not list((project / "registry/observations").glob("*.yaml"))
    # --force keeps it and says why it is kept ...
    r = CliRunner().invoke(main, args + ["--force"])
    assert r.exit_code == 0, r.output
    e = yaml.safe_load((project / "registry/observations/trial-evil.yaml").read_text())
    assert e["figures_disagree"].startswith("kept by ingest-log --force although logged.kv_cache_tokens 9,999,999")
    assert _validate(project) == []
    # ... but the untampered log is the same startup (206 keys on Model loading took, Available KV, settings)
    r = CliRunner().invoke(main, ["ingest-log", str(SWEEP / "logs" / GEMMA_LOG), "--id", "trial-good",
                                  "--project", str(project), "--hardware", "h100-sxm-80gb"])
    assert r.exit_code == 2 and "already registry/observations/trial-evil.yaml" in r.output, r.output
    assert not (project / "registry/observations/trial-good.yaml").exists()


def test_an_edited_token_figure_is_located_at_validate(project):
    """The shipped Gemma 3 27B entry with kv_cache_tokens 9,999,999: the problem sits on that key's line and names
    the other figures' entry lines and the excerpt's log lines (431 tokens, 432 concurrency, 805 blocks)."""
    f = _add(project, GEMMA, lambda e: e["logged"].update(kv_cache_tokens=9999999))
    probs = [p for p in _validate(project) if p["code"] == CODE]
    assert {p["key"] for p in probs} == {"logged.kv_cache_tokens"} and len(probs) == 2
    assert all(p["file"] == "registry/observations/v0.19-h100-gemma-3-27b-tp1.yaml" for p in probs)
    assert all(p["line"] == _line_of(f, "kv_cache_tokens:") for p in probs)
    conc, blocks = sorted(probs, key=lambda p: "num_gpu_blocks" in p["message"])
    assert (f"logged.max_concurrency 4.46x (entry line {_line_of(f, 'max_concurrency:')}, log line 432)"
            in conc["message"])
    assert f"logged.num_gpu_blocks 15,997 (entry line {_line_of(f, 'num_gpu_blocks:')}, log line 805)" in blocks["message"]
    assert "9,999,999 (entry line" in blocks["message"] and "log line 431)" in blocks["message"]
    assert "ingest the original" in blocks["hint"] and "figures_disagree" in blocks["hint"]
    # a person who vouches for the log says why, and the check stands down
    f.write_text(f.read_text() + "figures_disagree: unedited log (test)\n")
    assert [p for p in _validate(project) if p["code"] == CODE] == []


def test_a_copy_with_one_figure_edited_is_still_a_duplicate(project):
    _add(project, GEMMA)
    _add(project, GEMMA, lambda e: e["logged"].update(kv_cache_tokens=36576), new_id="zz-edited")
    dup = [p for p in _validate(project) if p["code"] == "duplicate-observation"]
    assert [(p["file"], p["related"]) for p in dup] == [("registry/observations/zz-edited.yaml", GEMMA)]


def test_an_edited_available_memory_disagrees_with_the_blocks(project):
    """A block of Gemma 3 27B is 10 shared tensors (1 full + 6 sliding groups of ≤ 10 layers) × 16 tokens × 16 KV
    heads × 128 × 2 (K, V) × 2 B = 1,310,720 B, so 2^30 B hold 819.2 blocks: the printed 19.53 GiB is
    floor(19.525 × 819.2) = 15,994 … floor(19.535 × 819.2) = 16,003 blocks (the logged 15,997 inside); 19.63 GiB
    is 16,076 … 16,084, which 15,997 is not."""
    _add(project, GEMMA, lambda e: e["logged"].update(available_kv_cache_memory_gib=19.63))
    (p,) = [p for p in _validate(project) if p["code"] == CODE]
    assert p["key"] == "logged.num_gpu_blocks"
    assert "at 1,310,720 bytes a block, that memory holds 16,076–16,084 blocks" in p["message"]


def _pure(e, tokens, conc, L, engine="vllm-0.22-0.26"):
    """vllm-log-21 (Qwen3-14B AWQ, L40S) reduced to the two pool lines: no memory figure, no block count."""
    e["engine"] = engine
    e["logged"] = {"kv_cache_tokens": tokens, "max_concurrency": conc, "max_concurrency_tokens": L}
    e["settings"]["max_model_len"] = L


@pytest.mark.parametrize("tokens, ok", [(193945, True), (193944, False), (194355, True), (194356, False)])
def test_int_concurrency_times_length_at_the_rounding_boundary(project, tokens, ok):
    """vLLM ≥ 0.21 prints int(conc × L) and conc with %.2f: 4.74x at L = 40,960 is any conc in [4.735, 4.745], so
    tokens int(4.735 × 40,960) = int(193,945.6) = 193,945 … int(4.745 × 40,960) = int(194,355.2) = 194,355."""
    _add(project, "registry/observations/vllm-log-21.yaml", lambda e: _pure(e, tokens, 4.74, 40960))
    probs = [p for p in _validate(project) if p["code"] == CODE]
    assert (probs == []) is ok
    if not ok:
        assert "193,945–194,355 for a concurrency printed as 4.74" in probs[0]["message"]


@pytest.mark.parametrize("tokens, ok", [(31100, True), (31099, False), (31300, True), (31301, False)])
def test_v0_concurrency_is_tokens_over_length_at_the_rounding_boundary(project, tokens, ok):
    """V0 prints conc = blocks × 16 / L = tokens / L: 1.56x at L = 20,000 is tokens 1.555 × 20,000 = 31,100 …
    1.565 × 20,000 = 31,300 (vllm-log-01's L; the token counts need not be multiples of 16 for the pair alone)."""
    _add(project, "registry/observations/vllm-log-01.yaml", lambda e: _pure(e, tokens, 1.56, 20000, "vllm-v0"))
    assert ([p for p in _validate(project) if p["code"] == CODE] == []) is ok


def test_the_concurrency_length_is_max_model_len(project):
    f = _add(project, "registry/observations/vllm-log-21.yaml",
             lambda e: (_pure(e, 194192, 4.74, 40960), e["settings"].update(max_model_len=32768)))
    (p,) = [p for p in _validate(project) if p["code"] == CODE and p["key"] == "logged.max_concurrency_tokens"]
    assert f"settings.max_model_len 32768 (entry line {_line_of(f, 'max_model_len:')})" in p["message"]


@pytest.mark.parametrize("key, value", [("max_concurrency", 1e30), ("available_kv_cache_memory_gib", 1e30),
                                        ("max_concurrency", 1e12), ("max_concurrency_tokens", 1)])
def test_absurd_figures_are_located_problems_never_an_internal_error(project, key, value):
    """A hand-written 1e30 concurrency would overflow int(conc × L) as BIGINT, and a 1e30 GiB pool the block range
    (and '1e+30' has no decimals to count): each is a located problem or a pass, exit 0 or 1."""
    _add(project, "registry/observations/vllm-log-21.yaml", lambda e: e["logged"].update({key: value}))
    r = CliRunner().invoke(main, ["validate", "--project", str(project), "--format", "json"])
    assert r.exit_code in (0, 1) and "internal error" not in r.output, r.output
    if key == "max_concurrency":
        assert any(p["code"] == CODE and p["key"] == "logged.max_concurrency" or "max_concurrency" in p["message"]
                   for p in json.loads(r.stdout))
