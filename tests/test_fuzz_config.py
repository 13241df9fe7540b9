"""Fuzz: mutations of the config.json fixtures never give a traceback in import-hf (issue 15, item 4).

Each case replaces, deletes or adds one key of a real checkpoint's config (tests/fixtures/hf),
or damages the JSON text; ``import_config`` must return an entry that passes the model schema,
or raise KvregError whose problems name the file and a line ≥ 1.  Cases: 350.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kvreg.importhf import import_config
from kvreg.problems import KvregError
from kvreg.schema.model import ModelEntry
from tests.fuzz_tools import VALUES, deleted, fuzz_settings, leaves, replaced

FIXTURES = sorted((Path(__file__).parent / "fixtures/hf").glob("*.json"))
CONFIGS = {p: json.loads(p.read_text()) for p in FIXTURES}
HOT_KEYS = ["num_key_value_heads", "num_attention_heads", "head_dim", "hidden_size", "num_hidden_layers",
            "vocab_size", "max_position_embeddings", "sliding_window", "layer_types", "kv_lora_rank",
            "qk_rope_head_dim", "n_routed_experts", "num_experts", "intermediate_size", "torch_dtype",
            "model_type", "architectures", "text_config", "rope_scaling", "tie_word_embeddings"]


@st.composite
def mutated_config(draw):
    """(fixture path, JSON text) of one config with one hostile edit."""
    path = draw(st.sampled_from(FIXTURES))
    data = CONFIGS[path]
    how = draw(st.sampled_from(["value", "value", "hot", "delete", "text"]))
    if how == "text":
        text = json.dumps(data, indent=2)
        i = draw(st.integers(0, len(text)))
        return path, text[:i] + draw(st.sampled_from(["", "{", "]", '"', "NaN", "Infinity", "-", "\\u0000", ","])) \
            + text[i + draw(st.integers(0, 5)):]
    spots = [(p, v) for p, v in leaves(data) if p]
    if how == "hot":
        key = draw(st.sampled_from(HOT_KEYS))
        where = ("text_config", key) if isinstance(data.get("text_config"), dict) and draw(st.booleans()) else (key,)
        if where[0] == "text_config" or key in data:
            data = replaced(data, where, draw(VALUES)) if where[-1] in (data.get(where[0]) if len(where) == 2 else
                                                                          data) else data
        else:
            data = {**data, key: draw(VALUES)}
    else:
        where, _ = draw(st.sampled_from(spots))
        data = replaced(data, where, draw(VALUES)) if how == "value" else deleted(data, where)
    return path, json.dumps(data, indent=2)


@fuzz_settings(350)
@given(mutated_config())
def test_mutated_configs_import_or_give_located_problems(tmp_path_factory, case):
    fixture, text = case
    path = tmp_path_factory.mktemp("cfg") / "config.json"
    path.write_text(text)
    try:
        result = import_config(path, entry_id="fuzz")
    except KvregError as exc:
        assert exc.problems
        for p in exc.problems:
            assert p.line >= 1 and p.code and p.message, p
        return
    ModelEntry.model_validate(result.entry)
