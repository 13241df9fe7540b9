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

from kvreg.schema.columns import Column
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

    hardware: Annotated[EntryId, Column("hardware_id")]
    model: Annotated[EntryId, Column("model_id")]
    weights_dtype: Annotated[Dtype, Column()]
    kv_dtype: Annotated[Dtype, Column()] = "bf16"
    tp: Annotated[PositiveInt, Column()] = 1
    pp: PositiveInt = 1
    scenario: Annotated[Literal["offline", "server", "interactive"] | None, Column(inherit=True, after="in_fit")] = None
    input_tokens: Annotated[Tokens, Column()]
    output_tokens: Annotated[Tokens, Column()]
    concurrency: Annotated[PositiveInt | None, Column()] = None
    request_rate_per_s: Annotated[PositiveFloat | None, Column()] = None
    max_batch: Annotated[PositiveInt | None, Column()] = None
    output_tok_per_s: Annotated[PositiveFloat, Column()]
    ttft_p50_s: Annotated[Seconds | None, Column()] = None
    ttft_p99_s: Annotated[Seconds | None, Column()] = None
    tpot_p50_s: Annotated[Seconds | None, Column()] = None
    tpot_p99_s: Annotated[Seconds | None, Column()] = None
    note: str | None = None


class ThroughputEntry(Entry):
    """One source's measurements; entry-level fields are the defaults every measurement shares."""

    engine: Annotated[EntryId, Column("engine_id", table="throughput_measurements")]
    """Registry engine id whose memory pool sizes the batch (registry/engines); its ``engine``
    field is the engine family the efficiency is fitted per."""
    engine_version: Annotated[str, Column(table="throughput_measurements")]
    scenario: Literal["offline", "server", "interactive"]
    date: Annotated[dt.date, Column("source_date", table="throughput_measurements")]
    """When the source published the figures."""
    in_fit: Annotated[bool, Column(table="throughput_measurements", after="engine_version")] = True
    """False: the source is only predicted (by efficiencies fitted on the others, as if left out), never fitted
    to — for a source whose engine × hardware has no other evidence yet and whose fit would move every plan
    that borrows it (say why in ``notes``)."""
    kv_admission: Annotated[Literal["on_demand", "whole_request"],
                            Column(table="throughput_measurements", after="in_fit")] = "on_demand"
    """How the engine admitted requests in these runs, which sets the batch kvreg costs an unfixed-concurrency row
    at (251_throughput_ceilings): ``on_demand`` (vLLM, SGLang: KV blocks are taken as a sequence grows, so the
    pool holds sequences at their mean context) or ``whole_request`` (TensorRT-LLM's default capacity scheduler,
    GUARANTEED_NO_EVICT, admits a request only when the blocks for its input + output are free, and trtllm-bench
    sizes its batch the same way: tensorrt_llm/bench/build/tuning.py calc_engine_setting, kv_cache_max_requests =
    cache memory ÷ (bytes per token × (input + output)); so the pool holds pool ÷ (input + output) requests)."""
    kv_cache_fraction: Annotated[float | None, Field(gt=0, le=1),
                                 Column(table="throughput_measurements", after="kv_admission")] = None
    """The memory fraction these runs gave the KV cache, where the source states it (trtllm-bench
    ``--kv_cache_free_gpu_mem_fraction``; vLLM ``--gpu-memory-utilization``), applied by the engine's own rule
    (its accounting ``util_basis``, 203 engine_available_kv_bytes).  Unset: the engine's default.  It sizes the
    batch of an unfixed-concurrency row (251_throughput_ceilings): the engine's KV pool, not all the memory beside
    the weights."""
    measurements: Annotated[list[Measurement], Field(min_length=1)]

    @model_validator(mode="after")
    def _pp_is_one(self):
        for i, m in enumerate(self.measurements):
            if m.pp != 1:
                raise PydanticCustomError(
                    "unsupported_parallelism", "pipeline parallelism is not modelled by the roofline",
                    {"path": f"measurements.{i}.pp", "hint": "leave out measurements with pp > 1"})
        return self
