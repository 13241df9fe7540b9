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

import fractions

from kvreg.schema.columns import Column, Columns, Item
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

    Instead of ``users``, a workload may give ``request_rate_per_s`` (mean arrivals per second) with the mean
    ``input_tokens`` and ``output_tokens`` and ``tpot_ms``: the concurrent requests are then Little's law,
    ⌈rate × (TTFT + (output − 1) × TPOT)⌉, computed in SQL by the macro ``kvreg plan --request-rate`` uses
    (``workload_requests``, kvreg/sql/272_workload_blocks.sql; report query ``workload.sql``).  ``context`` may
    then be left out: it is input + output.
    """

    users: Annotated[PositiveInt | None, Column()] = None
    request_rate_per_s: Annotated[Annotated[float, Field(gt=0, le=1e6)] | None, Column()] = None
    context: Annotated[Tokens | None, Column("context_tokens")] = None
    tpot_ms: Annotated[Annotated[float, Field(gt=0)] | None, Column("tpot_s", scale=fractions.Fraction(1, 1000))] = None
    ttft_s: Annotated[Annotated[float, Field(gt=0)] | None, Column()] = None
    hours_per_month: Annotated[Annotated[float, Field(gt=0, le=744)], Column()] = 730.0
    input_tokens: Annotated[Tokens | None, Column()] = None
    output_tokens: Annotated[Tokens | None, Column()] = None
    shared_prefix_tokens: Annotated[Annotated[int, Field(ge=0)] | None, Column()] = None
    parallel_samples: Annotated[Annotated[int, Field(ge=1, le=1024)] | None, Column()] = None

    @model_validator(mode="after")
    def _lengths_add_up(self):
        if (self.users is None) == (self.request_rate_per_s is None):
            raise PydanticCustomError(
                "workload_demand", "give either users (concurrent requests) or request_rate_per_s (requests per "
                "second), not both and not neither",
                {"path": "users" if self.users is not None else "",
                 "hint": "e.g. users: 200, or request_rate_per_s: 4 with input_tokens, output_tokens and tpot_ms"})
        if (self.input_tokens is None) != (self.output_tokens is None):
            raise PydanticCustomError(
                "workload_lengths", "give both input_tokens and output_tokens, or neither",
                {"path": "", "hint": "e.g. context: 8192, input_tokens: 7192, output_tokens: 1000"})
        if self.request_rate_per_s is not None:
            missing = [k for k in ("input_tokens", "output_tokens", "tpot_ms") if getattr(self, k) is None]
            if missing:
                raise PydanticCustomError(
                    "workload_rate", "a request rate needs {missing}: Little's law counts the requests in flight "
                    "as rate × (TTFT + (output − 1) × TPOT)",
                    {"missing": " and ".join(missing), "path": "request_rate_per_s",
                     "hint": "e.g. request_rate_per_s: 4, input_tokens: 2000, output_tokens: 500, tpot_ms: 50"})
            if self.output_tokens == 1 and self.ttft_s is None:
                raise PydanticCustomError(
                    "workload_rate", "one output token and no ttft_s leave no time in flight: Little's law gives "
                    "0 concurrent requests", {"path": "request_rate_per_s",
                                              "hint": "give ttft_s, or the mean output length"})
        if self.context is None:
            if self.input_tokens is None:
                raise PydanticCustomError(
                    "workload_lengths", "give context, or input_tokens and output_tokens (context = input + output)",
                    {"path": "", "hint": "e.g. context: 32Ki"})
            # entries are frozen once built; this is still the validator building it
            object.__setattr__(self, "context", self.input_tokens + self.output_tokens)
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
    ``enforce_eager`` drops the CUDA-graph reserve; ``num_speculative_tokens`` is plumbed, no effect yet;
    ``block_size`` (tokens) sets the KV block size of every listed engine release, which must accept it
    (engine ``accounting.block_sizes``; check kvreg/checks/046_report_block_size.sql)."""

    gpu_memory_utilization: Annotated[Annotated[float, Field(gt=0, le=1)] | None, Column()] = None
    max_num_seqs: Annotated[PositiveInt | None, Column()] = None
    max_num_batched_tokens: Annotated[PositiveInt | None, Column()] = None
    enforce_eager: Annotated[bool | None, Column()] = None
    num_speculative_tokens: Annotated[Annotated[int, Field(ge=0)] | None, Column()] = None
    block_size: Annotated[PositiveInt | None, Column()] = None


class CostBasis(Strict):
    """The price basis a report ranks on (kvreg/sql/115_hardware_rates.sql, ``hardware_rates_at``).

    ``rental``: the lowest listed on-demand rental quote per device-hour.  ``tco``: a device's
    purchase price amortised over ``years`` plus its board power (TDP) × ``pue`` at ``usd_per_kwh``;
    the three parameters must be stated (no defaults: a report says what it assumes), with ``note``
    saying where they come from.
    """

    kind: Annotated[Literal["rental", "tco"], Column("cost_basis")] = "rental"
    years: Annotated[Annotated[float, Field(gt=0, le=15)] | None, Column("tco_years")] = None
    usd_per_kwh: Annotated[Annotated[float, Field(gt=0, le=2)] | None, Column("tco_usd_per_kwh")] = None
    pue: Annotated[Annotated[float, Field(ge=1, le=3)] | None, Column("tco_pue")] = None
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
    # each list's items are rows of report_items (kvreg/table_specs.py ItemTable), item_kind the marker's
    models: Annotated[list[EntryId], Field(min_length=1), Item("report_items", "model")]
    hardware: Annotated[list[EntryId], Field(min_length=1), Item("report_items", "hardware")]
    engines: Annotated[list[EntryId], Field(min_length=1), Item("report_items", "engine")] = ["first-principles"]
    weights_dtypes: Annotated[list[Dtype], Field(min_length=1), Item("report_items", "weights_dtype")] = ["bf16"]
    kv_dtypes: Annotated[list[Dtype], Field(min_length=1), Item("report_items", "kv_dtype")] = ["bf16"]
    tp: Annotated[list[PositiveInt], Field(min_length=1), Item("report_items", "tp")] = [1]
    contexts: Annotated[list[Tokens], Field(min_length=1), Item("report_items", "context")]
    # each model is also sized at its own checkpoint's precision (models.dtype: gpt-oss-120b's mxfp4 beside a
    # bf16/fp8 list), a per-model addition (kvreg/sql/031_report_weights.sql); false: the weights_dtypes list alone
    own_checkpoints: Annotated[bool, Column()] = True
    workload: Annotated[Workload, Columns()]
    engine_settings: Annotated[EngineSettings, Columns()] = EngineSettings()
    # the registry the previous report was built from: a git revision, a previous report's registry stamp (its
    # footer's commit) or a directory (relative to the project); the report then opens with what changed since
    # (kvreg/report/changes.py, over kvreg diff)
    previous: Annotated[str, Field(min_length=1)] | None = None


    cost_basis: Annotated[CostBasis, Columns()] = CostBasis()
