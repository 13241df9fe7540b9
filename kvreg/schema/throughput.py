"""A throughput entry: measured serving speed from one published source (registry/throughput/*.yaml).

One entry is one source (a benchmark page at one commit, one MLPerf submission) and
lists its measurements: hardware × device count × engine release × model checkpoint ×
precision × scenario (offline / server / interactive, input and output lengths,
concurrency or request rate) → output tokens per second over all the devices, and,
where the source publishes them, TTFT/TPOT percentiles.  These are the evidence the
speed efficiencies are fitted to (kvreg/sql/150_throughput_ceilings.sql and after);
the entry is the unit of leave-one-source-out evaluation (``kvreg calibrate --speed``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, PositiveFloat, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.common import Dtype, Entry, EntryId, Strict, Tokens

Seconds = Annotated[float, Field(gt=0)]


class Measurement(Strict):
    """One published throughput figure and the settings it was measured under.

    ``output_tok_per_s`` is the total over ``tp × pp`` devices (one replica), as the
    sources print it ("Total Output Throughput").  ``input_tokens`` and ``output_tokens``
    are per request (means when the lengths vary).  ``concurrency`` is the number of
    requests in flight when the source fixes it; absent for an offline run, whose batch
    is whatever the engine admits (kvreg takes the KV pool's capacity, capped by ``max_batch``).
    """

    hardware: EntryId
    model: EntryId
    weights_dtype: Dtype
    kv_dtype: Dtype = "bf16"
    tp: PositiveInt = 1
    pp: PositiveInt = 1
    scenario: Literal["offline", "server", "interactive"] | None = None
    input_tokens: Tokens
    output_tokens: Tokens
    concurrency: PositiveInt | None = None
    request_rate_per_s: PositiveFloat | None = None
    max_batch: PositiveInt | None = None
    output_tok_per_s: PositiveFloat
    ttft_p50_s: Seconds | None = None
    ttft_p99_s: Seconds | None = None
    tpot_p50_s: Seconds | None = None
    tpot_p99_s: Seconds | None = None
    note: str | None = None


class ThroughputEntry(Entry):
    """One source's measurements; entry-level fields are the defaults every measurement shares."""

    engine: EntryId
    """Registry engine id whose memory pool sizes the batch (registry/engines); its ``engine``
    field is the engine family the efficiency is fitted per."""
    engine_version: str
    scenario: Literal["offline", "server", "interactive"]
    date: dt.date
    """When the source published the figures."""
    in_fit: bool = True
    """False: the source is only predicted (by efficiencies fitted on the others, as if left out), never fitted
    to — for a source whose engine × hardware has no other evidence yet and whose fit would move every plan
    that borrows it (say why in ``notes``)."""
    measurements: Annotated[list[Measurement], Field(min_length=1)]

    @model_validator(mode="after")
    def _pp_is_one(self):
        for i, m in enumerate(self.measurements):
            if m.pp != 1:
                raise PydanticCustomError(
                    "unsupported_parallelism", "pipeline parallelism is not modelled by the roofline",
                    {"path": f"measurements.{i}.pp", "hint": "leave out measurements with pp > 1"})
        return self
