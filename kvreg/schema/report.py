"""A report definition (reports/*.yaml): what a procurement report compares, for which workload.

A report names registry entries (models, hardware, engines) by id; those
references are checked against the registry by ``kvreg/checks/040_report_reference.sql``
over the ``report_items`` table, so a typo is a problem with file:line like any other.
Contexts and TP sizes given here are added to the axis tables, so every one has rows.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.common import Dtype, Entry, EntryId, Source, Strict, Tokens


class Workload(Strict):
    """The target the recommendation must meet.

    ``users`` concurrent sequences, each holding ``context`` tokens; a decode
    time per output token of at most ``tpot_ms`` milliseconds and a time to
    first token of at most ``ttft_s`` seconds (both optional: used only when
    the ``plans`` view exists); ``hours_per_month`` prices a month of service
    (730 = 24 × 365 / 12).  As ``kvreg plan`` (docs/plan.md, "Workloads as people describe them"):
    ``input_tokens`` + ``output_tokens`` (both or neither; their sum must be ``context``), a
    ``shared_prefix_tokens`` system prompt held once per replica (shorter than the input), and
    ``parallel_samples`` sequences per user sharing its prompt.
    """

    users: PositiveInt
    context: Tokens
    tpot_ms: Annotated[float, Field(gt=0)] | None = None
    ttft_s: Annotated[float, Field(gt=0)] | None = None
    hours_per_month: Annotated[float, Field(gt=0, le=744)] = 730.0
    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    shared_prefix_tokens: Annotated[int, Field(ge=0)] | None = None
    parallel_samples: Annotated[int, Field(ge=1, le=1024)] | None = None

    @model_validator(mode="after")
    def _lengths_add_up(self):
        if (self.input_tokens is None) != (self.output_tokens is None):
            raise PydanticCustomError(
                "workload_lengths", "give both input_tokens and output_tokens, or neither",
                {"path": "", "hint": "e.g. context: 8192, input_tokens: 7192, output_tokens: 1000"})
        if self.input_tokens is not None and self.input_tokens + self.output_tokens != self.context:
            raise PydanticCustomError(
                "workload_lengths", "input_tokens + output_tokens ({total}) is not context ({context})",
                {"total": self.input_tokens + self.output_tokens, "context": self.context,
                 "path": "", "hint": "context is the tokens a sequence holds at its end: input + output"})
        prompt = self.input_tokens if self.input_tokens is not None else self.context
        if self.shared_prefix_tokens and self.shared_prefix_tokens >= prompt:
            raise PydanticCustomError(
                "workload_lengths", "shared_prefix_tokens ({p}) must be shorter than the input ({i})",
                {"p": self.shared_prefix_tokens, "i": prompt, "path": "shared_prefix_tokens",
                 "hint": "the shared prefix is the start of every prompt"})
        return self


class EngineSettings(Strict):
    """Engine knobs the report's engines run with — the options of ``kvreg fit`` and ``kvreg plan``
    (``--gpu-memory-utilization`` …); unset = each release's default for the device.  They size every
    engine figure of the report (capacity, engine admission, plans) through the macros' knob parameters.
    ``enforce_eager`` drops the CUDA-graph reserve; ``num_speculative_tokens`` is plumbed, no effect yet."""

    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    max_num_seqs: PositiveInt | None = None
    max_num_batched_tokens: PositiveInt | None = None
    enforce_eager: bool | None = None
    num_speculative_tokens: Annotated[int, Field(ge=0)] | None = None


class CostBasis(Strict):
    """The price basis a report ranks on (kvreg/sql/115_hardware_rates.sql, ``hardware_rates_at``).

    ``rental``: the lowest listed on-demand rental quote per device-hour.  ``tco``: a device's
    purchase price amortised over ``years`` plus its board power (TDP) × ``pue`` at ``usd_per_kwh``;
    the three parameters must be stated (no defaults: a report says what it assumes), with ``note``
    saying where they come from.
    """

    kind: Literal["rental", "tco"] = "rental"
    years: Annotated[float, Field(gt=0, le=15)] | None = None
    usd_per_kwh: Annotated[float, Field(gt=0, le=2)] | None = None
    pue: Annotated[float, Field(ge=1, le=3)] | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _tco_stated(self):
        if self.kind == "tco" and None in (self.years, self.usd_per_kwh, self.pue):
            raise PydanticCustomError(
                "tco_parameters", "a tco cost basis needs years, usd_per_kwh and pue",
                {"path": "", "hint": "e.g. cost_basis: {kind: tco, years: 4, usd_per_kwh: 0.12, pue: 1.3, note: ...}"})
        return self


class ReportEntry(Entry):
    """One report: title and audience, the grid to compare, and the workload target.

    Lists of ids must name existing entries; precisions must be ones the
    ``precisions`` table allows for weights (``weights_dtypes``) or KV
    (``kv_dtypes``).
    """

    sources: list[Source] = []  # a report cites the entries it uses, not sources of its own
    title: str
    period: str
    audience: str | None = None
    models: Annotated[list[EntryId], Field(min_length=1)]
    hardware: Annotated[list[EntryId], Field(min_length=1)]
    engines: Annotated[list[EntryId], Field(min_length=1)] = ["first-principles"]
    weights_dtypes: Annotated[list[Dtype], Field(min_length=1)] = ["bf16"]
    kv_dtypes: Annotated[list[Dtype], Field(min_length=1)] = ["bf16"]
    tp: Annotated[list[PositiveInt], Field(min_length=1)] = [1]
    contexts: Annotated[list[Tokens], Field(min_length=1)]
    workload: Workload
    engine_settings: EngineSettings = EngineSettings()


    cost_basis: CostBasis = CostBasis()
