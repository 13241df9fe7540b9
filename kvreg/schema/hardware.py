"""A hardware entry: one accelerator or host (hardware/*.yaml).

Memory is stored twice on purpose: the marketed label (what the naive planner
subtracts from) and the usable bytes the runtime reports (what kvreg budgets
against).  ``memory_basis`` says whether ``memory_usable`` was reported by a
runtime or estimated from the label (hardware_facts.yaml, finding
``marketed_label_units_inconsistent``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.columns import Column, Columns, Rows
from kvreg.schema.common import Bandwidth, Bytes, DeviceMemory, Dtype, EntryId, Entry, Flops, Measure, Strict


DomainSize = Annotated[int, Field(ge=2)]


class Interconnect(Strict):
    """Accelerator-to-accelerator link; ``bandwidth`` is one direction, per accelerator.

    ``domain_size`` is how many devices one link domain connects at that bandwidth (an
    HGX baseboard's NVSwitch: 8; an NVLink bridge: 2; an NVL72 rack: 72).  Tensor
    parallelism wider than it leaves the link, so the roofline flags it and ``plans``
    refuses it (kvreg/sql/120_hardware_peaks.sql); absent means the reach is unknown.
    """

    name: Annotated[str, Column()]
    bandwidth: Annotated[Measure[Bandwidth], Column("bytes_per_s")]
    domain_size: Annotated[Measure[DomainSize] | None, Column()] = None
    link: Annotated[Literal["gpu_link", "pcie"], Column()] = "gpu_link"
    """``gpu_link``: a peer-to-peer GPU fabric (NVLink/NVSwitch, an NVLink bridge, XGMI); ``pcie``: the cards talk
    only through the host's PCIe switches.  The engines size their collectives by it: vLLM enables its custom
    all-reduce (and the buffers its profile run allocates) only over a GPU link, never on more than two PCIe-only
    GPUs (vllm/distributed/device_communicators/custom_all_reduce.py 0.19.0:152-159), so a PCIe group takes the
    release's ``non_torch_multi_gpu_pcie`` reserve (kvreg/sql/204_engine_reserve.sql).  At TP 2 vLLM may still enable it
    where PCIe peer access works (:160-168); kvreg does not model that case."""


Usd = Annotated[float, Field(gt=0)]
Watts = Annotated[float, Field(gt=0)]
# A purchase price may be dated to the year, the month or the day it was seen.
LooseDate = Annotated[str, Field(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$")]


class RentalQuote(Strict):
    """One on-demand rental price of one accelerator (or host) per hour, at one provider, on one day."""

    usd_per_hour: Annotated[Measure[Usd], Column("usd")]
    provider: Annotated[str, Column()]
    date: Annotated[dt.date, Column()]


class Purchase(Strict):
    """A purchase price of one accelerator (or one host), with what kind of price it is.

    ``kind`` says what was read (``MSRP``, ``OEM module price``, ``street price``); ``date``
    is when it was seen (``2026``, ``2026-04`` or ``2026-04-07``), absent when the source is undated.
    """

    usd: Annotated[Measure[Usd], Column()]
    kind: Annotated[str, Column("provider")]
    date: Annotated[LooseDate | None, Column()] = None


class Price(Strict):
    """What one device costs: on-demand rental quotes and, where public, a purchase price and TDP.

    ``rental`` lists quotes from as many providers as are public; the rental basis uses the
    lowest (kvreg/sql/115_hardware_rates.sql).  ``purchase`` with ``tdp_w`` (board power, watts)
    lets a report rank on a total cost of ownership instead: purchase ÷ (years × 8,760 h) + power.
    The older one-quote form (``usd_per_hour``, ``provider``, ``date`` at this level) is still
    read: it becomes the first rental quote.
    """

    usd_per_hour: Measure[Usd] | None = None
    provider: str | None = None
    date: dt.date | None = None
    rental: list[RentalQuote] = []
    purchase: Purchase | None = None
    tdp_w: Annotated[Measure[Watts] | None, Column("tdp_watts")] = None

    @model_validator(mode="after")
    def _quotes(self):
        legacy = [self.usd_per_hour is not None, self.provider is not None, self.date is not None]
        if any(legacy) and not all(legacy):
            raise PydanticCustomError(
                "price_quote", "a one-quote price needs usd_per_hour, provider and date together",
                {"path": "", "hint": "or list quotes under rental: [{usd_per_hour, provider, date}]"})
        if not all(legacy) and not self.rental and self.purchase is None:
            raise PydanticCustomError(
                "price_empty", "a price block needs a rental quote or a purchase price",
                {"path": "", "hint": "add rental: [{usd_per_hour, provider, date}] or purchase: {usd, kind, date}"})
        return self

    def quotes(self) -> list[RentalQuote]:
        """Every rental quote: the one-quote form first (when given), then ``rental`` in file order."""
        head = ([RentalQuote(usd_per_hour=self.usd_per_hour, provider=self.provider, date=self.date)]
                if self.usd_per_hour is not None else [])
        return head + list(self.rental)


Fraction = Annotated[float, Field(gt=0, le=1)]


class Efficiency(Strict):
    """Achieved fraction of a ceiling, as measured or reported for this hardware (and engine).

    ``bandwidth`` is the share of ``bandwidth`` a real decode step reaches (memory-bound
    regime); ``compute`` the share of ``peak_flops`` a real prefill reaches.  The roofline
    view's ceiling columns use 1.0; its ``expected_*`` columns use these (kvreg/sql/120_hardware_peaks.sql).
    """

    bandwidth: Annotated[Measure[Fraction] | None, Column("bandwidth_efficiency")] = None
    compute: Annotated[Measure[Fraction] | None, Column("compute_efficiency")] = None


class Resident(Strict):
    """Memory held by something other than the served model (OS, caches, another model).

    Either ``bytes`` directly, or ``model`` (a registry model id) whose weights
    at ``weights_dtype`` are resident.
    """

    name: Annotated[str, Column()]
    bytes: Annotated[Measure[Bytes] | None, Column("resident_bytes")] = None
    model: Annotated[EntryId | None, Column("model_id")] = None
    weights_dtype: Annotated[Dtype | None, Column()] = None

    @model_validator(mode="after")
    def _one_of(self):
        if (self.bytes is None) == (self.model is None):
            raise PydanticCustomError("resident_size", "a resident needs exactly one of bytes or model",
                                      {"path": "", "hint": "write bytes: 12 GB, or model: <model id> with weights_dtype"})
        return self


class HardwareEntry(Entry):
    """One accelerator (per-device figures) or one host with unified memory."""

    vendor: Annotated[str, Column()]
    architecture: Annotated[str | None, Column()] = None
    """Architecture family for speed (``hopper``, ``blackwell``, ``blackwell-gddr``, ``ada``, ``ampere``,
    ``cdna3``, …): the die generation AND its memory system, since the achieved share of bandwidth is a property
    of both (an RTX PRO 6000's GDDR7 is not a B200's HBM3e).  Hardware without throughput measurements of its
    own borrows its family's fitted efficiency (kvreg/sql/253_speed_efficiency_by_holdout.sql)."""
    compute_capability: Annotated[Measure[Annotated[float, Field(ge=1, lt=100)]] | None,
                                  Column(table="hardware_capabilities")] = None
    """CUDA compute capability (NVIDIA devices: 7.5 Turing, 8.0/8.6 Ampere, 8.9 Ada, 9.0 Hopper, 10.0/10.3 and
    12.0/12.1 Blackwell), what an engine's per-precision minimum is compared against (kvreg/schema/support.py,
    kvreg/sql/058_engine_support.sql); absent for devices that have none."""
    kind: Annotated[Literal["accelerator", "host"], Column()] = "accelerator"
    memory_marketed: Annotated[Measure[DeviceMemory], Column("marketed_bytes")]
    memory_usable: Annotated[Measure[DeviceMemory], Column("usable_bytes")]
    memory_basis: Annotated[Literal["runtime", "marketed"], Column()]
    unified_memory: Annotated[bool, Column()] = False
    bandwidth: Annotated[Measure[Bandwidth] | None, Column("bandwidth_bytes_per_s")] = None
    peak_flops: Annotated[dict[Dtype, Measure[Flops]], Rows("hardware_flops", "dtype", "flop_per_s")] = {}
    native_precisions: Annotated[list[Dtype], Rows("hardware_precisions", "dtype")] = []
    interconnect: Annotated[Interconnect | None, Columns("interconnect_")] = None
    price: Annotated[Price | None, Columns()] = None
    efficiency: Efficiency | None = None
    residents: list[Resident] = []

    @model_validator(mode="after")
    def _usable_le_marketed(self):
        # Unified-memory hosts and marketed-in-GiB parts may legitimately exceed the
        # decimal label slightly; a usable figure 10 % above it is a unit slip.
        if self.memory_usable.value > 1.1 * self.memory_marketed.value:
            raise PydanticCustomError(
                "usable_gt_marketed", "memory_usable is more than 10 % above memory_marketed",
                {"path": "memory_usable", "hint": "check the units: GiB is 2^30 bytes, GB is 10^9"})
        return self
