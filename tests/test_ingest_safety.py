"""ingest-log never destroys and never tracebacks (issue 15 item 2): refusal without --force, curated
fields kept with it, ids checked, umask honoured, excerpts not logs, and hypothesis mutations of a
real vLLM 0.19.0 startup log ending in exit 0 or a located exit 1/2."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from kvreg.cli import main
from kvreg.ingest import check_entry, observation_from_log
from kvreg.logparse import LogError

ROOT = Path(__file__).resolve().parents[1]
# the lines kvreg read from a real log (shipped observation excerpt, numbers stripped): a real startup
REAL = "\n".join(ln.partition(": ")[2] for ln in yaml.safe_load(
    (ROOT / "registry/observations/v0.19-h100-phi-4-tp1.yaml").read_text())["excerpt"].splitlines()) + "\n"
# the config line in full (the excerpt keeps only its head): TP, PP, dtype, quantization, KV dtype, eager
CONFIG = ("(EngineCore pid=283) INFO 04-22 15:12:23 [v1/engine/core.py:105] Initializing a V1 LLM engine (v0.19.0) "
          "with config: model='microsoft/phi-4', speculative_config=None, tokenizer='microsoft/phi-4', "
          "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, pipeline_parallel_size=1, "
          "data_parallel_size=1, quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda\n")
FULL = CONFIG + REAL


@pytest.fixture()
def project(tmp_path):
    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    (tmp_path / "registry/models").mkdir(parents=True)
    for ext in (".yaml", ".config.json"):
        shutil.copy(ROOT / f"registry/models/phi-4{ext}", tmp_path / f"registry/models/phi-4{ext}")
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_real_log_settings_from_its_own_lines(project):
    log = project / "phi4.log"
    log.write_text(FULL)
    r = run("ingest-log", log, "--project", project, "--hardware", "h100-sxm-80gb")
    assert r.exit_code == 0, r.output
    e = yaml.safe_load((project / "registry/observations/phi4.yaml").read_text())
    assert e["settings"] == {"tp": 1, "pp": 1, "dp": 1, "max_model_len": 8192, "gpu_memory_utilization": 0.95,
                             "max_num_batched_tokens": 8192, "max_num_seqs": 1024, "enforce_eager": False,
                             "dtype": "bf16"}
    assert "settings.tp" not in e.get("unknown", [])
    assert e["engine"] == "vllm-0.17-0.19" and e["release_confidence"] == "stated"
    assert e["logged"]["activation_peak_gib"] == 1.52 and e["logged"]["cuda_graph_memory_gib"] == 1.07
    assert e["excerpt"].startswith("1: (EngineCore pid=283)")


def test_existing_id_is_refused_then_force_keeps_curated_fields(project):
    log = project / "phi4.log"
    log.write_text(FULL)
    assert run("ingest-log", log, "--project", project).exit_code == 0
    path = project / "registry/observations/phi4.yaml"
    e = yaml.safe_load(path.read_text())
    e["hardware"] = "h100-sxm-80gb"
    e["notes"] = "curated: run by hand on node 7"
    e["unknown"] = [u for u in e["unknown"] if u != "hardware"]
    path.write_text(yaml.safe_dump(e, sort_keys=False))
    before = path.read_bytes()
    log.write_text(FULL.replace("GPU KV cache size: 241,568 tokens", "GPU KV cache size: 241,584 tokens"))
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 2 and "phi4.yaml exists" in r.output and "--force" in r.output
    assert path.read_bytes() == before                                   # untouched
    r = run("ingest-log", log, "--project", project, "--force")
    assert r.exit_code == 0, r.output
    assert "kept from the replaced phi4.yaml: hardware, notes" in r.output
    e = yaml.safe_load(path.read_text())
    assert e["logged"]["kv_cache_tokens"] == 241584                      # the new log's figure
    assert e["hardware"] == "h100-sxm-80gb" and e["notes"] == "curated: run by hand on node 7"
    assert "hardware" not in e.get("unknown", [])
    assert run("validate", "--project", project).exit_code == 0


def test_a_log_ingested_again_under_another_id_writes_nothing(project):
    # trial10: the same startup ingested under its file-name id wrote a second copy, and validate then blamed the
    # curated file ("duplicate-observation … remove one of the two")
    log = project / "phi4.log"
    log.write_text(FULL)
    assert run("ingest-log", log, "--project", project, "--id", "curated-phi4").exit_code == 0
    curated = project / "registry/observations/curated-phi4.yaml"
    before = curated.read_bytes()
    r = run("ingest-log", log, "--project", project)          # id phi4 from the file name
    assert r.exit_code == 2, r.output
    assert "already registry/observations/curated-phi4.yaml" in r.output and "nothing written" in r.output
    assert "--id curated-phi4 --force" in r.output
    assert not (project / "registry/observations/phi4.yaml").exists() and curated.read_bytes() == before
    assert run("validate", "--project", project).exit_code == 0
    # the command it names refreshes the curated file, whose "log" source stays the one source of that id
    e = yaml.safe_load(before)
    e["sources"] = [{"id": "log", "url": "https://example.org/run-7"}]
    curated.write_text(yaml.safe_dump(e, sort_keys=False))
    r = run("ingest-log", log, "--project", project, "--id", "curated-phi4", "--force")
    assert r.exit_code == 0, r.output
    assert yaml.safe_load(curated.read_text())["sources"] == [{"id": "log", "url": "https://example.org/run-7"}]


def test_a_duplicate_without_an_available_figure_is_refused_with_a_whole_message(project):
    # trial11 #2: a log whose "Available KV cache memory" is unreadable ("nan GiB") gave check 206 a NULL figure,
    # format() a NULL message; ingested again under an id sorting first, the copy was written (rc 0) and validate
    # blamed the earlier file with "logged: ".
    log = project / "nan.log"
    log.write_text(FULL.replace("Available KV cache memory: 46.08 GiB", "Available KV cache memory: nan GiB"))
    assert run("ingest-log", log, "--project", project, "--id", "t11-huge").exit_code == 0
    r = run("ingest-log", log, "--project", project)            # id "nan" sorts before "t11-huge"
    assert r.exit_code == 2, r.output
    assert "already registry/observations/t11-huge.yaml" in r.output and "--id t11-huge --force" in r.output
    assert not (project / "registry/observations/nan.yaml").exists()
    # the message itself, on a copy written by hand: every figure named, the missing one as "not logged"
    e = yaml.safe_load((project / "registry/observations/t11-huge.yaml").read_text())
    e["id"] = "a-copy"
    (project / "registry/observations/a-copy.yaml").write_text(yaml.safe_dump(e, sort_keys=False))
    r = run("validate", "--project", project)
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert ("(available not logged, 15098 blocks, 241568 tokens, concurrency 29.49)" in r.output), r.output


@pytest.mark.parametrize("bad", ["Bad_ID", "-x", "a b", "ÿ"])
def test_invalid_id_is_a_usage_error(project, bad):
    log = project / "phi4.log"
    log.write_text(FULL)
    r = run("ingest-log", log, "--project", project, "--id", bad)
    assert r.exit_code == 2 and "is not a valid id" in r.output and r.exception is None or \
        isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.output
    assert not list((project / "registry").glob("observations/*.yaml"))


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_with_the_users_umask(project, umask, mode):
    log = project / "phi4.log"
    log.write_text(FULL)
    old = os.umask(umask)
    try:
        assert run("ingest-log", log, "--project", project).exit_code == 0
    finally:
        os.umask(old)
    assert (project / "registry/observations/phi4.yaml").stat().st_mode & 0o777 == mode


def test_a_50_mb_log_becomes_a_small_observation(project):
    log = project / "big.log"
    filler = "(EngineCore pid=283) DEBUG 04-22 15:13:07 [compilation/backends.py:1074]  'VLLM_SOME_FLAG': False,\n"
    with open(log, "w") as fh:
        fh.write(CONFIG)
        fh.write(filler * (25 * 2 ** 20 // len(filler)))
        fh.write(REAL)
        fh.write(filler * (25 * 2 ** 20 // len(filler)))
    assert log.stat().st_size > 50 * 10 ** 6
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 0, r.output
    out = project / "registry/observations/big.yaml"
    assert out.stat().st_size < 12_000
    e = yaml.safe_load(out.read_text())
    n = int(next(ln for ln in e["excerpt"].splitlines() if "GPU KV cache size" in ln).split(":")[0])
    k = next(i for i, ln in enumerate(REAL.splitlines()) if "GPU KV cache size" in ln)
    assert n == 1 + 25 * 2 ** 20 // len(filler) + k + 1                 # its line number in the big log


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_pipe_or_device_is_refused_before_it_is_opened(project, kind):
    # trial11 #3: `ingest-log /dev/zero` grew to 14.3 GB RSS; a named pipe hung.  Refused from stat alone (rc 2).
    path = {"fifo": project / "fifo.log", "device": Path("/dev/zero"), "directory": project / "d.log"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    r = run("ingest-log", path, "--project", project)
    want = {"fifo": "is a named pipe", "device": "is a device", "directory": "is a directory"}[kind]
    assert r.exit_code == 2 and want in r.output and "Traceback" not in r.output, r.output
    assert not (project / "registry/observations").exists() or not list((project / "registry/observations").iterdir())


@pytest.mark.parametrize("kind", ["fifo", "device", "index-device"])
def test_import_hf_refuses_a_pipe_or_device_as_ingest_log_does(tmp_path, kind):
    # attack trial (issue 15): `import-hf /dev/zero --stdout` ate memory without bound, a named pipe hung:
    # the config and --weights-index go through kvreg.userfiles (the guard ingest-log uses), never opened
    config = ROOT / "registry/models/llama-3.1-8b.config.json"
    args = {"fifo": [tmp_path / "fifo.json"], "device": ["/dev/zero"],
            "index-device": [config, "--weights-index", "/dev/zero"]}[kind]
    if kind == "fifo":
        os.mkfifo(tmp_path / "fifo.json")
    r = run("import-hf", *args, "--stdout")
    want = {"fifo": "unreadable-config: " + str(tmp_path / "fifo.json") + " is a named pipe",
            "device": "unreadable-config: /dev/zero is a device",
            "index-device": "unreadable-index: metadata.total_size: cannot read metadata.total_size: /dev/zero is a device"}
    assert r.exit_code == 1 and want[kind] in r.output and "Traceback" not in r.output, r.output


def test_import_hf_reads_a_config_saved_with_a_byte_order_mark(tmp_path):
    # a UTF-8 BOM (Windows editors) was "pass the model's config.json (a JSON object)"; it is the same JSON
    config = tmp_path / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + (ROOT / "registry/models/llama-3.1-8b.config.json").read_bytes())
    r = run("import-hf", config, "--stdout")
    assert r.exit_code == 0 and "kv_heads: 8" in r.output, r.output


def test_a_log_over_64_mib_is_refused_naming_the_bound(project):
    log = project / "huge.log"
    with open(log, "wb") as fh:
        fh.write(FULL.encode())
        fh.truncate(64 * 2 ** 20 + 1)                                 # sparse: one byte over, nothing held
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "67,108,865 bytes, more than the 64 MiB (67,108,864 bytes) ingest-log reads" in r.output
    assert not (project / "registry/observations/huge.yaml").exists()


def test_a_log_that_grows_past_the_bound_while_read_stops_at_it(project, monkeypatch):
    # the stat said small, the file then grew: the line reader stops at 64 MiB, not at the end of the file
    import kvreg.ingest as ing

    monkeypatch.setattr(ing, "MAX_LOG_BYTES", len(FULL.encode()) - 10)
    log = project / "grow.log"
    log.write_text(FULL)
    with pytest.raises(LogError, match="over 64 MiB"):
        list(ing.read_log_lines(log))
    monkeypatch.setattr(ing, "MAX_LOG_BYTES", len(FULL.encode()))
    assert "".join(ing.read_log_lines(log)) == FULL


def test_conflicting_token_lines_exit_1_naming_both(project):
    log = project / "two.log"
    log.write_text(FULL + "(EngineCore pid=283) INFO [v1/core/kv_cache_utils.py:1319] GPU KV cache size: "
                   "999,999 tokens\n")
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 1
    assert re.search(r"line \d+ says 241568 .* but line \d+ says 999999", r.output)
    assert not (project / "registry/observations/two.yaml").exists()


# --- hypothesis: mutations of the real log -----------------------------------------------------

_LINES = FULL.splitlines(keepends=True)


@st.composite
def mutated_log(draw):
    lines = list(_LINES)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["delete", "duplicate", "number", "truncate", "insert", "swap", "chars"]))
        i = draw(st.integers(0, len(lines) - 1)) if lines else 0
        if not lines:
            lines = [draw(st.text(max_size=80))]
            continue
        if op == "delete":
            lines.pop(i)
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "number":
            nums = list(re.finditer(r"[0-9][0-9,.]*", lines[i]))
            if nums:
                m = draw(st.sampled_from(nums))
                new = draw(st.sampled_from(["0", "-1", "1e400", "99999999999999999999999", "nan", "1,2,3", "", ".",
                                            str(draw(st.integers(-10 ** 6, 10 ** 12)))]))
                lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
        elif op == "truncate":
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
            lines = lines[:i + 1]
        elif op == "insert":
            lines.insert(i, draw(st.text(max_size=120)) + "\n")
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "chars":
            s = lines[i]
            k = draw(st.integers(0, len(s)))
            lines[i] = s[:k] + draw(st.text(alphabet="{}()[]',=:x0 \t\x00é", max_size=6)) + s[k:]
    return "".join(lines)


@pytest.fixture(scope="module")
def registry(shipped_registry):
    return shipped_registry


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(text=mutated_log())
def test_mutated_logs_give_an_entry_or_a_located_error(registry, text):
    try:
        entry, msgs = observation_from_log(text, registry, obs_id="m", source={"title": "fuzz"},
                                           hardware="h100-sxm-80gb")
        check_entry(entry)
    except LogError as exc:
        assert str(exc)                                                 # a message, never a bare error
        return
    assert entry["logged"] and isinstance(msgs, list)
    yaml.safe_dump(entry)                                               # writable


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(text=mutated_log())
def test_mutated_logs_through_the_cli_exit_0_1_or_2(tmp_path_factory, text):
    proj = tmp_path_factory.mktemp("fz")
    for sub in ("registry/engines", "hardware"):
        shutil.copytree(ROOT / sub, proj / sub)
    (proj / "registry/models").mkdir(parents=True)
    log = proj / "m.log"
    log.write_text(text, errors="surrogateescape")
    r = run("ingest-log", log, "--project", proj)
    assert r.exit_code in (0, 1, 2), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    if r.exit_code == 1:
        assert r.output.startswith(f"error: {log}:")


@pytest.mark.parametrize("old, new, message", [
    ("GPU KV cache size: 241,568 tokens", "GPU KV cache size: 99999999999999999999999 tokens",
     "logged.kv_cache_tokens = 99999999999999999999999 from the log (line "),
    ("tensor_parallel_size=1,", "tensor_parallel_size=2.5,", "tp is '2.5', not an integer"),
    # trial11 #4: a negative pool beside a cache size, a pool of nothing that "started", a pool past the device
    ("Available KV cache memory: 46.08 GiB", "Available KV cache memory: -47.00 GiB",
     "logged.available_kv_cache_memory_gib from the log (line 11) is not valid: available_kv_cache_memory_gib -47.0 "
     "is not positive, yet kv_cache_tokens is 241568"),
    ("GPU KV cache size: 241,568 tokens", "GPU KV cache size: 0 tokens",
     "logged.kv_cache_tokens from the log (line 12) is not valid: kv_cache_tokens is 0: a pool that holds nothing"),
    ("Available KV cache memory: 46.08 GiB", "Available KV cache memory: 146.08 GiB",
     "available_kv_cache_memory_gib 146.08 is beyond the device's total memory (total_gpu_memory_gib 79.19)"),
    ("worker requested memory: 75.23GiB", "worker requested memory: 45.23GiB",
     "available_kv_cache_memory_gib 46.08 exceeds requested_memory_gib 45.23"),
    ("Model loading took 27.39 GiB", "Model loading took -27.39 GiB", "logged.model_loading_gib = '-27.39'"),
    # a TP that does not split the model's 40 heads: no engine starts so (check 207 over kvreg/sql/037)
    ("tensor_parallel_size=1,", "tensor_parallel_size=3,",
     "observation-tp-split: tp 3 does not split phi-4's heads (40 query heads)"),
    ("tensor_parallel_size=1,", "tensor_parallel_size=0,", "settings.tp = '0' from the log"),
    ("'gpu_memory_utilization': 0.95", "'gpu_memory_utilization': 9.5", "settings.gpu_memory_utilization"),
    ("'max_model_len': 8192", "'max_model_len': [8192", "not a complete Python dict"),
])
def test_implausible_values_from_the_log_are_located_errors(project, old, new, message):
    assert old in FULL
    log = project / "bad.log"
    log.write_text(FULL.replace(old, new))
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 1, r.output
    assert message in r.output and "Traceback" not in r.output
    assert not (project / "registry/observations/bad.yaml").exists()


@pytest.mark.parametrize("value", ["1e30", "nan", "inf"])
def test_a_figure_that_is_not_a_printed_number_is_left_out_with_a_note(project, value):
    # trial11 #4: "Available KV cache memory: 1e30 GiB" was dropped without a word
    log = project / "odd.log"
    log.write_text(FULL.replace("Available KV cache memory: 46.08 GiB", f"Available KV cache memory: {value} GiB"))
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 0, r.output
    assert f"line 11: available_kv_cache_memory_gib '{value}' is not a number as vLLM prints one" in r.output
    e = yaml.safe_load((project / "registry/observations/odd.yaml").read_text())
    assert "available_kv_cache_memory_gib" not in e["logged"] and e["logged"]["kv_cache_tokens"] == 241568


def test_the_real_failed_start_with_negative_memory_still_validates():
    # vllm#23278 (registry/observations/vllm-log-53.yaml): -2.14 GiB, no cache size, started false: a real start
    from kvreg.schema.observation import ObservationEntry

    e = yaml.safe_load((ROOT / "registry/observations/vllm-log-53.yaml").read_text())
    assert e["logged"]["available_kv_cache_memory_gib"] == -2.14
    ObservationEntry.model_validate(e)
    e["logged"]["started"] = None                                  # but not as a start that went on
    with pytest.raises(ValueError, match="available_kv_cache_memory_gib is -2.14: a pool that holds nothing"):
        ObservationEntry.model_validate(e)


def test_an_unknown_model_hint_names_the_config_import_hf_reads(project):
    # trial11 #12: the hint said "kvreg import-hf evil/x<script> can write it"; import-hf takes a config.json
    log = project / "unk.log"
    log.write_text(FULL.replace("microsoft/phi-4", "acme/Widget-7B"))
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 0, r.output
    assert ("model 'widget-7b' is not in the registry: add registry/models/widget-7b.yaml before calibrating "
            "(kvreg import-hf CONFIG.json --hf-id acme/Widget-7B --id widget-7b writes it") in r.output


def test_speculative_config_from_the_config_line(project):
    log = project / "spec.log"
    log.write_text(FULL.replace("speculative_config=None", "speculative_config=SpeculativeConfig(method='eagle3', "
                                "model='yuhuili/EAGLE3-phi-4', num_spec_tokens=3)"))
    r = run("ingest-log", log, "--project", project)
    assert r.exit_code == 0, r.output
    assert "speculative decoding is on: set settings.draft_model" in r.output
    e = yaml.safe_load((project / "registry/observations/spec.yaml").read_text())
    assert e["settings"]["num_speculative_tokens"] == 3
    assert e["settings"]["speculative"] == {"method": "eagle3", "model": "yuhuili/EAGLE3-phi-4"}


def test_a_checkpoint_the_registry_lists_names_the_model_and_its_weights_dtype(project):
    """The fp8-dynamic checkpoint logs quantization=compressed-tensors, which does not fix the weights
    dtype; the model entry listing that checkpoint (HF ids compare case-insensitively) does."""
    from kvreg.schema import model as model_schema

    if not hasattr(model_schema, "Checkpoint"):
        pytest.skip("model entries list checkpoints from the ckpt branch on")
    m = yaml.safe_load((ROOT / "registry/models/llama-3.3-70b.yaml").read_text())
    if not any("fp8-dynamic" in (c.get("hf_id") or "").lower() for c in m.get("checkpoints") or []):
        pytest.skip("llama-3.3-70b lists no fp8-dynamic checkpoint")
    for ext in (".yaml", ".config.json"):
        shutil.copy(ROOT / f"registry/models/llama-3.3-70b{ext}", project / f"registry/models/llama-3.3-70b{ext}")
    log = project / "l70.log"
    log.write_text(FULL.replace("microsoft/phi-4", "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic")
                   .replace("quantization=None", "quantization=compressed-tensors"))
    # phi-4's pool under a 70B name: 46.08 GiB of 70B blocks (80 layers × 8 KV heads × 128 × 2 × 2 B × 16 tokens
    # = 5,242,880 B) is 9,436–9,438 blocks, not phi-4's 15,098, so check 208 refuses the made-up log ...
    r = run("ingest-log", log, "--project", project, "--hardware", "h100-sxm-80gb")
    assert r.exit_code == 1 and "9,436–9,438 blocks" in r.output, r.output
    # ... and --force keeps it, saying so; what this test is about is the model and weights dtype it names
    r = run("ingest-log", log, "--project", project, "--hardware", "h100-sxm-80gb", "--force")
    assert r.exit_code == 0, r.output
    e = yaml.safe_load((project / "registry/observations/l70.yaml").read_text())
    assert e["model"] == "llama-3.3-70b" and e["settings"]["weights_dtype"] == "fp8"
    assert "logged.num_gpu_blocks 15,098" in e["figures_disagree"]
    assert "settings.weights_dtype" not in e.get("unknown", [])


def test_force_keeps_a_curated_model_over_a_name_derived_from_the_log():
    from kvreg.ingest import keep_curated

    new = {"id": "x", "model": "foo-instruct", "inferred": {"model": "id derived from the logged model name O/Foo-Instruct",
                                                              "engine": "version 0.19.0 printed at line 3"},
           "unknown": ["hardware"], "settings": {"tp": 1}, "sources": [{"title": "log"}], "engine": "vllm-0.17-0.19",
           "release_confidence": "stated"}
    old = {"id": "x", "model": "foo", "hardware": "h100-sxm-80gb", "settings": {"tp": 2, "kv_dtype": "fp8"},
           "engine": "vllm-v0", "inferred": {"hardware": "GPU named 'H100'"}, "sources": [{"url": "https://x.org/1"}]}
    out, kept = keep_curated(new, old)
    assert kept == ["model", "hardware", "inferred", "settings.kv_dtype"]
    assert out["model"] == "foo" and out["hardware"] == "h100-sxm-80gb" and "unknown" not in out
    assert out["engine"] == "vllm-0.17-0.19"                       # a printed version beats the old choice
    assert out["settings"] == {"tp": 1, "kv_dtype": "fp8"}         # the log's tp, the curated kv dtype
    assert out["inferred"] == {"hardware": "GPU named 'H100'", "engine": "version 0.19.0 printed at line 3"}
    assert out["sources"] == [{"url": "https://x.org/1"}, {"title": "log"}]


def test_hardware_left_open_suggests_the_entries_with_the_logged_memory(registry):
    # the new-user trial (F12): "(total memory 79.19 GiB)" and nothing more, though it names the H100s.
    # hardware/h100-*-80gb.yaml: memory_usable 81,089 MiB (SXM) and 81,091 MiB (PCIe), both 79.19 GiB at vLLM's
    # two decimals; a figure no entry has gets no guess.
    def gpu_line(text):
        _, msgs = observation_from_log(text, registry, obs_id="t", source={"title": "t"})
        return next(m for m in msgs if m.startswith("the log does not name the GPU"))

    assert "79.19" in FULL and gpu_line(FULL).endswith(
        "(total memory 79.19 GiB; did you mean h100-pcie-80gb (memory_usable 81,091 MiB = 79.19 GiB)"
        " or h100-sxm-80gb (memory_usable 81,089 MiB = 79.19 GiB)?)")
    # (a total above the log's 46.08 GiB pool: a smaller one is refused, kv-pool-not-a-start)
    assert gpu_line(FULL.replace("79.19", "99.19")).endswith("(total memory 99.19 GiB)")


def test_a_config_line_cut_after_a_key_is_a_located_error(registry):
    # found by the fuzz suite (test_mutated_logs_give_an_entry_or_a_located_error): a config line ending in
    # "enforce_eager=" made _config_value index an empty string (IndexError); an empty value is a truncated log
    cut = next(ln for ln in FULL.splitlines() if "enforce_eager=" in ln)
    cut = cut[:cut.index("enforce_eager=") + len("enforce_eager=")]
    text = FULL.replace(next(ln for ln in FULL.splitlines() if "enforce_eager=" in ln), cut)
    n = next(i for i, ln in enumerate(text.splitlines(), 1) if ln == cut)
    with pytest.raises(LogError, match=rf"line {n}: the engine config line gives no value for enforce_eager="):
        observation_from_log(text, registry, obs_id="t", source={"title": "t"})
