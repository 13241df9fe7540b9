"""Base-table columns follow from the entry models' Column markers (issue 14 item 5: each field declared once)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import types
import typing
from typing import Annotated, Literal

import pandas as pd
import pytest
from pydantic import BaseModel

from kvreg.engine_tables import (ACCOUNTING, CAPABILITIES, MEM_FRACTION_TIERS, MLA_BACKEND_RULES, OBSERVATIONS,
                                 PLATFORMS, PRECISION_RULES, PROFILE_GEOMETRY, QUIRKS)
from kvreg.entry_tables import EntryTable, columns, pandas_dtype, rows, table_fields
from kvreg.registry import KINDS, Loaded, load_registry
from kvreg.schema.columns import Column, Columns
from kvreg.schema.common import Bytes, Measure, Tokens
from kvreg.schema.model import ModelEntry
from kvreg.tables import CHECKPOINT_QUANTIZED, CHECKPOINTS, ENTRY_TABLES, HARDWARE_PRICES, SCHEMAS, TABLES
from kvreg.throughput_tables import MEASUREMENTS
from tests.registry_factory import write_project

SPECS = [*ENTRY_TABLES.values(), PROFILE_GEOMETRY, ACCOUNTING, MEM_FRACTION_TIERS, MLA_BACKEND_RULES, QUIRKS,
         PLATFORMS, PRECISION_RULES, CAPABILITIES, MEASUREMENTS, OBSERVATIONS, CHECKPOINTS, CHECKPOINT_QUANTIZED,
         *HARDWARE_PRICES.parts]
# The unit a field's type carries (kvreg/schema/common.py _UnitJson kinds) → what its column name must say.
# Engine settings keep the engine's own spelling (vLLM's --max-model-len, tokens), as its logs and the macros'
# knob parameters name them.
ENGINE_KNOBS = {"max_model_len"}
UNIT_NAME = {"bytes": "_bytes", "tokens": "_tokens", "bandwidth": "_bytes_per_s", "flops": "_flop_per_s"}


def _models(annotation, seen: set) -> None:
    """Every pydantic model class reachable from an annotation (Optional, list, dict, Measure args)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in seen:
        seen.add(annotation)
        for info in annotation.model_fields.values():
            _models(info.annotation, seen)
    for arg in typing.get_args(annotation):
        _models(arg, seen)


def _declaring(cls: type, name: str) -> type:
    """The class that declares field ``name`` (an Entry field is one field, whichever kind inherits it)."""
    return next(k for k in cls.__mro__ if name in k.__dict__.get("__annotations__", {}))


def _marked_fields() -> set[tuple[type, str]]:
    seen: set = set()
    for kind in KINDS:
        _models(kind.schema, seen)
    return {(_declaring(cls, name), name) for cls in seen for name, info in cls.model_fields.items()
            if any(isinstance(m, Column) for m in info.metadata)}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_converted_table_is_its_keys_its_marked_fields_and_its_derived_columns(spec):
    fields = [c.name for c in table_fields(spec)]
    assert fields, f"{spec.name}: no marked field"
    keys = [k for k in spec.keys if k not in spec.exclude]
    assert sorted(TABLES[spec.name]) == sorted([*keys, *fields, *spec.derived])
    placed = [n for n, d in spec.derived.items() if d.first or d.after]
    # in order: keys, fields, derived — but for the derived columns placed first or after another column
    assert [c for c in TABLES[spec.name] if c not in placed] == [*keys, *fields, *(n for n in spec.derived
                                                                                    if n not in placed)]
    assert list(SCHEMAS[spec.name].columns) == list(TABLES[spec.name])


def test_no_marked_field_is_left_out_of_every_table():
    # The other direction: a Column marker whose table is misspelt, or a nested model not reached by
    # a Columns marker, would declare a column no table has.
    used = {(_declaring(c.owner, c.path[-1]), c.path[-1]) for s in SPECS for c in table_fields(s)}
    orphans = sorted(f"{cls.__name__}.{name}" for cls, name in _marked_fields() - used)
    assert not orphans, f"marked as columns but in no table: {orphans}"


def test_the_shipped_tables_hold_the_columns_the_views_read():
    # A few columns by hand, so a marker lost from a field is caught here as well as by the views.
    assert TABLES["models"]["native_context_tokens"] == ("Int64", False)
    assert TABLES["models"]["params_active"] == ("Float64", False)      # falls back to params_total
    assert TABLES["models"]["moe_experts"] == ("Int64", True)           # moe is optional
    assert TABLES["layer_groups"]["k_eq_v"] == ("boolean", False)       # absent → false
    assert list(TABLES["layer_groups"])[:5] == ["model_id", "group_idx", "kind", "layer_count", "shares_layers"]
    assert TABLES["hardware"]["interconnect_name"] == ("string", True)  # required in an optional block
    assert list(TABLES["hardware"])[-3:] == ["confidence", "file", "line"]
    assert "confidence" not in TABLES["engines"]
    assert list(TABLES["model_profile_geometry"]) == ["model_id", "intermediate_size", "moe_intermediate_size"]
    # engine accounting: reserve flattened in, cudagraph_profile prefixed with a presence flag, mem_fraction last
    acc = list(TABLES["engine_accounting"])
    assert acc[:6] == ["engine_id", "release_first", "release_last", "util_basis", "block_size_mla_tokens",
                       "hybrid_allocator"]
    assert acc[acc.index("non_torch_bytes"):][:4] == [
        "non_torch_bytes", "activation_bytes_per_token_hidden", "sampler_bytes_per_seq_vocab", "cudagraph_bytes"]
    assert acc[acc.index("moe_workspace") + 1:][:2] == ["cudagraph_profiled", "cudagraph_subtracted"]
    assert acc[-8:] == [f"mem_fraction_{c}" for c in ("base_bytes", "per_prefill_token_bytes", "min_prefill_tokens",
                        "per_graph_batch_bytes", "per_rank_bytes", "floor_bytes", "floor_above_bytes", "decimals")]
    assert TABLES["engine_accounting"]["cudagraph_profiled"] == ("boolean", False)
    assert TABLES["engine_accounting"]["block_sizes"] == ("string", True)           # a list, comma-joined
    assert TABLES["engine_mla_backend_rules"]["architectures"] == ("string", False)  # at least one
    # every entry's sources, of every kind: the kind and the entry id are both (string) keys
    assert list(TABLES["sources"])[:3] == ["kind", "entry_id", "source_idx"]
    assert TABLES["sources"]["entry_id"] == ("string", False)
    # support: a base-class field (min_capability) placed per table, the block's own cite last
    assert list(TABLES["engine_platforms"])[-3:] == ["cite", "note", "platforms_cite"]
    assert list(TABLES["engine_precision_rules"])[-5:] == ["method", "min_capability", "architectures", "cite", "note"]
    assert TABLES["engine_platforms"]["weights_dtypes"] == ("string", False)   # at least one
    # a measurement's scenario defaults to its entry's (never null); entry-level fields first, then the measurement's
    assert TABLES["throughput_measurements"]["scenario"] == ("string", False)
    assert list(TABLES["throughput_measurements"])[:10] == [
        "source_id", "measurement_idx", "engine_id", "engine_version", "in_fit", "scenario", "kv_admission",
        "kv_cache_fraction", "source_date", "hardware_id"]


def test_a_unit_bearing_field_names_its_unit_in_its_column():
    checked = set()
    for spec in SPECS:
        for c in table_fields(spec):
            info = c.owner.model_fields[c.path[-1]]
            units = {m.kind for m in _metadata(info.annotation) if type(m).__name__ == "_UnitJson"}
            if c.name in ENGINE_KNOBS:
                continue
            for unit in units & set(UNIT_NAME):   # a count (params_total) has no unit to name
                # the unit ends the name, or precedes a qualifier (max_num_batched_tokens_large_gpu)
                assert c.name.endswith(UNIT_NAME[unit]) or UNIT_NAME[unit] + "_" in c.name, \
                    f"{spec.name}.{c.name} holds {unit}"
                checked.add(c.name)
    assert {"native_context_tokens", "window_tokens", "marketed_bytes", "resident_bytes", "reserve_bytes",
            "bandwidth_bytes_per_s", "interconnect_bytes_per_s", "cudagraph_min_per_graph_bytes",
            "mem_fraction_min_prefill_tokens", "chunked_prefill_tokens"} <= checked


def _metadata(annotation):
    """Annotated metadata anywhere inside an annotation (through Optional and Measure[...])."""
    if typing.get_origin(annotation) is Annotated:
        yield from annotation.__metadata__
    if isinstance(annotation, type) and issubclass(annotation, Measure):
        yield from _metadata(annotation.__pydantic_generic_metadata__["args"][0])
    for arg in typing.get_args(annotation):
        yield from _metadata(arg)


@pytest.mark.parametrize("annotation, expected", [
    (Measure[Tokens] | None, ("Int64", True)),
    (Measure[Bytes], ("Int64", False)),
    (Annotated[int, "x"] | None, ("Int64", True)),
    (Literal["a", "b"], ("string", False)),
    (bool, ("boolean", False)),      # before int: bool is an int subclass
    (float | None, ("Float64", True)),
    (dt.date | str | None, ("string", True)),
])
def test_dtype_follows_from_the_annotation(annotation, expected):
    assert pandas_dtype(annotation) == expected


@pytest.mark.parametrize("annotation", [list[int], dict[str, int], int | str])
def test_an_annotation_with_no_column_type_is_refused(annotation):
    with pytest.raises(TypeError, match="no column type"):
        pandas_dtype(annotation)


def test_a_column_name_declared_twice_is_refused_at_import():
    class Twice(BaseModel):
        a: Annotated[int, Column("line")] = 1

    with pytest.raises(ValueError, match="table t: column line declared twice"):
        columns(EntryTable("t", "model", Twice, ("model_id",), derived=ENTRY_TABLES["models"].derived))


def test_keys_must_be_the_id_and_one_index_per_list_walked():
    with pytest.raises(ValueError, match=r"table lg: 1 key for 1 id column and 1 list index"):
        columns(EntryTable("lg", "model", ModelEntry, ("model_id",), ("layer_groups",)))


def test_adding_a_field_to_an_entry_model_is_one_edit(tmp_path):
    # A new annotated field, and nothing else, gives the models table its column (typed, placed before
    # the entry-level confidence), the pandera check and the value of every row.
    class Wider(ModelEntry):
        rope_theta: Annotated[float | None, Column()] = None
        rope: Annotated[Moe2 | None, Columns("rope_")] = None

    write_project(tmp_path, models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 8,
                                                                   "head_dim": 128}]}})
    item = load_registry(tmp_path).entries["model"]["m"]
    fields = {name: getattr(item.entry, name) for name in item.entry.model_fields_set}
    wider = Wider(**fields, rope_theta=5e5, rope=Moe2(factor=8))
    spec = dataclasses.replace(ENTRY_TABLES["models"], model=Wider)
    cols = columns(spec)
    shipped = list(TABLES["models"])
    assert list(cols) == shipped[:-3] + ["rope_theta", "rope_factor"] + shipped[-3:]
    assert cols["rope_theta"] == ("Float64", True)
    assert cols["rope_factor"] == ("Int64", True)
    registry = types.SimpleNamespace(entries={"model": {"m": Loaded("model", wider, item.doc)}})
    (row,) = rows(spec, registry)
    assert (row["rope_theta"], row["rope_factor"], row["model_id"], row["layers"]) == (5e5, 8, "m", 2)


class Moe2(BaseModel):
    factor: Annotated[int, Column()]


def test_shipped_rows_carry_the_values_the_entries_state():
    from pathlib import Path

    from kvreg.tables import frames

    f = frames(load_registry(Path(__file__).resolve().parents[1]))
    acc = f["engine_accounting"].set_index("engine_id")
    # registry/engines/vllm-0.17-0.19.yaml: block_sizes [16, 32, 64, 128], a cudagraph_profile block
    assert acc.loc["vllm-0.17-0.19", "block_sizes"] == "16,32,64,128"
    assert bool(acc.loc["vllm-0.17-0.19", "cudagraph_profiled"])
    assert not bool(acc.loc["vllm-0.8", "cudagraph_profiled"])
    # SGLang's mem_fraction_rule base is 512 MiB; vLLM has none (NULL)
    assert acc.loc["sglang-0.5", "mem_fraction_base_bytes"] == 512 * 2**20
    assert acc["mem_fraction_base_bytes"].isna().sum() == len(acc) - 1


def test_a_joined_list_is_null_when_absent_and_empty_when_given_empty():
    # block_sizes absent = the knob is not modelled (NULL); given as [] it accepts none ('', as before the
    # markers); large_gpu_excludes left at its default [] is NULL (no device excluded).
    from pathlib import Path

    from kvreg.schema.accounting import Cited

    item = load_registry(Path(__file__).resolve().parents[1]).entries["engine"]["vllm-0.17-0.19"]
    acc = item.entry.accounting
    cases = {"given-empty": acc.model_copy(update={"block_sizes": Cited(value=[]), "large_gpu_excludes": []}),
             "absent": acc.model_copy(update={"block_sizes": None})}
    entries = {k: Loaded("engine", item.entry.model_copy(update={"accounting": a}), item.doc) for k, a in cases.items()}
    got = {r["engine_id"]: r for r in rows(ACCOUNTING, types.SimpleNamespace(entries={"engine": entries}))}
    assert (got["given-empty"]["block_sizes"], got["given-empty"]["large_gpu_excludes"]) == ("", None)
    assert (got["absent"]["block_sizes"], got["absent"]["large_gpu_excludes"]) == (None, "a100")


def test_observation_rows_put_the_logged_gib_figures_in_bytes():
    # registry/observations/vllm-gh-a100-40gb-qwen3-8b.yaml logs "Model loading took 15.27 GiB" and no
    # profiling weights line (logged_weights_bytes falls back to it), available KV 19.36 GiB (2 decimals);
    # vllm-log-12 runs an EAGLE draft (the served set) and states no enforce_eager (false, not NULL).
    from pathlib import Path

    from kvreg.tables import frames

    f = frames(load_registry(Path(__file__).resolve().parents[1]))["observations"].set_index("observation_id")
    o = f.loc["vllm-gh-a100-40gb-qwen3-8b"]
    assert o["model_loading_bytes"] == 15.27 * 2**30 == o["logged_weights_bytes"]
    assert (o["available_kv_bytes"], o["available_kv_decimals"]) == (19.36 * 2**30, 2)
    assert o["logged_cuda_graph_bytes"] == 2.44 * 2**30
    assert (o["engine_id"], o["tp"], o["max_model_len"]) == ("vllm-0.17-0.19", 1, 40960)
    e = f.loc["vllm-log-12"]
    assert (e["served_id"], e["draft_model_id"], bool(e["enforce_eager"])) == (
        "llama-3.1-8b+eagle-llama3.1-instruct-8b", "eagle-llama3.1-instruct-8b", False)
    assert e["logged_weights_bytes"] is pd.NA and e["kv_cache_tokens"] == 410128
    assert TABLES["observations"]["model_loading_bytes"] == ("Float64", True)   # a scaled float


def test_a_scaled_column_is_a_float_of_the_value_times_the_scale():
    import fractions

    class Logged(BaseModel):
        x_gib: Annotated[float | None, Column("x_bytes", scale=2**30)] = None
        y_gib: Annotated[float | None, Column("y_bytes", scale=2**30, fallback="x_gib")] = None
        t_ms: Annotated[int, Column("t_s", scale=fractions.Fraction(1, 1000))] = 13

    class E(BaseModel):
        logged: Annotated[Logged, Columns()] = Logged()

    spec = EntryTable("t", "model", E, ("model_id",))
    assert columns(spec) == {"model_id": ("string", False), "x_bytes": ("Float64", True),
                             "y_bytes": ("Float64", True), "t_s": ("Float64", False)}
    entries = {"a": Loaded("model", E(logged=Logged(x_gib=15.27)), None), "b": Loaded("model", E(), None)}
    a, b = rows(spec, types.SimpleNamespace(entries={"model": entries}))
    assert (a["x_bytes"], a["y_bytes"], a["t_s"]) == (15.27 * 2**30, 15.27 * 2**30, 0.013)   # 13 / 1000
    assert (b["x_bytes"], b["y_bytes"]) == (None, None)


def test_report_workload_rows_flatten_the_workload_settings_and_cost_basis(tmp_path):
    # reports/2026-q4-small-team.yaml: 30 users at 128Ki, tpot_ms 100 (0.1 s, as 100 / 1000 rounds), a tco
    # basis of 4 years at $0.17/kWh and PUE 1.2, no engine_settings (NULL = each release's default) and no
    # request rate (its line NULL).
    from pathlib import Path

    from kvreg.tables import frames

    f = frames(load_registry(Path(__file__).resolve().parents[1]))["report_workloads"].set_index("report_id")
    w = f.loc["2026-q4-small-team"]
    assert (w["users"], w["context_tokens"], w["tpot_s"], w["hours_per_month"]) == (30, 128 * 1024, 100 / 1000, 730)
    assert (w["cost_basis"], w["tco_years"], w["tco_usd_per_kwh"], w["tco_pue"]) == ("tco", 4, 0.17, 1.2)
    assert w["max_num_seqs"] is pd.NA and w["request_rate_line"] is pd.NA and w["block_size_line"] is pd.NA
    assert f.loc["2026-q4", "cost_basis"] == "rental" and f.loc["2026-q4", "tco_years"] is pd.NA
    assert 13 / 1000 == 0.013 != 13 * 1e-3   # why the scale is a Fraction, not 1e-3 (13 ms: 0.013000000000000001)


def test_a_float_scale_is_refused():
    with pytest.raises(TypeError, match="scale 0.001 is a float"):
        Column("x_s", scale=1e-3)


def test_a_constraint_added_to_a_field_is_checked_by_pandera_and_published_in_the_json_schema():
    # One declaration: Field(gt=0, le=1e7) on the field, and nothing else, bounds validation, the JSON
    # Schema and the frame's pandera check alike.
    import pandera.errors
    from pydantic import Field

    from kvreg.entry_tables import column_checks
    from kvreg.tables import schema

    class Tighter(ModelEntry):
        rope_theta: Annotated[Annotated[float, Field(gt=0, le=1e7)] | None, Column()] = None

    spec = dataclasses.replace(ENTRY_TABLES["models"], model=Tighter)
    assert column_checks(spec)["rope_theta"] == (("gt", 0), ("le", 1e7))
    published = Tighter.model_json_schema()["properties"]["rope_theta"]["anyOf"][0]
    assert (published["exclusiveMinimum"], published["maximum"]) == (0, 1e7)
    frame = pd.DataFrame([{c: None for c in columns(spec)} | {"rope_theta": 2e7}])
    with pytest.raises(pandera.errors.SchemaError, match="rope_theta"):
        schema({"rope_theta": columns(spec)["rope_theta"]}, column_checks(spec)).validate(frame[["rope_theta"]])


def test_the_shipped_schemas_check_the_fields_constraints():
    import pandera.errors

    checks = {c: [(k.name, k.statistics) for k in col.checks] for c, col in SCHEMAS["observations"].columns.items()}
    assert checks["gpu_memory_utilization"] == [("greater_than", {"min_value": 0}),
                                                ("less_than_or_equal_to", {"max_value": 1})]
    assert checks["kv_dtype"][0][0] == "isin" and checks["release_confidence"][0][1]["allowed_values"] == [
        "stated", "derived", "format", "token-rule", "given"]   # derived: a version newer than any registered release
    assert checks["hardware_id"][0][0] == "str_contains"          # EntryId's pattern
    assert checks["served_id"] == [] and checks["notes"] == []    # derived, and unconstrained
    # a scaled column's bounds are scaled too: tpot_ms > 0 → tpot_s > 0; parallel_samples 1 … 1024
    assert [k.statistics for k in SCHEMAS["report_workloads"].columns["parallel_samples"].checks] == [
        {"min_value": 1}, {"max_value": 1024}]
    bad = pd.DataFrame([{"tp": 0}])
    with pytest.raises(pandera.errors.SchemaError, match="greater_than"):
        SCHEMAS["observations"].columns["tp"].validate(bad)


def _json_constraints(node, defs, out):
    if isinstance(node, dict):
        if "$ref" in node:
            _json_constraints(defs[node["$ref"].split("/")[-1]], defs, out)
        for key in ("exclusiveMinimum", "minimum", "exclusiveMaximum", "maximum", "pattern"):
            if key in node:
                out.add((key, node[key]))
        if "enum" in node:
            out.add(("enum", tuple(node["enum"])))
        if "const" in node:
            out.add(("enum", (node["const"],)))
        for k, v in node.items():
            if k in ("anyOf", "allOf", "oneOf", "items"):
                _json_constraints(v, defs, out)
            elif k == "properties" and "value" in v:   # Measure / Cited: {value, source | cite, ...}
                _json_constraints(v["value"], defs, out)
    elif isinstance(node, list):
        for v in node:
            _json_constraints(v, defs, out)
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_pandera_constraint_is_published_in_the_json_schema_of_its_field(spec):
    from kvreg.entry_tables import constraints

    json_key = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum",
                "pattern": "pattern", "isin": "enum"}
    for c in table_fields(spec):
        if not c.checks:
            continue
        js = c.owner.model_json_schema()
        prop = js["properties"][c.path[-1]]
        published = _json_constraints(prop, js.get("$defs", {}), set())
        for op, v in constraints(c.owner.model_fields[c.path[-1]]):
            assert (json_key[op], v) in published, f"{spec.name}.{c.name}: {op} {v} not in {published}"


def test_a_dict_or_list_field_marked_rows_is_a_table_of_its_own():
    # hardware/h100-sxm-80gb.yaml: peak_flops bf16 989 TFLOP/s (dense), fp8 1979; native_precisions
    # [fp32, bf16, fp16, fp8, int8] → one row per dtype, in dtype order; the Dtype values and Flops > 0 checked.
    from pathlib import Path

    from kvreg.tables import CHECKS, KEYED_TABLES, frames

    assert TABLES["hardware_flops"] == {"hardware_id": ("string", False), "dtype": ("string", False),
                                        "flop_per_s": ("Float64", False)}
    assert CHECKS["hardware_flops"]["flop_per_s"] == (("gt", 0),)
    assert CHECKS["hardware_precisions"]["dtype"][0][0] == "isin"
    assert set(KEYED_TABLES) == {"hardware_flops", "hardware_precisions"}
    f = frames(load_registry(Path(__file__).resolve().parents[1]))
    flops = f["hardware_flops"].query("hardware_id == 'h100-sxm-80gb'").set_index("dtype")["flop_per_s"]
    assert (flops["bf16"], flops["fp8"]) == (989e12, 1979e12)
    prec = f["hardware_precisions"].query("hardware_id == 'h100-sxm-80gb'")["dtype"].tolist()
    assert prec == sorted(["fp32", "bf16", "fp16", "fp8", "int8"])


def test_rows_on_a_field_that_is_no_dict_or_list_is_refused():
    from kvreg.table_specs import keyed_tables
    from kvreg.schema.columns import Rows

    class Bad(BaseModel):
        x: Annotated[int, Rows("t", "k", "v")] = 1

    with pytest.raises(TypeError, match="Bad.x: Rows needs a dict"):
        keyed_tables(Bad, "model", "model_id")
