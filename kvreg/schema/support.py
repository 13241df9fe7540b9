"""What an engine release can run, and where: the ``support:`` block of an engine entry.

An engine release runs on a device only through one of its platforms (vLLM's
``builtin_platform_plugins``: CUDA, ROCm, TPU, XPU, CPU; a macOS host takes the CPU one), and
at a weights or KV precision only where that platform's kernels take it (vLLM's
``QuantizationConfig.get_min_capability()`` against the device's compute capability, ROCm's
``supports_fp8()`` by gfx target).  The block is data, read from the engine's own code and cited
file:line, and becomes the tables ``engine_platforms`` and ``engine_precision_rules``
(kvreg/engine_tables.py); the view ``engine_support`` (kvreg/sql/058_engine_support.sql) judges
every engine × device × weights × KV precision by it, and ``plans`` refuses what it rules out.

Matching, in order (the view implements it):

1. the device's platform is the first of ``platforms`` whose ``vendors`` (when listed) hold the
   device's vendor and whose ``architectures`` (when listed) hold its architecture; none: the
   release cannot run on it;
2. a platform's ``min_capability`` (CUDA compute capability, e.g. 7.0) must be met;
3. a weights (KV) precision must be in the platform's ``weights_dtypes`` (``kv_dtypes``);
4. where ``precisions`` has rules for that platform and precision, one of them must hold
   (``min_capability`` met, and the device's architecture in ``architectures`` when listed);
   where it has none, the platform's list is the whole rule;
5. ``sized: false`` marks a platform whose memory is not the one kvreg's engine model plans
   (vLLM's CPU backend sizes its KV cache from ``VLLM_CPU_KVCACHE_SPACE``): the device runs the
   release, but plans do not size it on the GPU memory model.

An engine entry without ``support`` (first-principles: not an engine) is not checked.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from kvreg.schema.columns import Column
from kvreg.schema.common import Dtype, Measure, Strict

# CUDA compute capability as NVIDIA writes it (7.5, 8.9, 10.3); stored ×10 as vLLM's
# DeviceCapability.to_int() compares it (platforms/interface.py).
Capability = Annotated[float, Field(ge=1, lt=100)]
RuleId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")]


class _Cited(Strict):
    """A rule read from the engine's code or docs: ``source`` (an id of the entry's sources) and
    ``cite`` (file:line or the page section the rule is read from).  A bare ``min_capability`` rests
    on the rule's source (it becomes ``{value, source}``, so the provenance table has it)."""

    source: str
    cite: Annotated[str, Column(last=True)]
    note: Annotated[str | None, Column(last=True)] = None
    min_capability: Annotated[Measure[Capability] | None, Column(after="architectures")] = None

    @model_validator(mode="before")
    @classmethod
    def _capability_cited(cls, data):
        if isinstance(data, dict) and "min_capability" in data and not isinstance(data["min_capability"], dict):
            data = {**data, "min_capability": {"value": data["min_capability"], "source": data.get("source")}}
        return data


class PlatformRule(_Cited):
    """One platform an engine release runs on and which devices take it.

    ``id`` names the platform (``cuda``, ``rocm``, ``tpu``, ``cpu``: the engine's own name);
    ``label`` is how a sentence names it ("CPU backend").  ``vendors`` / ``architectures`` are
    hardware entries' ``vendor`` and ``architecture`` values (both lists may be given; at least
    one).  ``weights_dtypes`` / ``kv_dtypes`` are the precisions it runs at all.
    """

    id: Annotated[RuleId, Column("platform_id")]
    label: Annotated[str, Column()]
    vendors: Annotated[list[str], Column(join=",")] = []
    architectures: Annotated[list[str], Column(join=",")] = []
    weights_dtypes: Annotated[list[Dtype], Field(min_length=1), Column(join=",")]
    kv_dtypes: Annotated[list[Dtype], Field(min_length=1), Column(join=",")]
    sized: Annotated[bool, Column()] = True

    @model_validator(mode="after")
    def _matches_something(self):
        if not self.vendors and not self.architectures:
            raise PydanticCustomError(
                "platform_match", "platform '{pid}' names no vendor and no architecture",
                {"path": "vendors", "pid": self.id,
                 "hint": "list the hardware vendors (vendors: [NVIDIA]) or architectures (architectures: [cdna3])"})
        return self


class PrecisionRule(_Cited):
    """Which devices of one platform run some weights or KV precisions.

    ``weights`` / ``kv``: the precisions the rule is about (one of the two lists, or both);
    ``method`` the engine's own name for the path (``fp8``, ``gptq_marlin``, ``modelopt_fp4``);
    ``min_capability`` and/or ``architectures`` the condition the device must meet.
    """

    id: Annotated[RuleId, Column("rule_id")]
    platform: Annotated[str, Column("platform_id")]
    weights: Annotated[list[Dtype], Column(join=",")] = []
    kv: Annotated[list[Dtype], Column(join=",")] = []
    method: Annotated[str | None, Column()] = None
    # after min_capability (a field of the base), which comes after method in this table
    architectures: Annotated[list[str], Column(join=",", after="min_capability")] = []

    @model_validator(mode="after")
    def _says_something(self):
        if not self.weights and not self.kv:
            raise PydanticCustomError(
                "precision_rule_empty", "precision rule '{rid}' names no weights and no KV precision",
                {"path": "weights", "rid": self.id, "hint": "write weights: [fp8] and/or kv: [fp8]"})
        if self.min_capability is None and not self.architectures:
            raise PydanticCustomError(
                "precision_rule_condition", "precision rule '{rid}' has no condition",
                {"path": "min_capability", "rid": self.id,
                 "hint": "give min_capability: 8.9 (CUDA compute capability) or architectures: [cdna3, ...]"})
        return self


class Support(Strict):
    """An engine release's platforms (in match order) and per-precision rules; each rule cited."""

    platforms: Annotated[list[PlatformRule], Field(min_length=1)]
    precisions: list[PrecisionRule] = []
    platforms_source: str
    platforms_cite: Annotated[str, Column(table="engine_platforms", after="note", last=True)]
    """Where the release's list of platforms is read (vLLM: ``builtin_platform_plugins``); a device no
    platform takes is refused with it."""

    @model_validator(mode="after")
    def _rules_name_platforms(self):
        ids = [p.id for p in self.platforms]
        if len(set(ids)) != len(ids):
            raise PydanticCustomError("duplicate_platform", "a platform id is listed twice",
                                      {"path": "platforms", "hint": "give each platform its own id"})
        for i, r in enumerate(self.precisions):
            if r.platform not in ids:
                raise PydanticCustomError(
                    "unknown_platform", "precision rule '{rid}' names platform '{plat}', not one of {ids}",
                    {"path": f"precisions.{i}.platform", "rid": r.id, "plat": r.platform, "ids": ids,
                     "hint": f"use one of {ids}"})
        return self

    def cited(self) -> list[tuple[str, str]]:
        """(key path, source id) of every rule, for the entry's source check."""
        return ([("support.platforms_source", self.platforms_source)]
                + [(f"support.platforms.{i}.source", p.source) for i, p in enumerate(self.platforms)]
                + [(f"support.precisions.{i}.source", r.source) for i, r in enumerate(self.precisions)])
