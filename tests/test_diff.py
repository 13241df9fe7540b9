"""kvreg diff on temporary git repositories made here: entry changes, moved figures, errors, Markdown."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvreg.cli import main
from kvreg.registry import KINDS
from kvreg.tables import CONTEXT_LADDER, PRECISIONS, TP_SIZES
from tests.registry_factory import engine_entry, hardware_entry, model_entry, write_project

GOLDEN = Path(__file__).parent / "golden" / "diff.md"
GiB = 2**30


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=kvreg test", "-c", "user.email=test@kvreg",
                           "-c", "commit.gpgsign=false", *args], check=True, capture_output=True, text=True).stdout


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)


def model(kv_heads: int = 8, url: str = "https://example.org/config.json") -> dict:
    """32 full-attention layers, 8e9 parameters: per token 32 × kv_heads × (128 + 128) × 2 bytes at bf16."""
    return model_entry("m", 32, [{"kind": "full", "count": 32, "kv_heads": kv_heads, "head_dim": 128}],
                       native_context=131072, sources=[{"id": "fixture", "url": url}])


def write_yaml(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository whose first commit is a one-model, one-accelerator, one-engine project."""
    root = tmp_path / "proj"
    write_project(root, models={"m": model()},
                  hardware={"hw": hardware_entry("hw", memory_marketed="80 GB", memory_usable="80 GiB")},
                  engines={"first-principles": engine_entry()})
    git(root, "init", "-q")
    commit(root, "base")
    return root


def run(*args: str):
    return CliRunner().invoke(main, ["diff", *args], catch_exceptions=False)


def diff_json(root: Path, *args: str) -> dict:
    r = run(*args, "--project", str(root), "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def figure(out: dict, figure: str, **keys) -> dict:
    rows = [f for f in out["figures"] if f["figure"] == figure and all(f["keys"][k] == v for k, v in keys.items())]
    assert len(rows) == 1, rows
    return rows[0]


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_kv_heads_change_moves_capacity_by_the_arithmetic(repo):
    write_yaml(repo / "registry/models/m.yaml", model(kv_heads=4))
    commit(repo, "halve kv heads")
    out = diff_json(repo, "HEAD~1", "HEAD")

    [entry] = out["entries"]
    assert (entry["kind"], entry["id"], entry["status"]) == ("model", "m", "changed")
    assert entry["fields"] == [{"path": "layer_groups.0.kv_heads", "old": 8, "new": 4,
                                "file": "registry/models/m.yaml",
                                "line": line_of(repo / "registry/models/m.yaml", "kv_heads")}]

    # Independently: pool = 80 GiB × 1.0 − 6 GiB reserve − 8e9 params × 2 bytes (bf16 weights, TP 1);
    # a sequence of 32,768 tokens holds 32 layers × kv_heads × (128 + 128) × 2 bytes per token.
    pool = 80 * GiB - 6 * GiB - 8e9 * 2
    naive_pool = 80e9 - 8e9 * 2
    s = 32768
    old_seq, new_seq = 32 * 8 * 256 * 2 * s, 32 * 4 * 256 * 2 * s
    at = dict(hardware_id="hw", weights_dtype="bf16", kv_dtype="bf16", tp=1, context_tokens=s)
    seqs = figure(out, "max_seqs", **at)
    assert (seqs["old"], seqs["new"]) == (math.floor(pool / old_seq), math.floor(pool / new_seq)) == (14, 29)
    assert seqs["pct"] == pytest.approx((29 - 14) / 14 * 100)
    naive = figure(out, "naive_max_seqs", **at)
    assert (naive["old"], naive["new"]) == (math.floor(naive_pool / old_seq), math.floor(naive_pool / new_seq))
    assert {(f["kind"], f["id"]) for f in out["figures"]} == {("model", "m")}
    # By default only what reports use: no byte figures, no context beyond the native 128Ki,
    # only the weights dtype the model ships in (bf16: no checkpoint listed, no native precisions).
    assert {f["figure"] for f in out["figures"] if f["view"] == "capacity"} == {"max_seqs", "naive_max_seqs"}
    assert max(f["keys"]["context_tokens"] for f in out["figures"] if f["view"] == "capacity") == 131072
    assert {f["keys"]["weights_dtype"] for f in out["figures"]} == {"bf16"}
    # Largest change in sequences first (TP 1: the fixture states no interconnect, so TP > 1 is left out).
    seq_figs = [f for f in out["figures"] if f["figure"].endswith("_seqs")]
    assert out["figures"][0] == max(seq_figs, key=lambda f: f["new"] - f["old"])

    full = diff_json(repo, "HEAD~1", "HEAD", "--all-scenarios")
    seq = figure(full, "seq_bytes", **at)
    assert (seq["old"], seq["new"], seq["pct"]) == (old_seq, new_seq, -50.0)
    # The pool does not depend on KV heads: no pool_bytes row moved.
    assert not [f for f in full["figures"] if f["figure"] == "pool_bytes"]


def test_source_url_change_is_an_entry_change_that_moves_no_number(repo):
    write_yaml(repo / "registry/models/m.yaml", model(url="https://example.org/other.json"))
    commit(repo, "better source")
    out = diff_json(repo, "HEAD~1", "HEAD")
    [entry] = out["entries"]
    assert [(f["path"], f["old"], f["new"]) for f in entry["fields"]] == [
        ("sources.0.url", "https://example.org/config.json", "https://example.org/other.json")]
    assert out["figures"] == [] and out["scenario_sets"] == []
    assert out["has_changes"] is True


def test_adding_hardware_adds_its_scenarios(repo):
    write_yaml(repo / "hardware/big.yaml", hardware_entry("big", memory_marketed="192 GB", memory_usable="180 GiB"))
    commit(repo, "add an accelerator")
    out = diff_json(repo, "HEAD~1", "HEAD")
    assert [(e["kind"], e["id"], e["status"], e["file"]) for e in out["entries"]] == [
        ("hardware", "big", "added", "hardware/big.yaml")]
    sets = {s["view"]: s for s in out["scenario_sets"]}
    added = sets["capacity"]
    # every other compared view that exists (roofline, engine_capacity, ...) adds rows for it too
    assert all((s["kind"], s["id"], s["status"]) == ("hardware", "big", "added") for s in sets.values())
    weights = sum(1 for p in PRECISIONS if p[2])
    kv = sum(1 for p in PRECISIONS if p[3])
    within_native = len([c for c in set(CONTEXT_LADDER) | {131072} if c <= 131072])
    assert (added["view"], added["kind"], added["id"], added["status"]) == ("capacity", "hardware", "big", "added")
    # By default: the one weights dtype the model ships in (bf16), contexts up to the native 128Ki, TP 1 only: the
    # entry states no interconnect, so kvreg plan refuses TP > 1 there (tp_planned) and the focus counts those apart
    assert added["count"] == 1 * 1 * kv * 1 * within_native
    [capacity] = [v for v in out["views"] if v["view"] == "capacity"]
    assert capacity["left_out"] == {"tp_refused": 1 * 1 * kv * (len(TP_SIZES) - 1) * within_native}
    assert out["figures"] == []
    contexts = len(set(CONTEXT_LADDER) | {131072})
    full = {s["view"]: s for s in diff_json(repo, "HEAD~1", "HEAD", "--all-scenarios")["scenario_sets"]}
    assert full["capacity"]["count"] == 1 * weights * kv * len(TP_SIZES) * contexts


def test_deleting_a_model_a_report_uses_is_an_error_naming_the_report(repo):
    write_project(repo, models={"n": model_entry("n", 32, [{"kind": "full", "count": 32, "kv_heads": 8,
                                                              "head_dim": 128}])})
    (repo / "reports").mkdir()
    (repo / "reports/q4.yaml").write_text(
        "id: q4\ntitle: Q4\nperiod: 2026 Q4\naudience: reviewers\nmodels:\n  - m\n  - n\nhardware: [hw]\n"
        "engines: [first-principles]\nweights_dtypes: [bf16]\nkv_dtypes: [bf16]\ntp: [1]\ncontexts: [8Ki]\n"
        "workload:\n  users: 10\n  context: 8Ki\n  tpot_ms: 50\n  hours_per_month: 730\n")
    commit(repo, "second model, a report")
    assert run("HEAD~1", "HEAD", "--project", str(repo)).exit_code == 0  # the report is valid as written
    (repo / "registry/models/n.yaml").unlink()
    commit(repo, "drop n")
    r = CliRunner().invoke(main, ["diff", "HEAD~1", "HEAD", "--project", str(repo)])
    assert r.exit_code == 1
    # The problem sits on the report's line naming the removed model ("  - n", line 7).
    line = line_of(repo / "reports/q4.yaml", "  - n")
    assert line == 7
    assert f"reports/q4.yaml:{line}:" in r.output and "'n'" in r.output, r.output


def test_working_tree_is_the_default_head(repo):
    write_yaml(repo / "registry/models/m.yaml", model(kv_heads=4))  # not committed
    out = diff_json(repo, "HEAD")
    assert out["head_label"] == "working tree"
    assert figure(out, "max_seqs", hardware_id="hw", weights_dtype="bf16", kv_dtype="bf16", tp=1,
                  context_tokens=32768)["new"] == 29


def test_two_directories(repo, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(repo, other, ignore=shutil.ignore_patterns(".git"))
    write_yaml(other / "registry/models/m.yaml", model(kv_heads=4))
    out = diff_json(repo, str(repo), str(other))
    assert [e["id"] for e in out["entries"]] == ["m"]


def test_threshold_hides_small_changes(repo):
    # 80 → 81 GiB usable moves pool_bytes by 1/58.1 ≈ 1.7 % and a few max_seqs by much more.
    write_yaml(repo / "hardware/hw.yaml", hardware_entry("hw", memory_marketed="80 GB", memory_usable="81 GiB"))
    commit(repo, "more memory")
    everything = diff_json(repo, "HEAD~1", "HEAD", "--all-scenarios")
    above = diff_json(repo, "HEAD~1", "HEAD", "--threshold", "5", "--all-scenarios")
    assert above["hidden_below_threshold"] > 0
    assert len(above["figures"]) + above["hidden_below_threshold"] == len(everything["figures"])
    assert all(f["pct"] is None or abs(f["pct"]) >= 5 for f in above["figures"])
    pools = [f for f in everything["figures"] if f["figure"] == "pool_bytes"]
    assert pools and all(f["new"] - f["old"] == GiB for f in pools)


def test_resident_model_change_reaches_the_hardware_it_lives_on(repo):
    host = hardware_entry("host", memory_marketed="96 GB", memory_usable="96 GB",
                          residents=[{"name": "draft model", "model": "n", "weights_dtype": "bf16"}])
    write_yaml(repo / "hardware/host.yaml", host)
    write_yaml(repo / "registry/models/n.yaml", model_entry("n", 2, [{"kind": "full", "count": 2, "kv_heads": 1,
                                                                        "head_dim": 64}], params_total=1e9))
    commit(repo, "host with a resident")
    write_yaml(repo / "registry/models/n.yaml", model_entry("n", 2, [{"kind": "full", "count": 2, "kv_heads": 1,
                                                                        "head_dim": 64}], params_total=2e9))
    commit(repo, "bigger resident")
    out = diff_json(repo, "HEAD~1", "HEAD", "--all-scenarios")
    on_host = [f for f in out["figures"] if f["keys"]["model_id"] == "m" and f["figure"] == "pool_bytes"]
    assert on_host and {(f["kind"], f["id"]) for f in on_host} == {("hardware", "host")}
    assert all(f["old"] - f["new"] == 2e9 for f in on_host)  # 1e9 more parameters × 2 bytes (bf16)


def test_bad_revision_is_a_usage_error(repo):
    r = CliRunner().invoke(main, ["diff", "no-such-rev", "--project", str(repo)])
    assert r.exit_code == 2
    assert "'no-such-rev' is neither a directory nor a git revision" in r.output


def test_invalid_head_exits_1_with_its_problems(repo):
    (repo / "registry/models/m.yaml").write_text((repo / "registry/models/m.yaml").read_text()
                                                 .replace("kv_heads: 8", "kv_heads: -8"))
    r = CliRunner().invoke(main, ["diff", "HEAD", "--project", str(repo)])
    assert r.exit_code == 1
    assert "HEAD working tree has problems:" in r.output
    assert f"registry/models/m.yaml:{line_of(repo / 'registry/models/m.yaml', 'kv_heads')}" in r.output


def test_no_changes_exit_0(repo):
    r = run("HEAD", "--project", str(repo))
    assert r.exit_code == 0 and "No registry changes." in r.output


def test_markdown_is_stable(repo, monkeypatch):
    # Stable against other work: compare only the capacity view, and leave the report hook out.
    from kvreg.diff import scenarios

    monkeypatch.setattr(scenarios, "VIEWS", (scenarios.ViewSpec("capacity", ("max_seqs", "naive_max_seqs",
                                                                              "pool_bytes", "seq_bytes")),))
    write_yaml(repo / "registry/models/m.yaml", model(kv_heads=4, url="https://example.org/v2.json"))
    write_yaml(repo / "hardware/big.yaml", hardware_entry("big", memory_marketed="192 GB", memory_usable="180 GiB"))
    commit(repo, "change")
    r = run("HEAD~1", "HEAD", "--project", str(repo), "--format", "markdown", "--top", "3", "--threshold", "1")
    assert r.exit_code == 0
    text = re.sub(r"\(([0-9a-f]{12})\)", "(SHA)", r.output)
    if os.environ.get("KVREG_UPDATE_GOLDEN"):  # pragma: no cover - regenerate, then review the diff
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_same_values_written_differently_are_not_a_change(repo):
    write_yaml(repo / "hardware/hw.yaml", hardware_entry("hw", memory_marketed={"value": "80000000000 B"},
                                                         memory_usable=80 * GiB))
    commit(repo, "rewrite units")
    out = diff_json(repo, "HEAD~1", "HEAD")
    assert out["entries"] == [] and out["has_changes"] is False


def test_markdown_collapsed_rows_respect_the_comment_size_budget(repo, monkeypatch):
    from kvreg.diff import diff_projects, render

    write_yaml(repo / "registry/models/m.yaml", model(kv_heads=4))
    commit(repo, "halve kv heads")
    result = diff_projects("HEAD~1", "HEAD", repo)
    full = render.render_markdown(result, top=3)
    monkeypatch.setattr(render, "DETAIL_BUDGET", 500)
    small = render.render_markdown(result, top=3)
    assert len(small) < len(full)
    detail_rows = small.split("<details>")[1].split("</details>")[0].count("\n| ") - 1  # minus the header row
    assert 0 < detail_rows <= 500 // 60
    assert f"… {len(result.figures) - 3 - detail_rows:,} more; run `kvreg diff` locally to see all." in small


def test_a_removed_key_points_at_its_base_line(repo):
    with_vocab = model() | {"vocab_size": 128256}
    write_yaml(repo / "registry/models/m.yaml", with_vocab)
    commit(repo, "vocab")
    base_line = line_of(repo / "registry/models/m.yaml", "vocab_size")
    write_yaml(repo / "registry/models/m.yaml", model())
    commit(repo, "drop vocab")
    [entry] = diff_json(repo, "HEAD~1", "HEAD")["entries"]
    assert entry["fields"] == [{"path": "vocab_size", "old": 128256, "new": None,
                                "file": "registry/models/m.yaml", "line": base_line}]


def commit_recommendation_flip(repo) -> None:
    """Two commits on ``repo``: a second accelerator hw2 and a report ranking hw and hw2, then hw's usable memory
    80 → 40 GiB, which moves the report's recommendation to hw2 (test_report_recommendation_flip_is_named)."""
    write_yaml(repo / "hardware/hw2.yaml", hardware_entry("hw2", memory_marketed="80 GB", memory_usable="80 GiB"))
    (repo / "reports").mkdir()
    (repo / "reports/q4.yaml").write_text(
        "id: q4\ntitle: Q4\nperiod: 2026 Q4\naudience: reviewers\nmodels: [m]\nhardware: [hw, hw2]\n"
        "engines: [first-principles]\nweights_dtypes: [bf16]\nkv_dtypes: [bf16]\ntp: [1]\ncontexts: [32Ki]\n"
        "workload:\n  users: 20\n  context: 32Ki\n  tpot_ms: 50\n  hours_per_month: 730\n")
    commit(repo, "second accelerator, a report")
    write_yaml(repo / "hardware/hw.yaml", hardware_entry("hw", memory_marketed="80 GB", memory_usable="40 GiB"))
    commit(repo, "less memory")


def test_report_recommendation_flip_is_named(repo):
    # Two equal accelerators; the report lists hw first, so hw wins the tie on devices. Shrinking hw's
    # usable memory to 40 GiB makes it need more devices, and the report's recommendation moves to hw2.
    commit_recommendation_flip(repo)
    out = diff_json(repo, "HEAD~1", "HEAD")
    assert out["reports_checked"] == ["q4"]
    seq = 32 * 8 * 256 * 2 * 32768  # bytes of one 32Ki sequence (bf16 KV)
    per_device = math.floor((80 * GiB - 6 * GiB - 8e9 * 2) / seq)  # 14 sequences
    devices = math.ceil(20 / per_device)  # 2
    assert (per_device, devices) == (14, 2)
    assert out["recommendations"] == [{"report": "q4", "model": "m",
                                       "old": ["hw", "first-principles", "bf16", "bf16", 1, devices],
                                       "new": ["hw2", "first-principles", "bf16", "bf16", 1, devices]}]
    text = run("HEAD~1", "HEAD", "--project", str(repo)).output
    assert ("report q4, model m: hw · first-principles · w:bf16 · kv:bf16 · TP1 · 2 devices → "
            "hw2 · first-principles · w:bf16 · kv:bf16 · TP1 · 2 devices") in text
    # A change to an entry the report names is checked; a source-only change flips nothing.
    write_yaml(repo / "registry/models/m.yaml", model(url="https://example.org/other.json"))
    assert "Report recommendations (q4): none flips." in run("HEAD", "--project", str(repo)).output


def test_a_bounded_fetch_renders_what_the_full_result_renders(repo, monkeypatch):
    # The CLI fetches only the rows it prints (render.rows_needed); counts come from the SQL summaries.
    from kvreg.diff import diff_projects, render

    write_yaml(repo / "registry/models/m.yaml", model(kv_heads=4))
    commit(repo, "halve kv heads")
    full = diff_projects("HEAD~1", "HEAD", repo, threshold_pct=50)
    monkeypatch.setattr(render, "DETAIL_ROWS", 2)
    assert render.rows_needed("markdown", 1) == 3 and render.rows_needed("text", 3) == 3
    assert render.rows_needed("json", 3) is None and render.rows_needed("text", 0) is None
    bounded = diff_projects("HEAD~1", "HEAD", repo, threshold_pct=50, figure_rows=3)
    assert len(full.figures) > 2 * len(bounded.figures) > 0  # it really was cut
    per_view: dict = {}
    for f in bounded.figures:
        per_view[(f.view, f.kind, f.id)] = per_view.get((f.view, f.kind, f.id), 0) + 1
    assert max(per_view.values()) == 3
    assert (bounded.summaries, bounded.hidden_below_threshold) == (full.summaries, full.hidden_below_threshold)
    assert full.hidden_below_threshold > 0 and full.figures_moved() == len(full.figures)
    assert render.render_text(bounded, top=3) == render.render_text(full, top=3)
    assert render.render_markdown(bounded, top=1) == render.render_markdown(full, top=1)
    assert '"figure_rows": 3' in render.render_json(bounded) and "figure_rows" not in render.render_json(full)


def test_summary_counts_add_up_and_a_count_to_zero_is_not_a_percentage():
    """F6/F7: 278,395 max_seqs that went to 0 are 'no longer fit', not −100 %; the classes add up."""
    from kvreg.diff.model import FigureSummary
    from kvreg.diff.render import classes_text, range_text, signed_pct

    gone = FigureSummary("capacity", "hardware", "h100-sxm-80gb", "max_seqs", 278_395, 0, 0, None, None,
                         no_longer_fit=278_395)
    assert classes_text(gone) == "0 up, 0 down, 278,395 no longer fit, 0 now fit"
    assert range_text(gone) == "no % range"
    mixed = FigureSummary("roofline", "hardware", "h100-sxm-80gb", "decode_tok_per_s", 57_240, 0, 52_779,
                          -12.5, -0.031, no_longer_fit=4_461)
    assert mixed.up + mixed.down + mixed.no_longer_fit + mixed.now_fit == mixed.count
    assert range_text(mixed) == "-12.5% … -0.031%"
    assert signed_pct(-0.04) == "-0.04%" and signed_pct(2.84) == "+2.8%" and signed_pct(0.0) == "+0.0%"


def test_focus_leaves_out_draft_heads_and_tp_sizes_the_planner_refuses(tmp_path):
    """F8: the largest moves were a one-layer draft head's and TP 16 on a link domain of 2; both are left out, by
    the planner's own test (plan_scope, 118: draft_for and the tp_planned macro), and counted."""
    root = tmp_path / "proj"
    draft = model_entry("d", 1, [{"kind": "full", "count": 1, "kv_heads": 8, "head_dim": 128}],
                        native_context=131072, draft_for="m", sources=[{"id": "fixture", "url": "https://e.org/d"}])
    link = {"name": "bridge", "bandwidth": "100 GB/s", "domain_size": 2}

    def hw(usable: str) -> dict:
        return hardware_entry("hw", memory_marketed="80 GB", memory_usable=usable, interconnect=link)

    write_project(root, models={"m": model(), "d": draft}, hardware={"hw": hw("80 GiB")},
                  engines={"first-principles": engine_entry()})
    git(root, "init", "-q")
    commit(root, "base")
    write_yaml(root / "hardware/hw.yaml", hw("79 GiB"))
    commit(root, "less usable memory")
    out = diff_json(root, "HEAD~1", "HEAD")
    shown = [(f["keys"]["model_id"], f["keys"]["tp"]) for f in out["figures"]]
    assert shown and {m for m, _ in shown} == {"m"} and {tp for _, tp in shown} == {1, 2}
    # What was left out is what the uncut comparison moves there: capacity's focused figures (bf16, the model's
    # weights; contexts within its native 128Ki) on the draft head, or at TP 4, 8, 16 (wider than the domain of 2)
    full = diff_json(root, "HEAD~1", "HEAD", "--all-scenarios")
    moved = [f for f in full["figures"] if f["view"] == "capacity" and f["figure"] in ("max_seqs", "naive_max_seqs")
             and f["keys"]["weights_dtype"] == "bf16" and f["keys"]["context_tokens"] <= 131072]
    draft_moved = sum(f["keys"]["model_id"] == "d" for f in moved)
    tp_moved = sum(f["keys"]["model_id"] == "m" and f["keys"]["tp"] > 2 for f in moved)
    [capacity] = [v for v in out["views"] if v["view"] == "capacity"]
    assert capacity["left_out"] == {"draft_head": draft_moved, "tp_refused": tp_moved}
    assert draft_moved > 0 and tp_moved > 0
    assert out["left_out"]["draft_head"] >= draft_moved and out["left_out"]["tp_refused"] >= tp_moved
    text = run("HEAD~1", "HEAD", "--project", str(root)).output
    assert (f"Left out of the focus: {sum(out['left_out'].values()):,} changes: {out['left_out']['draft_head']:,} on"
            f" draft heads") in text
    assert f"{out['left_out']['tp_refused']:,} at TP sizes kvreg plan refuses" in text
