"""The computed base tables follow from one declaration each (issue 14 item 5), and a build builds them once.

checkpoints / checkpoint_quantized / hardware_prices / report_items from the entry models' markers; weight_tensors,
field_provenance and the axes from the records that produce them (kvreg/table_specs.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Annotated, Literal, NamedTuple

import pytest

from kvreg.entry_tables import Derived, EntryTable
from kvreg.registry import load_registry
from kvreg.schema.columns import Column
from kvreg.schema.hardware import HardwareEntry
from kvreg.table_specs import RecordTable, UnionTable
from kvreg.tables import RECORD_TABLES, SCHEMAS, TABLES, frames
from tests.registry_factory import hardware_entry, write_project

ROOT = Path(__file__).resolve().parents[1]
GROUP = [{"kind": "full", "count": 2, "kv_heads": 8, "head_dim": 128}]


def _frames(tmp_path, **model_extra):
    write_project(tmp_path, models={"m": {"layers": 2, "groups": GROUP, **model_extra}},
                  hardware={"hw": hardware_entry("hw", price={
                      "usd_per_hour": 2.5, "provider": "one", "date": dt.date(2026, 1, 2),
                      "rental": [{"usd_per_hour": {"value": 2.0, "source": "fixture"}, "provider": "two",
                                  "date": dt.date(2026, 2, 3)}],
                      "purchase": {"usd": 30000, "kind": "MSRP", "date": "2026-04"}})})
    return frames(load_registry(tmp_path))


def test_every_built_frame_has_exactly_the_declared_columns_in_order(shipped_registry):
    built = frames(shipped_registry)
    assert list(built) == list(TABLES)
    for name, df in built.items():
        assert list(df.columns) == list(TABLES[name]), name
        # pandera coerces to the declared dtype ("string" may print as "str": pandas' default string storage)
        assert [str(t).replace("str", "string").replace("stringing", "string") for t in df.dtypes] == [
            t for t, _ in TABLES[name].values()], name
        for col, (_, nullable) in TABLES[name].items():
            assert nullable or not df[col].isna().any(), f"{name}.{col}"


def test_checkpoint_rows_listed_then_one_generic_per_unlisted_precision(tmp_path):
    # Two fp8 checkpoints, the second marked default; one int4 GPTQ with its own quantized groups and measured
    # bytes.  Generic rows follow for fp32, bf16, fp16 (unquantized), int8, mxfp4, nvfp4 (QUANT_DEFAULTS).
    f = _frames(tmp_path, checkpoints=[
        {"hf_id": "a/fp8", "weights_dtype": "fp8", "quantization": {"method": "fp8-block", "weight_bits": 8,
                                                                     "group_size": 16384}},
        {"weights_dtype": "fp8", "default": True},
        {"hf_id": "a/int4", "weights_dtype": "int4", "bytes": {"value": 5e9, "source": "fixture"},
         "quantization": {"method": "awq", "weight_bits": 4, "group_size": 128, "scale_dtype": "fp16",
                          "zero_points": True, "quantized": ["mlp", "attention"]}}])
    c = f["checkpoints"]
    got = [tuple(None if v is None or v != v else v for v in r) for r in c[
        ["checkpoint_id", "weights_dtype", "listed", "is_default", "method", "weight_bits", "group_size",
         "scale_dtype", "zero_points", "checkpoint_bytes", "bytes_source"]].astype(object).where(c.notna(), None)
        .itertuples(index=False)]
    assert got == [
        ("a/fp8", "fp8", True, False, "fp8-block", 8, 16384, "fp32", False, None, None),
        ("m:fp8:1", "fp8", True, True, None, None, None, None, False, None, None),
        ("a/int4", "int4", True, True, "awq", 4, 128, "fp16", True, 5_000_000_000, "fixture"),
        ("m:fp32:generic", "fp32", False, True, None, None, None, None, False, None, None),
        ("m:bf16:generic", "bf16", False, True, None, None, None, None, False, None, None),
        ("m:fp16:generic", "fp16", False, True, None, None, None, None, False, None, None),
        ("m:int8:generic", "int8", False, True, "int8-per-channel", 8, None, "fp32", False, None, None),
        ("m:mxfp4:generic", "mxfp4", False, True, "mxfp4", 4, 32, "fp8", False, None, None),
        ("m:nvfp4:generic", "nvfp4", False, True, "nvfp4", 4, 16, "fp8", False, None, None)]
    q = f["checkpoint_quantized"]
    pairs = list(zip(q["checkpoint_id"], q["tensor_group"]))
    default = ["attention", "recurrent", "mlp"]
    assert pairs == ([("a/fp8", g) for g in default] + [("a/int4", "mlp"), ("a/int4", "attention")]
                     + [(f"m:{d}:generic", g) for d in ("int8", "mxfp4", "nvfp4") for g in default])


def test_price_rows_the_one_quote_form_then_rental_then_the_purchase(tmp_path):
    p = _frames(tmp_path)["hardware_prices"]
    assert list(p["price_idx"]) == [0, 1, 2]
    assert list(p["price_kind"]) == ["rental", "rental", "purchase"]
    assert list(p["usd"]) == [2.5, 2.0, 30000.0]
    assert list(p["provider"]) == ["one", "two", "MSRP"]
    assert list(p["date"]) == ["2026-01-02", "2026-02-03", "2026-04"]
    assert list(p["source_id"].astype(object).where(p["source_id"].notna(), None)) == [None, "fixture", None]
    text = (tmp_path / "hardware/hw.yaml").read_text().splitlines()
    assert {text[n - 1].split(":")[0] for n in p["line"]} == {"price"}
    # the usd > 0 bound of both RentalQuote.usd_per_hour and Purchase.usd is checked on the frame too
    assert [k.statistics for k in SCHEMAS["hardware_prices"].columns["usd"].checks] == [{"min_value": 0}]


def test_report_items_follow_the_item_markers_in_field_order(shipped_registry):
    r = frames(shipped_registry)["report_items"].query("report_id == '2026-q4-small-team'")
    kinds = list(dict.fromkeys(r["item_kind"]))
    assert kinds == ["model", "hardware", "engine", "weights_dtype", "kv_dtype", "tp", "context"]
    ctx = r[r["item_kind"] == "context"]
    assert list(ctx["item_value"]) == [int(v) for v in ctx["item_id"]] and r[r["item_kind"] == "model"][
        "item_value"].isna().all()
    assert list(ctx["key"]) == [f"contexts.{i}" for i in range(len(ctx))]


def test_a_field_added_to_a_record_is_its_column():
    # One edit: a marked field of the record gives the column, typed from its annotation; unmarked fields are not.
    class Row(NamedTuple):
        name: Annotated[str, Column("tensor_group")]
        kind: Annotated[Literal["a", "b"], Column()]
        parts: Annotated[int | None, Column("shard_parts")]
        scratch: list

    t = RecordTable("t", Row, lambda reg: [("x", Row("g", "a", None, [])), ("y", Row("h", "b", 4, []))],
                    {"model_id": Derived("string", False, lambda ctx: ctx, first=True),
                     "tail": Derived("Int64", False, lambda ctx: len(ctx))})
    assert t.columns() == {"model_id": ("string", False), "tensor_group": ("string", False),
                           "kind": ("string", False), "shard_parts": ("Int64", True), "tail": ("Int64", False)}
    assert t.checks() == {"kind": (("isin", ("a", "b")),)}
    assert t.rows(None) == [{"tensor_group": "g", "kind": "a", "shard_parts": None, "model_id": "x", "tail": 1},
                            {"tensor_group": "h", "kind": "b", "shard_parts": 4, "model_id": "y", "tail": 1}]


def test_the_computed_tables_take_their_columns_from_their_records():
    from kvreg.provenance import FieldFact
    from kvreg.weights import TensorGroup

    assert list(TABLES["weight_tensors"]) == ["model_id", "tensor_group", "part", "elements", "shard", "shard_parts",
                                              "dtype"]
    assert TABLES["weight_tensors"]["shard_parts"] == ("Int64", True)
    assert [f.name for f in dataclasses.fields(TensorGroup)] == ["name", "part", "elements", "shard", "parts", "dtype"]
    assert list(TABLES["field_provenance"]) == ["kind", "entry_id", "field", "value", "source_id", "basis", "confidence",
                                                "confidence_basis", "note", "file", "line", "col"]
    assert RECORD_TABLES["field_provenance"].record is FieldFact
    assert TABLES["precisions"]["bytes_per_element"] == ("Float64", False)
    assert TABLES["served_models"] == {"served_id": ("string", False), "model_id": ("string", False),
                                       "role": ("string", False), "num_speculative_tokens": ("Int64", False)}


def test_parts_of_a_union_table_must_agree():
    spec = EntryTable("hardware_prices", "hardware", HardwareEntry, ("hardware_id",), ("price", "purchase"))
    with pytest.raises(TypeError, match="table hardware_prices: part"):
        UnionTable("hardware_prices", (spec, dataclasses.replace(spec, derived={"x": Derived("Int64", False, id)})
                                       )).columns()


def test_a_build_builds_the_frames_once(tmp_path, monkeypatch):
    # Validation (the cross-entry checks) builds the frames; the database build reuses them (registry.frames).
    import kvreg.tables
    from kvreg.build import build

    calls = []
    real = kvreg.tables._rows
    monkeypatch.setattr(kvreg.tables, "_rows", lambda registry: calls.append(1) or real(registry))
    write_project(tmp_path, models={"m": {"layers": 2, "groups": GROUP}}, hardware={"hw": hardware_entry("hw")})
    build(tmp_path, tmp_path / "k.duckdb")
    assert len(calls) == 1
    load_registry(tmp_path)          # the frames are kept per loaded registry: a new load builds its own
    assert len(calls) == 2
