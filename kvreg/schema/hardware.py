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

from kvreg.schema.common import Bandwidth, Bytes, Dtype, EntryId, Entry, Flops, Measure, Strict


DomainSize = Annotated[int, Field(ge=2)]


class Interconnect(Strict):
    """Accelerator-to-accelerator link; ``bandwidth`` is one direction, per accelerator.

    ``domain_size`` is how many devices one link domain connects at that bandwidth (an
    HGX baseboard's NVSwitch: 8; an NVLink bridge: 2; an NVL72 rack: 72).  Tensor
    parallelism wider than it leaves the link, so the roofline flags it and ``plans``
    refuses it (kvreg/sql/120_hardware_peaks.sql); absent means the reach is unknown.
    """

    name: str
    bandwidth: Measure[Bandwidth]
    domain_size: Measure[DomainSize] | None = None


class Price(Strict):
    """Rental price of one accelerator (or host) per hour, with where and when it was seen."""

    usd_per_hour: Measure[float]
    provider: str
    date: dt.date


Fraction = Annotated[float, Field(gt=0, le=1)]


class Efficiency(Strict):
    """Achieved fraction of a ceiling, as measured or reported for this hardware (and engine).

    ``bandwidth`` is the share of ``bandwidth`` a real decode step reaches (memory-bound
    regime); ``compute`` the share of ``peak_flops`` a real prefill reaches.  The roofline
    view's ceiling columns use 1.0; its ``expected_*`` columns use these (kvreg/sql/120_hardware_peaks.sql).
    """

    bandwidth: Measure[Fraction] | None = None
    compute: Measure[Fraction] | None = None


class Resident(Strict):
    """Memory held by something other than the served model (OS, caches, another model).

    Either ``bytes`` directly, or ``model`` (a registry model id) whose weights
    at ``weights_dtype`` are resident.
    """

    name: str
    bytes: Measure[Bytes] | None = None
    model: EntryId | None = None
    weights_dtype: Dtype | None = None

    @model_validator(mode="after")
    def _one_of(self):
        if (self.bytes is None) == (self.model is None):
            raise PydanticCustomError("resident_size", "a resident needs exactly one of bytes or model",
                                      {"path": "", "hint": "write bytes: 12 GB, or model: <model id> with weights_dtype"})
        return self


class HardwareEntry(Entry):
    """One accelerator (per-device figures) or one host with unified memory."""

    vendor: str
    architecture: str | None = None
    """Architecture family for speed (``hopper``, ``blackwell``, ``blackwell-gddr``, ``ada``, ``ampere``,
    ``cdna3``, …): the die generation AND its memory system, since the achieved share of bandwidth is a property
    of both (an RTX PRO 6000's GDDR7 is not a B200's HBM3e).  Hardware without throughput measurements of its
    own borrows its family's fitted efficiency (kvreg/sql/253_speed_efficiency_by_holdout.sql)."""
    kind: Literal["accelerator", "host"] = "accelerator"
    memory_marketed: Measure[Bytes]
    memory_usable: Measure[Bytes]
    memory_basis: Literal["runtime", "marketed"]
    unified_memory: bool = False
    bandwidth: Measure[Bandwidth] | None = None
    peak_flops: dict[Dtype, Measure[Flops]] = {}
    native_precisions: list[Dtype] = []
    interconnect: Interconnect | None = None
    price: Price | None = None
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
