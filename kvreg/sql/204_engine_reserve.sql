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

-- The reserve: persistent terms + the larger dummy run (the forward's activations are freed before the
-- sampler runs) + the CUDA-graph estimate where the release subtracts it (never with enforce_eager).
CREATE OR REPLACE MACRO engine_reserve_bytes(non_torch, torch_workspace, moe_workspace, forward_peak, sampler_peak,
                                             cudagraph, enforce_eager) AS
    non_torch + torch_workspace + moe_workspace + greatest(forward_peak, sampler_peak)
    + CASE WHEN coalesce(enforce_eager, false) THEN 0 ELSE cudagraph END;
