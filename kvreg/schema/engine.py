"""A serving-engine entry: one release range and how it accounts memory (registry/engines/*.yaml).

This schema holds what the first-principles pool needs (utilization, runtime
reserve, block size).  Engine-specific accounting quirks are data fields here
too, never code branches per model.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.accounting import Accounting, cited_sources
from kvreg.schema.columns import Column
from kvreg.schema.common import BytesOrZero, Entry, Measure
from kvreg.schema.support import Support


class EngineEntry(Entry):
    """Defaults of one engine release range.

    ``gpu_memory_utilization`` is the fraction of usable memory the engine may
    claim; ``runtime_reserve`` is what it holds back from that claim before the
    KV pool (activations, workspace, graphs); ``block_size`` is tokens per KV
    block (1 = no paging).
    """

    extends: str | None = None
    """Engine id this release is written against (kvreg/extends.py merges the parent's data first)."""
    engine: Annotated[str, Column()]
    releases: Annotated[str | None, Column()] = None
    gpu_memory_utilization: Annotated[Measure[Annotated[float, Field(gt=0, le=1)]], Column()]
    runtime_reserve: Annotated[Measure[BytesOrZero], Column("reserve_bytes")]
    block_size: Annotated[PositiveInt, Column("block_size_tokens")] = 1
    accounting: Accounting | None = None
    """Release-specific KV accounting (kvreg/schema/accounting.py); absent for first-principles."""
    support: Support | None = None
    """Platforms and precisions the release runs, by device (kvreg/schema/support.py); absent: not checked."""

    @model_validator(mode="after")
    def _rule_sources_resolve(self):
        ids = {s.id for s in self.sources if s.id}
        cited = (cited_sources(self.accounting) if self.accounting else []) + (
            self.support.cited() if self.support else [])
        for path, src in cited:
            if src not in ids:
                raise PydanticCustomError(
                    "unknown_source", "{path}: source '{src}' is not one of this entry's sources",
                    {"path": path, "src": src, "hint": f"cite one of {sorted(ids) or 'none'}"})
        return self
