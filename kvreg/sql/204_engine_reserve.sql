-- Engine reserve: scalar macros for what a release holds back from its claim before the KV pool,
-- per TP rank, as the engine's own memory profile computes it (docs/engine.md has each term's
-- source in vLLM's code; the rules are data in registry/engines/*.yaml accounting.reserve).
-- Units: bytes per device (per TP rank); T = max_num_batched_tokens and N = max_num_seqs (knobs),
--   h = hidden, I = dense FFN width, V = vocab, act = activation bytes (2 for bf16/fp16).
-- Used by engine_memory_pools (205) and the calibration's end-to-end figures (230).

-- Non-torch growth during the profile run (gpu_worker.determine_available_memory → memory_profiling:
-- non_torch_increase).  TP 1: CUDA context and kernel modules loaded by the first forward.  TP > 1 over
-- a GPU link domain (NVLink/NVSwitch, XGMI: linked) adds the buffers the first collectives of the
-- profile run allocate (NCCL, symmetric-memory and custom all-reduce, which vLLM only enables over such
-- links: cuda_communicator.py 0.19.0:46-71, custom_all_reduce.py:148-153); over PCIe (no link domain)
-- the release's multi_gpu_pcie figure, by default the TP-1 one.
CREATE OR REPLACE MACRO engine_non_torch_bytes(non_torch_tp1, non_torch_multi_gpu, per_extra_rank,
                                               non_torch_multi_gpu_pcie, tp, linked) AS
    CASE WHEN tp <= 1 THEN non_torch_tp1
         WHEN NOT coalesce(linked, false) THEN coalesce(non_torch_multi_gpu_pcie, non_torch_tp1)
         ELSE coalesce(non_torch_multi_gpu, non_torch_tp1) + per_extra_rank * (tp - 2) END;

-- The forward dummy run over T tokens (gpu_model_runner._dummy_run): at the MLP, the residual, the
-- normed input and the output (T × h each) are alive beside gate_up (T × 2I/tp) and the activation
-- (T × I/tp); fitted engines use activation_per_token_hidden × h × T instead.
CREATE OR REPLACE MACRO engine_forward_peak_bytes(T, hidden, intermediate, tp, act_bytes,
                                                  hidden_tensors, intermediate_tensors, activation_per_token_hidden) AS
    T * (hidden_tensors * hidden + intermediate_tensors * coalesce(intermediate, 0) / tp) * act_bytes
    + activation_per_token_hidden * hidden * T;

-- The dummy sampler run over N sequences (gpu_model_runner._dummy_sampler_run → Sampler.forward):
-- bytes_per_elem × N × V for the logits and their copies alive at its peak, plus the Triton
-- top-k/top-p kernel's cached fp32 buffer of min(next_pow2(min(SMs, N)), SMs) rows × V
-- (topk_topp_triton.apply_top_k_top_p_triton), plus the forward's T × h output still alive.
CREATE OR REPLACE MACRO engine_sampler_peak_bytes(N, V, bytes_per_elem, buffer_rows, T, hidden, act_bytes, hidden_kept) AS
    CASE WHEN bytes_per_elem = 0 OR coalesce(V, 0) = 0 THEN 0
         ELSE bytes_per_elem * N * V
              + CASE WHEN buffer_rows > 0
                     THEN 4 * least(pow(2, ceil(log2(least(buffer_rows, N)))), buffer_rows) * V ELSE 0 END
              + CASE WHEN hidden_kept THEN T * hidden * act_bytes ELSE 0 END END;

-- vLLM's fused-MoE workspace (modular_kernel._allocate_buffers via the persistent WorkspaceManager,
-- TritonExperts.workspace_shapes): workspace13 = max(T·k·max(I/tp, h), T·h) and
-- workspace2 = T·k·max(2I/tp, h), in the activation dtype; it outlives the forward.
CREATE OR REPLACE MACRO engine_moe_workspace_bytes(rule, T, top_k, moe_intermediate, hidden, tp, act_bytes) AS
    CASE WHEN rule = 'triton_persistent' AND top_k IS NOT NULL AND moe_intermediate IS NOT NULL
         THEN (greatest(T * top_k * greatest(moe_intermediate / tp, hidden), T * hidden)
               + T * top_k * greatest(2 * moe_intermediate / tp, hidden)) * act_bytes
         ELSE 0 END;

-- CUDA graphs (vLLM profile_cudagraph_memory, gpu_model_runner.py 0.19.0:5862-5960, 0.22.0:6265-6370; rules in
-- accounting.reserve.cudagraph_profile, docs/engine.md §CUDA graphs).
-- The default capture ceiling: min(max_num_seqs × (1 + num_spec) × 2, cap), then ≤ max_num_batched_tokens T
-- (config/vllm.py 0.22.0:1650-1661).
CREATE OR REPLACE MACRO engine_cudagraph_max_size(max_num_seqs, num_spec, T, cap) AS
    least(max_num_seqs * (1 + coalesce(num_spec, 0)) * 2, cap, T);

-- The capture sizes (ascending): [1, 2, 4] + range(8, 256, 8) + range(256, M + 1, 16) up to the ceiling M, plus T where
-- it fits (config/vllm.py 0.22.0:1682-1708); ≥ 0.33 also max_num_seqs where it fits (append_max_num_seqs, no spec).
-- Empty (no graphs) with enforce_eager.
CREATE OR REPLACE MACRO engine_cudagraph_capture_sizes(max_num_seqs, num_spec, T, cap, append_max_num_seqs, enforce_eager) AS
    CASE WHEN coalesce(enforce_eager, false) THEN []::BIGINT[]
         ELSE list_sort(list_distinct(
              list_filter([1, 2, 4]::BIGINT[], lambda x: x <= engine_cudagraph_max_size(max_num_seqs, num_spec, T, cap))
              || range(8, least(engine_cudagraph_max_size(max_num_seqs, num_spec, T, cap) + 1, 256), 8)
              || range(256, engine_cudagraph_max_size(max_num_seqs, num_spec, T, cap) + 1, 16)
              || CASE WHEN T <= engine_cudagraph_max_size(max_num_seqs, num_spec, T, cap) THEN [T::BIGINT]
                      ELSE []::BIGINT[] END
              || CASE WHEN coalesce(append_max_num_seqs, false) AND coalesce(num_spec, 0) = 0
                           AND max_num_seqs <= cap AND max_num_seqs <= T THEN [max_num_seqs::BIGINT]
                      ELSE []::BIGINT[] END)) END;

-- The FULL (uniform decode) sizes of FULL_AND_PIECEWISE, the default cudagraph_mode: the capture sizes with
-- q ≤ size ≤ q × max_num_seqs, q = 1 + num_spec (cudagraph_dispatcher.py 0.22.0:209-236); PIECEWISE takes every size.
CREATE OR REPLACE MACRO engine_cudagraph_full_sizes(sizes, max_num_seqs, num_spec) AS
    list_filter(sizes, lambda x: x >= 1 + coalesce(num_spec, 0) AND x <= (1 + coalesce(num_spec, 0)) * max_num_seqs);

-- FlashAttention-3's split-KV accumulators that a FULL capture at `tokens` allocates in the graph pool:
-- [splits, heads per rank, tokens, value width] fp32 (flash_attn.py 0.22.0:434-440; value width = head size, or the
-- latent kv_lora_rank for MLA decode); 0 where the release's split-KV backend is not chosen (split_kv false).
CREATE OR REPLACE MACRO engine_cudagraph_split_kv_bytes(splits, tokens, heads, tp, value_width, split_kv) AS
    CASE WHEN split_kv AND coalesce(splits, 0) > 0 AND tokens IS NOT NULL
         THEN splits * tokens * (heads // tp) * value_width * 4 ELSE 0 END;

-- The estimate: max(first PIECEWISE, first FULL) + (n_pw − 1) × g_pw + (n_full − 1) × g_full, where the first captures
-- are first_pw / first_full (each already holding one graph's g) and g = max(per_layer × layers, min_per_graph)
-- (gpu_model_runner.py 0.22.0:6327-6332, 6359-6364: FULL and PIECEWISE share the pool, so only the larger first counts).
-- 0 without graphs.
CREATE OR REPLACE MACRO engine_cudagraph_estimate_bytes(n_pw, n_full, first_pw, first_full, per_graph_pw, per_graph_full) AS
    CASE WHEN coalesce(n_pw, 0) + coalesce(n_full, 0) = 0 THEN 0
         ELSE greatest(CASE WHEN n_pw > 0 THEN first_pw END, CASE WHEN n_full > 0 THEN first_full END)
              + greatest(n_pw - 1, 0) * per_graph_pw + greatest(n_full - 1, 0) * per_graph_full END;

-- The estimate from the capture sizes' counts and largest sizes (n_pw sizes, the largest max_size; n_full FULL sizes,
-- the largest max_full_size) and the per-model terms that engine_memory_pools carries: the first PIECEWISE capture is
-- first_fixed (the capture stream's own cuBLAS/cuBLASLt workspaces: torch keys them by handle and stream,
-- CublasHandlePool.cpp) + the forward's activations at the largest size (forward_per_token × S, the
-- engine_forward_peak_bytes rule) + one graph; the first FULL capture is the split-KV accumulators at the largest FULL
-- size (split_kv_per_token × S_full) + one graph.  Bytes per device.  Scalar inputs only: engine_memory_pools_at
-- computes the sizes once per distinct setting (a handful) instead of building the list on each of its rows.
CREATE OR REPLACE MACRO engine_cudagraph_bytes_of_counts(n_pw, n_full, max_size, max_full_size, first_fixed,
                                                         forward_per_token, split_kv_per_token, per_graph_pw,
                                                         per_graph_full) AS
    engine_cudagraph_estimate_bytes(
        n_pw, n_full,
        first_fixed + per_graph_pw + forward_per_token * coalesce(max_size, 0),
        per_graph_full + split_kv_per_token * coalesce(max_full_size, 0),
        per_graph_pw, per_graph_full);

-- The estimate at a setting, from the capture sizes (engine_cudagraph_capture_sizes): engine_cudagraph_bytes_of_counts
-- over the sizes and their FULL subset.  Bytes per device.
CREATE OR REPLACE MACRO engine_cudagraph_bytes(sizes, max_num_seqs, num_spec, first_fixed, forward_per_token,
                                               split_kv_per_token, per_graph_pw, per_graph_full) AS
    engine_cudagraph_bytes_of_counts(
        len(sizes), len(engine_cudagraph_full_sizes(sizes, max_num_seqs, num_spec)),
        list_max(sizes), list_max(engine_cudagraph_full_sizes(sizes, max_num_seqs, num_spec)),
        first_fixed, forward_per_token, split_kv_per_token, per_graph_pw, per_graph_full);

-- The reserve: persistent terms + the larger dummy run (the forward's activations are freed before the
-- sampler runs) + the CUDA-graph estimate where the release subtracts it (never with enforce_eager).
CREATE OR REPLACE MACRO engine_reserve_bytes(non_torch, torch_workspace, moe_workspace, forward_peak, sampler_peak,
                                             cudagraph, enforce_eager) AS
    non_torch + torch_workspace + moe_workspace + greatest(forward_peak, sampler_peak)
    + CASE WHEN coalesce(enforce_eager, false) THEN 0 ELSE cudagraph END;
