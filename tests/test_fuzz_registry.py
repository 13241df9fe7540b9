"""Fuzz: mutations of the shipped registry entries never give a traceback (issue 15, item 4).

Every mutated entry ends in a validated entry or in problems that name the file and a line ≥ 1;
mutants that still validate are then built together into one database and every column of the
main views is computed, so a value that passes the schema cannot break the SQL either.
Cases: 600 single-entry mutations (value, key and raw-text edits) + 4 builds of ~24 mutants.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from kvreg.problems import KvregError
from kvreg.registry import KINDS, _validate
from kvreg.yamlsrc import parse_text
from tests.fuzz_tools import RAW_YAML, VALUES, deleted, fuzz_settings, leaves, replaced

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = [(kind, p) for kind in KINDS for p in sorted((ROOT / kind.folder).glob("*.yaml"))]
TEXTS = {p: p.read_text() for _, p in ENTRIES}


@st.composite
def mutated(draw, kinds=None):
    """(kind, path, text): one real entry with one hostile edit."""
    pool = [e for e in ENTRIES if kinds is None or e[0].name in kinds]
    kind, path = draw(st.sampled_from(pool))
    text = TEXTS[path]
    how = draw(st.sampled_from(["value", "value", "delete", "add", "raw", "line", "insert"]))
    if how in ("value", "delete", "add"):
        data = yaml.safe_load(text)
        spots = [(p, v) for p, v in leaves(data) if p]
        where, _ = draw(st.sampled_from(spots))
        if how == "value":
            data = replaced(data, where, draw(VALUES))
        elif how == "delete":
            data = deleted(data, where)
        else:
            parent = where[:-1]
            target = dict(leaves(data))[parent]
            if isinstance(target, dict):
                data = replaced(data, parent, {**target, draw(st.sampled_from(["kv_head", "extra", "notes"])):
                                               draw(VALUES)})
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    else:
        lines = text.splitlines()
        i = draw(st.integers(0, len(lines) - 1))
        if how == "raw" and ":" in lines[i]:
            key = lines[i].split(":", 1)[0]
            lines[i] = f"{key}: {draw(RAW_YAML)}"
        elif how == "line":
            lines.insert(i, lines[i]) if draw(st.booleans()) else lines.pop(i)
        else:
            col = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:col] + draw(RAW_YAML) + lines[i][col:]
        text = "\n".join(lines) + "\n"
    return kind, path, text


def check_one(kind, path: Path, text: str):
    """Parse and validate ``text`` as the entry at ``path``: an entry, or located problems."""
    display = path.relative_to(ROOT).as_posix()
    doc, problems = parse_text(text, display)
    entry = _validate(kind, path, display, doc, problems)
    if entry is None or problems:
        assert problems, "invalid without a problem"
        for p in problems:
            assert p.file == display and p.line >= 1 and p.code and p.message, p
    return entry


@fuzz_settings(600)
@given(mutated())
def test_mutated_entries_validate_or_give_located_problems(case):
    check_one(*case)


@fuzz_settings(4)
@given(st.lists(mutated(kinds=("model",)), min_size=12, max_size=12),
       st.lists(mutated(kinds=("hardware",)), min_size=12, max_size=12))
def test_mutants_that_validate_also_build_and_compute(tmp_path_factory, models, hardware):
    """Valid mutants, renamed apart, build one database whose main views compute every column."""
    from kvreg.build import memory_connection

    root = tmp_path_factory.mktemp("fuzzbuild")
    for rel in ("registry/engines/first-principles.yaml", "registry/models/llama-3.1-8b.yaml",
                "registry/models/llama-3.1-8b.config.json",
                "hardware/h100-sxm-80gb.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    kept = 0
    for n, (kind, path, text) in enumerate(models + hardware):
        if check_one(kind, path, text) is None:
            continue
        data = yaml.safe_load(text)
        new_id = f"fz-{kind.name}-{n}"
        data["id"] = new_id
        (root / kind.folder / f"{new_id}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        kept += 1
    try:
        con = memory_connection(root)
    except KvregError as exc:  # cross-entry problems are fine, when located
        assert all(p.file and p.line >= 1 for p in exc.problems), exc.render()
        return
    for view in ("capacity", "kv_sequence_costs", "costs"):
        con.execute(f"SELECT max(COLUMNS(*)) FROM {view}").fetchall()
    con.close()
