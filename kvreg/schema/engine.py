"""A serving-engine entry: one release range and how it accounts memory (registry/engines/*.yaml).

This schema holds what the first-principles pool needs (utilization, runtime
reserve, block size).  Engine-specific accounting quirks are data fields here
too, never code branches per model.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, PositiveInt

from kvreg.schema.accounting import Accounting
from kvreg.schema.common import BytesOrZero, Entry, Measure


class EngineEntry(Entry):
    """Defaults of one engine release range.

    ``gpu_memory_utilization`` is the fraction of usable memory the engine may
    claim; ``runtime_reserve`` is what it holds back from that claim before the
    KV pool (activations, workspace, graphs); ``block_size`` is tokens per KV
    block (1 = no paging).
    """

    engine: str
    releases: str | None = None
    gpu_memory_utilization: Measure[Annotated[float, Field(gt=0, le=1)]]
    runtime_reserve: Measure[BytesOrZero]
    block_size: PositiveInt = 1
    accounting: Accounting | None = None
    """Release-specific KV accounting (kvreg/schema/accounting.py); absent for first-principles."""
