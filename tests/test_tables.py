"""The pandera schemas of the base tables reject frames a loader bug could produce."""

from __future__ import annotations

from pathlib import Path

import pandera.errors
import pytest

from kvreg.tables import SCHEMAS, TABLES, frames

SCHEMA_ERRORS = (pandera.errors.SchemaError, pandera.errors.SchemaErrors)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shipped(shipped_registry):
    return frames(shipped_registry)


def test_every_table_has_a_schema_and_validates(shipped):
    assert set(shipped) == set(TABLES) == set(SCHEMAS)
    for name, df in shipped.items():
        SCHEMAS[name].validate(df)


def test_wrong_column_type_fails_its_schema(shipped):
    df = shipped["models"].copy()
    df["layers"] = df["layers"].astype(object)
    df.loc[0, "layers"] = "sixty"
    with pytest.raises(SCHEMA_ERRORS, match="layers"):
        SCHEMAS["models"].validate(df)


def test_null_in_a_required_column_fails(shipped):
    df = shipped["layer_groups"].copy()
    df.loc[0, "kind"] = None
    with pytest.raises(SCHEMA_ERRORS, match="kind"):
        SCHEMAS["layer_groups"].validate(df)


def test_unexpected_column_fails(shipped):
    df = shipped["hardware"].copy()
    df["memory_gb"] = 80.0   # an unnamed unit sneaking in
    with pytest.raises(SCHEMA_ERRORS, match="memory_gb"):
        SCHEMAS["hardware"].validate(df)
