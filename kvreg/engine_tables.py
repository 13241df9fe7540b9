"""Engine-accounting base tables: engine release rules, quirks, served model sets, observations, axes.

Merged into :data:`kvreg.tables.TABLES` so they are validated by pandera and
loaded like every other base table.  Column names carry units; logged GiB
figures are converted to bytes (GiB = 2^30) and keep their printed decimals
(``*_decimals``) so the calibration can bound the rounding.
"""

from __future__ import annotations

from kvreg.entry_tables import EntryTable, columns, rows as entry_rows
from kvreg.schema.model import ModelEntry

GIB = 2**30
I, F, S, B = "Int64", "Float64", "string", "boolean"

# max_model_len ladder (tokens): common serving settings, 4Ki … 1Mi; observation values, report contexts
# and report workload contexts are added (so a report asking for 48Ki gets engine figures at 48Ki).
MAX_MODEL_LEN_LADDER = [4096, 8192, 16384, 32768, 40960, 65536, 131072, 262144, 524288, 1048576]

PROFILE_GEOMETRY = EntryTable("model_profile_geometry", "model", ModelEntry, ("model_id",), home="models")

ENGINE_TABLES: dict[str, dict[str, tuple[str, bool]]] = {
    "engine_accounting": {
        "engine_id": (S, False), "release_first": (S, False), "release_last": (S, True),
        "util_basis": (S, False), "block_size_mla_tokens": (I, True), "hybrid_allocator": (S, False),
        # block sizes the release accepts for --block-size, comma-joined (NULL: the knob is not modelled)
        "block_sizes": (S, True), "block_size_mla_forced": (B, False), "recurrent_alignment_rule": (S, False),
        "group_size_rule": (S, False), "swa_pool_ratio": (F, True), "sliding_as_full": (S, False),
        "chunked_as_full": (S, False), "k_eq_v_stored_once": (B, False), "recurrent_in_pool": (B, False),
        "recurrent_alignment_tokens": (I, True), "recurrent_blocks_per_request": (I, False),
        "sliding_extra_blocks": (I, False), "window_batched_tokens_factor": (I, False),
        "max_num_batched_tokens": (I, False), "max_num_seqs": (I, False), "large_gpu_min_bytes": (I, True),
        "large_gpu_excludes": (S, True), "max_num_batched_tokens_large_gpu": (I, True),
        "max_num_seqs_large_gpu": (I, True), "logged_tokens_rule": (S, False), "concurrency_rule": (S, False),
        "null_block_in_fit_check": (B, False), "available_log_decimals": (I, True),
        "non_torch_bytes": (I, False), "activation_bytes_per_token_hidden": (F, False),
        "sampler_bytes_per_seq_vocab": (F, False), "cudagraph_bytes": (I, False),
        "non_torch_multi_gpu_bytes": (I, True), "non_torch_multi_gpu_pcie_bytes": (I, True), "non_torch_per_extra_rank_bytes": (I, False),
        "torch_workspace_bytes": (I, False), "forward_hidden_tensors": (F, False),
        "forward_intermediate_tensors": (F, False), "sampler_buffer_rows": (I, False),
        "profile_hidden_kept": (B, False), "moe_workspace": (S, False),
        # reserve.cudagraph_profile (NULL where the release has none; lists comma-joined)
        "cudagraph_profiled": (B, False), "cudagraph_subtracted": (B, True), "cudagraph_max_capture_size": (I, True),
        "cudagraph_append_max_num_seqs": (B, True), "cudagraph_piecewise_per_layer_bytes": (I, True),
        "cudagraph_full_per_layer_bytes": (I, True), "cudagraph_min_per_graph_bytes": (I, True),
        "cudagraph_split_kv_splits": (I, True), "cudagraph_split_kv_hardware": (S, True),
        "cudagraph_split_kv_excluded_models": (S, True), "cudagraph_split_kv_max_head_dim": (I, True),
        # accounting.mem_fraction_rule (SGLang's default mem_fraction_static; NULL where the release has none)
        "mem_fraction_base_bytes": (I, True), "mem_fraction_per_prefill_token_bytes": (I, True),
        "mem_fraction_min_prefill_tokens": (I, True), "mem_fraction_per_graph_batch_bytes": (I, True),
        "mem_fraction_per_rank_bytes": (I, True), "mem_fraction_floor_bytes": (I, True),
        "mem_fraction_floor_above_bytes": (I, True), "mem_fraction_decimals": (I, True),
    },
    # accounting.mem_fraction_rule.tiers: the defaults by device memory, in order (kvreg/sql/205 engine_memory_pools_at)
    "engine_mem_fraction_tiers": {
        "engine_id": (S, False), "tier_idx": (I, False), "below_bytes": (I, True),
        "chunked_prefill_tokens": (I, False), "cuda_graph_max_bs": (I, False), "cuda_graph_max_bs_tp4": (I, True),
    },
    # accounting.mla_backends: the MLA backend and its default block per device architecture, in rule order
    # (kvreg/sql/200_engine_layer_specs.sql engine_mla_backend; lists comma-joined, NULL = any)
    "engine_mla_backend_rules": {
        "engine_id": (S, False), "rule_idx": (I, False), "backend": (S, False), "architectures": (S, False),
        "kv_dtypes": (S, True), "sparse": (B, True), "block_tokens": (I, False),
    },
    # The model geometry the engine's profile run depends on (kvreg/sql/204_engine_reserve.sql): the model
    # fields marked Column(table="model_profile_geometry") (kvreg/entry_tables.py).
    "model_profile_geometry": columns(PROFILE_GEOMETRY),
    "engine_quirks": {
        "engine_id": (S, False), "quirk_idx": (I, False), "quirk_id": (S, False), "trigger": (S, False),
        "text": (S, False),
    },
    "served_models": {"served_id": (S, False), "model_id": (S, False), "role": (S, False),
                      "num_speculative_tokens": (I, False)},
    # Rows of each recurrent group's conv state (kernel − 1): speculative decoding adds num_spec rows.
    "recurrent_conv_rows": {"model_id": (S, False), "group_idx": (I, False), "conv_rows": (I, False)},
    "observations": {
        "observation_id": (S, False), "engine_id": (S, True), "engine_version": (S, True), "model_id": (S, True),
        "served_id": (S, True), "draft_model_id": (S, True), "hardware_id": (S, True), "tp": (I, False),
        "pp": (I, False), "max_model_len": (I, True), "gpu_memory_utilization": (F, True),
        "max_num_batched_tokens": (I, True), "max_num_seqs": (I, True), "kv_dtype": (S, True),
        "enforce_eager": (B, False), "num_speculative_tokens": (I, True),
        "weights_dtype": (S, True), "model_loading_bytes": (F, True), "available_kv_bytes": (F, True),
        "available_kv_decimals": (I, True), "num_gpu_blocks": (I, True), "kv_cache_tokens": (I, True),
        "max_concurrency": (F, True), "max_concurrency_tokens": (I, True), "total_gpu_memory_bytes": (F, True),
        "started": (B, True), "reproducible": (B, False), "source_url": (S, True), "notes": (S, True),
        "model_hf_id": (S, True), "dp": (I, True), "dtype": (S, True), "quantization": (S, True),
        "release_confidence": (S, True), "init_free_bytes": (F, True), "requested_bytes": (F, True),
        "logged_weights_bytes": (F, True), "logged_activation_bytes": (F, True), "logged_non_torch_bytes": (F, True),
        "logged_non_kv_bytes": (F, True), "logged_cuda_graph_estimated_bytes": (F, True),
        "logged_cuda_graph_bytes": (F, True),
        "file": (S, False), "line": (I, False), "engine_line": (I, False), "hardware_line": (I, False),
        "draft_line": (I, False),
    },
    "max_model_lens": {"max_model_len": (I, False)},
    "batched_tokens": {"max_num_batched_tokens": (I, False)},
}


def _decimals(x: float | None) -> int | None:
    """Decimals a logged figure was printed with (50.32 → 2), from its shortest repr."""
    if x is None:
        return None
    s = repr(float(x))
    return 0 if s.endswith(".0") else len(s.split(".")[1])


def served_id(target: str, draft: str | None, num_spec: int) -> str:
    """The served-model id of a target with an optional draft (or MTP head) and speculative tokens."""
    return target + (f"+{draft}" if draft else "") + (f"+spec{num_spec}" if num_spec else "")


def _cudagraph_columns(cg) -> dict:
    """The ``cudagraph_*`` columns of engine_accounting from ``reserve.cudagraph_profile`` (all NULL without one)."""
    if cg is None:
        return dict(cudagraph_profiled=False)
    return dict(cudagraph_profiled=True, cudagraph_subtracted=cg.subtracted.value,
                cudagraph_max_capture_size=cg.max_capture_size.value,
                cudagraph_append_max_num_seqs=cg.append_max_num_seqs.value,
                cudagraph_piecewise_per_layer_bytes=cg.piecewise_per_layer.value,
                cudagraph_full_per_layer_bytes=cg.full_per_layer.value, cudagraph_min_per_graph_bytes=cg.min_per_graph.value,
                cudagraph_split_kv_splits=cg.split_kv_splits.value,
                cudagraph_split_kv_hardware=",".join(cg.split_kv_hardware_architectures) or None,
                cudagraph_split_kv_excluded_models=",".join(cg.split_kv_excluded_model_architectures) or None,
                cudagraph_split_kv_max_head_dim=cg.split_kv_max_head_dim.value)


def _mem_fraction_columns(mf) -> dict:
    """The ``mem_fraction_*`` columns of engine_accounting from ``mem_fraction_rule`` (none without one: NULL)."""
    if mf is None:
        return {}
    return dict(mem_fraction_base_bytes=mf.base.value, mem_fraction_per_prefill_token_bytes=mf.per_prefill_token.value,
                mem_fraction_min_prefill_tokens=mf.min_prefill_tokens.value,
                mem_fraction_per_graph_batch_bytes=mf.per_graph_batch.value, mem_fraction_per_rank_bytes=mf.per_rank.value,
                mem_fraction_floor_bytes=mf.floor.value, mem_fraction_floor_above_bytes=mf.floor_above.value,
                mem_fraction_decimals=mf.decimals.value)


def engine_rows(registry) -> dict[str, list[dict]]:
    """Rows of :data:`ENGINE_TABLES` from validated entries (see kvreg/schema/accounting.py)."""
    rows: dict[str, list[dict]] = {name: [] for name in ENGINE_TABLES}
    for eid, item in sorted(registry.entries.get("engine", {}).items()):
        a = item.entry.accounting
        if a is None:
            continue
        v = lambda m: None if m is None else m.value  # noqa: E731
        r = a.reserve
        rows["engine_accounting"].append(dict(
            engine_id=eid, release_first=a.release_first, release_last=a.release_last, util_basis=a.util_basis.value,
            block_size_mla_tokens=v(a.block_size_mla), hybrid_allocator=a.hybrid_allocator.value,
            block_sizes=None if a.block_sizes is None else ",".join(map(str, a.block_sizes.value)),
            block_size_mla_forced=a.block_size_mla_forced.value,
            recurrent_alignment_rule=a.recurrent_alignment_rule.value,
            group_size_rule=a.group_size_rule.value, swa_pool_ratio=v(a.swa_pool_ratio),
            sliding_as_full=a.sliding_as_full.value, chunked_as_full=a.chunked_as_full.value,
            k_eq_v_stored_once=a.k_eq_v_stored_once.value, recurrent_in_pool=a.recurrent_in_pool.value,
            recurrent_alignment_tokens=v(a.recurrent_alignment_tokens),
            recurrent_blocks_per_request=a.recurrent_blocks_per_request.value,
            sliding_extra_blocks=a.sliding_extra_blocks.value,
            window_batched_tokens_factor=a.window_batched_tokens_factor.value,
            max_num_batched_tokens=a.max_num_batched_tokens.value, max_num_seqs=a.max_num_seqs.value,
            large_gpu_min_bytes=v(a.large_gpu_min_bytes), large_gpu_excludes=",".join(a.large_gpu_excludes) or None,
            max_num_batched_tokens_large_gpu=v(a.max_num_batched_tokens_large_gpu),
            max_num_seqs_large_gpu=v(a.max_num_seqs_large_gpu), logged_tokens_rule=a.logged_tokens_rule.value,
            concurrency_rule=a.concurrency_rule.value, null_block_in_fit_check=a.null_block_in_fit_check.value,
            available_log_decimals=v(a.available_log_decimals), non_torch_bytes=r.non_torch.value,
            activation_bytes_per_token_hidden=r.activation_bytes_per_token_hidden.value,
            sampler_bytes_per_seq_vocab=r.sampler_bytes_per_seq_vocab.value, cudagraph_bytes=r.cudagraph.value,
            non_torch_multi_gpu_bytes=v(r.non_torch_multi_gpu), non_torch_multi_gpu_pcie_bytes=v(r.non_torch_multi_gpu_pcie),
            non_torch_per_extra_rank_bytes=r.non_torch_per_extra_rank.value,
            torch_workspace_bytes=r.torch_workspace.value, forward_hidden_tensors=r.forward_hidden_tensors.value,
            forward_intermediate_tensors=r.forward_intermediate_tensors.value,
            sampler_buffer_rows=r.sampler_buffer_rows.value, profile_hidden_kept=r.profile_hidden_kept.value,
            moe_workspace=r.moe_workspace.value, **_cudagraph_columns(r.cudagraph_profile),
            **_mem_fraction_columns(a.mem_fraction_rule)))
        mf = a.mem_fraction_rule
        for ti, t in enumerate(mf.tiers if mf else []):
            rows["engine_mem_fraction_tiers"].append(dict(
                engine_id=eid, tier_idx=ti, below_bytes=v(t.below), chunked_prefill_tokens=t.chunked_prefill_size.value,
                cuda_graph_max_bs=t.cuda_graph_max_bs.value, cuda_graph_max_bs_tp4=v(t.cuda_graph_max_bs_tp4)))
        for ri, rule in enumerate(a.mla_backends.value if a.mla_backends else []):
            rows["engine_mla_backend_rules"].append(dict(
                engine_id=eid, rule_idx=ri, backend=rule.backend, architectures=",".join(rule.architectures),
                kv_dtypes=None if rule.kv_dtypes is None else ",".join(rule.kv_dtypes), sparse=rule.sparse,
                block_tokens=rule.block_tokens))
        for qi, q in enumerate(a.quirks):
            rows["engine_quirks"].append(dict(engine_id=eid, quirk_idx=qi, quirk_id=q.id, trigger=q.trigger,
                                              text=q.text))
    models = set(registry.entries.get("model", {}))
    for mid in sorted(models):
        rows["served_models"].append(dict(served_id=mid, model_id=mid, role="target", num_speculative_tokens=0))
        m = registry.entries["model"][mid].entry
        for gi, g in enumerate(m.layer_groups):
            for t in (g.state or []):
                if t.role == "conv":
                    rows["recurrent_conv_rows"].append(dict(model_id=mid, group_idx=gi, conv_rows=t.shape[0]))
    rows["model_profile_geometry"] = entry_rows(PROFILE_GEOMETRY, registry)
    served_sets: set[tuple[str, str | None, int]] = set()
    lens = set(MAX_MODEL_LEN_LADDER)
    batched = {2048, 4096, 8192, 16384}
    for a in (item.entry.accounting for item in registry.entries.get("engine", {}).values()):
        if a is not None:
            batched.add(a.max_num_batched_tokens.value)
            if a.max_num_batched_tokens_large_gpu is not None:
                batched.add(a.max_num_batched_tokens_large_gpu.value)
            for t in (a.mem_fraction_rule.tiers if a.mem_fraction_rule else []):
                batched.add(t.chunked_prefill_size.value)
    for oid, item in sorted(registry.entries.get("observation", {}).items()):
        o, doc = item.entry, item.doc
        s, lg = o.settings, o.logged
        served = o.model
        n_spec = s.num_speculative_tokens or 0
        if o.model and (s.draft_model or n_spec):
            served = served_id(o.model, s.draft_model, n_spec)
            served_sets.add((o.model, s.draft_model, n_spec))
        gib = lambda x: None if x is None else x * GIB  # noqa: E731
        url = next((src.url for src in o.sources if src.url), None)
        rows["observations"].append(dict(
            observation_id=oid, engine_id=o.engine, engine_version=o.engine_version, model_id=o.model,
            served_id=served, draft_model_id=s.draft_model, hardware_id=o.hardware, tp=s.tp, pp=s.pp,
            max_model_len=s.max_model_len, gpu_memory_utilization=s.gpu_memory_utilization,
            max_num_batched_tokens=s.max_num_batched_tokens, max_num_seqs=s.max_num_seqs, kv_dtype=s.kv_dtype,
            enforce_eager=bool(s.enforce_eager), num_speculative_tokens=s.num_speculative_tokens,
            weights_dtype=s.weights_dtype, model_loading_bytes=gib(lg.model_loading_gib),
            available_kv_bytes=gib(lg.available_kv_cache_memory_gib),
            available_kv_decimals=_decimals(lg.available_kv_cache_memory_gib), num_gpu_blocks=lg.num_gpu_blocks,
            kv_cache_tokens=lg.kv_cache_tokens, max_concurrency=lg.max_concurrency,
            max_concurrency_tokens=lg.max_concurrency_tokens, total_gpu_memory_bytes=gib(lg.total_gpu_memory_gib),
            started=lg.started, reproducible=o.reproducible, source_url=url, notes=o.notes,
            model_hf_id=o.model_hf_id, dp=s.dp, dtype=s.dtype, quantization=s.quantization,
            release_confidence=o.release_confidence, init_free_bytes=gib(lg.init_free_memory_gib),
            requested_bytes=gib(lg.requested_memory_gib),
            logged_weights_bytes=gib(lg.weights_memory_gib if lg.weights_memory_gib is not None
                                     else lg.model_loading_gib),
            logged_activation_bytes=gib(lg.activation_peak_gib), logged_non_torch_bytes=gib(lg.non_torch_forward_gib),
            logged_non_kv_bytes=gib(lg.non_kv_memory_gib),
            logged_cuda_graph_estimated_bytes=gib(lg.cuda_graph_estimated_gib),
            logged_cuda_graph_bytes=gib(lg.cuda_graph_memory_gib), file=doc.file,
            line=doc.where(("id",))[0], engine_line=doc.where(("engine",))[0],
            hardware_line=doc.where(("hardware",))[0], draft_line=doc.where(("settings", "draft_model"))[0]))
        if s.max_model_len:
            lens.add(s.max_model_len)
        if s.max_num_batched_tokens:
            batched.add(s.max_num_batched_tokens)
    for item in registry.entries.get("report", {}).values():
        lens |= set(item.entry.contexts) | {item.entry.workload.context}
    for target, draft, n_spec in sorted(served_sets, key=lambda x: (x[0], x[1] or "", x[2])):
        if target in models and (draft is None or draft in models):
            sid = served_id(target, draft, n_spec)
            rows["served_models"].append(dict(served_id=sid, model_id=target, role="target",
                                              num_speculative_tokens=n_spec))
            if draft:
                rows["served_models"].append(dict(served_id=sid, model_id=draft, role="draft",
                                                  num_speculative_tokens=n_spec))
    rows["max_model_lens"] = [dict(max_model_len=n) for n in sorted(lens)]
    rows["batched_tokens"] = [dict(max_num_batched_tokens=n) for n in sorted(batched)]
    return rows
