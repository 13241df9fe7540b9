-- throughput_ceilings: every published throughput measurement beside the roofline ceiling of the workload it
-- ran — the evidence the speed efficiencies are fitted to (252_speed_fit) and checked against (255).
-- Grain: one row per throughput measurement (source × measurement_idx).
-- Inputs: throughput_measurements, engines, engine_accounting (max_num_seqs), memory_pools_at (usable, weights,
--   max_num_batched_tokens), model_weights, decode_coefficients,
--   hardware_peaks, hardware, precisions; macros kv_read_bytes, decode_flop, params_read, expert_params,
--   expected_mixed_step_s.
-- The workload of a measurement: requests of input_tokens prompt and output_tokens generated, batched
--   continuously (prompt chunks ride along with decode steps).  Per OUTPUT token, on one replica (tp devices):
--   context_mean_tokens   input + output/2: the mean context over a request's decode steps (exact for full and
--                         MLA layers, whose reads grow linearly; windows read min(s, W) at that mean)
--   batch                 concurrency when the source fixes it; else the most requests the ENGINE'S KV pool could
--                         hold (240 memory_pools_at pool_bytes, per rank: what the release leaves for KV beside the
--                         weights, its reserve — activation peak, non-torch — and its memory fraction; at the
--                         entry's kv_cache_fraction where the source states one, by the release's util_basis, 203
--                         engine_available_kv_bytes: TensorRT-LLM (usable − weights − reserve) × fraction,
--                         KvCacheConfig.free_gpu_memory_fraction), capped by max_batch or
--                         the engine's max_num_seqs, each holding what the entry's kv_admission says the scheduler
--                         keeps for it: on_demand, its KV at the mean context; whole_request, its input + output
--                         (TensorRT-LLM's default GUARANTEED_NO_EVICT policy reserves each request to completion,
--                         tensorrt_llm/llmapi/llm_args.py SchedulerConfig, and trtllm-bench sizes its batch the same
--                         way, tensorrt_llm/bench/build/tuning.py calc_engine_setting: cache memory ÷ (bytes per
--                         token × (input + output))).  Until issue 13 (speed7) the pool was all the memory beside
--                         the weights (usable − residents − weights): Llama-3.3-70B FP8 on one H100 at 5,000/500 got
--                         13 requests where TensorRT-LLM's pool (0.95 × (79.19 GiB − 72.72 GB − 2.23 GB reserve))
--                         holds 10: the ceiling was sized on a batch the engine cannot run
--   flop_per_output_token decode_flop at the mean context (decode form) + the prompt's prefill FLOP ÷ output_tokens;
--                         the prompt costs n·decode_flop(n/2) in the prefill form (MLA decompressed,
--                         100_decode_coefficients): token i attends to i earlier tokens (causal), Σ a·i = a·n²/2 —
--                         the kernels skip the masked tiles (flash-attention, causal: n_block_max is clipped at
--                         ceil_div((m_block + 1)·kBlockM + seqlen_k − seqlen_q, kBlockN), so key blocks past a
--                         query block's diagonal are never loaded: csrc/flash_attn/src/flash_fwd_kernel.h
--                         compute_attn_1rowblock; FA3 the same in hopper/block.h get_n_block_min_max)
--   bytes_per_output_token the weights one decode step reads at this batch (MoE: experts hit by B tokens,
--                         params_read) ÷ B + the KV one sequence reads at the mean context + the routed experts'
--                         activations of the (1 + input/output) tokens each output token carries
--                         (decode_coefficients.moe_activation_bytes_per_token; 0 dense), all ranks
--   attn_flop_per_output_token  the attention (QKᵀ, PV) part of flop_per_output_token
--   memory_s, compute_s   bytes ÷ (tp·bandwidth), FLOP ÷ (tp·peak), per output token (the step's totals; the
--                         ceiling is set by the kernel classes below, not by their greater); the matmuls of the weights
--                         at the weights' peak, attention at the peak of the KV cache's precision (hardware_peaks'
--                         rule: fp8 where native, else bf16): attention multiplies activations by cached K/V,
--                         never by weights — vLLM's MLA prefill runs flash-attention on bf16 q/k/v with FP8 weights
--                         (0.11.0 mla/common.py _forward_prefill :1563; 0.19.0 mla_attention.py forward_mha :2650:
--                         FP8 prefill attention only when the prefill's q_data_type is set to fp8)
--   allreduce_s           (1 + input/output) tokens of all-reduce per output token (decode and prompt tokens):
--                         2 per layer, ring 2(tp−1)/tp of d_model bf16 values ÷ interconnect (as in roofline);
--                         0 at tp 1, NULL when the interconnect is unknown (then left out: still a ceiling)
--   KERNEL CLASSES, per output token, each a (memory, compute) pair of seconds (104 expected_class_step_s adds them,
--   each at the greater of its roofs):
--     gemm_memory_s, gemm_compute_s           dense GEMMs: the non-routed weights ÷ B; 2·(P_active − k·e) FLOP per
--                                             decoded and per prompt token (e = 104 expert_params)
--     expert_memory_s, expert_compute_s       grouped routed-expert GEMMs: the experts B tokens hit ÷ B plus the
--                                             routed activations (1 + input/output tokens); 2·k·e FLOP per token
--     attention_memory_s, attention_compute_s the KV one sequence reads; QKᵀ and PV (attention's peak) and the
--                                             recurrent updates (weights' peak)
--   Checked on the data (trtllm-perf-overview-1.0, Qwen3-30B-A3B nvfp4, RTX PRO 6000, ten length pairs): the
--   measured ÷ ceiling ratio spans 0.23–0.60 with one greatest() over the totals and no activation traffic (its
--   2048/128 row 0.23, its 128/128 0.28), 0.55–0.67 with the classes; on B200 its 2048/128 row goes 0.09 → 0.24
--   (series 0.32–0.48 outside the host-bound 128/128): the MoE prompt steps' shortfall was the routed activations.
--   PROMPT STEPS (issue 13, speed10).  The classes above are per output token over every token a request brings
--   (its decoded token and its in/out share of the prompt), but an engine does not spread the prompts evenly over
--   its decode steps: each step has a token budget T (step_token_budget: memory_pools_at's max_num_batched_tokens,
--   the release's default on this device) that its B decode tokens take first and the waiting prompts' chunks fill
--   (vLLM V1: vllm/v1/core/sched/scheduler.py schedule(), "First, schedule the RUNNING requests" within
--   token_budget = max_num_scheduled_tokens, then the WAITING ones' prefill chunks in what is left; TensorRT-LLM's
--   in-flight batching fills max_num_tokens, 8,192 by default in the PyTorch backend, with context chunks beside
--   the generation requests).  B ÷ output requests finish, and as many arrive, per decode step; each prompt
--   takes ceil(input ÷ (T − B)) steps, so a share
--     prompt_step_share f = least(1, B ÷ output × ceil(input ÷ (T − B)))
--   of the steps carries a prompt chunk and the others decode only.  A decode-only step waits on the weights and
--   the KV it reads; a prompt step on the chunk's FLOPs: 104 expected_mixed_step_s costs the two kinds apart,
--   each the classes' greatest(memory, compute) one after the other (the *_prompt_s columns are the prompt's
--   part of each class; the weights and the KV reads are per step and do not grow in a prompt step).  With one
--   greatest() over the average step the prompt's FLOPs hid under reads that run in other steps: Llama-3.3-70B
--   fp8 on two H100s at 20,000/2,000 (24 requests, f = 0.036) had a ceiling of 971 tok/s, measured 416 (0.43 of
--   it, against 0.70 for H100 TP 1 memory-bound rows); apart it is 704.5 (0.59).  f = 1 (a chunk in every step:
--   128/128 at B = 2,048, 1,000/1,000 at B = 1,012) is the one greatest() over the totals, as before.
--   ASSUMPTIONS: arrivals are spread (one prompt per arrival step, none queued behind another; with uniform
--   lengths and an offline queue requests finish evenly); SGLang runs prefill batches apart from decode batches by
--   default (no mixed chunks), which this treats as the same small f (the prompt's FLOPs in steps of their own).
--   ceiling_tok_per_s     1 ÷ expected_mixed_step_s(…, efficiency 1): output tokens per second no engine can beat
--                         on this replica (efficiency 1.0); f = 1: 1 ÷ (Σ classes greatest(memory, compute) +
--                         allreduce_s)
--   bound                 'memory' | 'compute': the roof that holds the larger part of the kernels' time over both
--                         kinds of step (NULL without a FLOP figure: the ceiling is then the memory roofs alone,
--                         still a ceiling, but not fitted)
--   ratio                 output_tok_per_s ÷ ceiling_tok_per_s (≤ 1 when the model holds): the implied efficiency
--                         (252_speed_fit)
-- Units: tokens, sequences, FLOP, bytes, seconds, tokens per second.
-- Source: kv-cache-chapter.txt §2.4 (bytes per step P·p + B·s·k, FLOP 2P + 4·L·d·s); Megatron-LM all-reduces.
CREATE OR REPLACE VIEW throughput_ceilings AS
WITH m AS (
    SELECT t.*, e.engine AS engine_family, hw.architecture, hw.vendor,
           t.input_tokens + t.output_tokens / 2.0 AS context_mean_tokens,
           -- the engine's KV pool (240 memory_pools_at: its reserve, its fraction rule), at the source's stated
           -- fraction where it states one (kv_cache_fraction; 203 engine_available_kv_bytes by the release's util_basis)
           CASE WHEN t.kv_cache_fraction IS NULL THEN p.pool_bytes
                ELSE engine_available_kv_bytes(a.util_basis, p.usable_bytes, t.kv_cache_fraction, p.weights_bytes_per_rank,
                                               p.reserve_bytes, a.non_torch_bytes) END AS pool_bytes,
           w.weights_bytes, k.growing_token_bytes, k.bounded_groups, k.state_bytes,
           k.decode_attn_flop_per_context_token, k.prefill_attn_flop_per_context_token, k.state_flop_per_token, k.hidden_size, k.layers, k.params_total,
           k.params_active, k.moe_experts, k.moe_experts_per_token, k.moe_activation_bytes_per_token,
           h.peak_flop_per_s, coalesce(ha.peak_flop_per_s, h.peak_flop_per_s) AS attn_peak_flop_per_s,
           h.bandwidth_bytes_per_s, h.interconnect_bytes_per_s, h.interconnect_domain_size,
           coalesce(t.max_batch, a.max_num_seqs) AS batch_cap,
           -- the engine's token budget per step on this device (240 memory_pools_at: the release's default
           -- max_num_batched_tokens, its large-GPU value where it has one): what a step's decode tokens and prompt
           -- chunks share (prompt_step_share)
           p.max_num_batched_tokens AS step_token_budget
    FROM throughput_measurements t
    JOIN engines e ON e.engine_id = t.engine_id
    LEFT JOIN engine_accounting a ON a.engine_id = t.engine_id
    JOIN hardware hw ON hw.hardware_id = t.hardware_id
    -- memory_pools cut to the measured models and devices first (240 memory_pools_at's only_models / only_hardware):
    -- joined by keys, the whole registry's engine pools (~1.4 M rows) were computed for ~500 measurements, in every
    -- plan and roofline query (speed_efficiency reads this view)
    JOIN memory_pools_at(only_models := (SELECT list(DISTINCT x.model_id) FROM throughput_measurements x),
                         only_hardware := (SELECT list(DISTINCT x.hardware_id) FROM throughput_measurements x)) p
      ON p.model_id = t.model_id AND p.hardware_id = t.hardware_id AND p.engine_id = t.engine_id
                       AND p.weights_dtype = t.weights_dtype AND p.tp = t.tp
    JOIN model_weights w ON w.model_id = t.model_id AND w.weights_dtype = t.weights_dtype
    JOIN decode_coefficients k ON k.model_id = t.model_id AND k.kv_dtype = t.kv_dtype AND k.tp = t.tp
    JOIN hardware_peaks h ON h.hardware_id = t.hardware_id AND h.weights_dtype = t.weights_dtype
    -- attention's own roof: the KV cache's precision where the device runs it natively (hardware_peaks'
    -- compute_dtype rule), else bf16
    LEFT JOIN hardware_peaks ha ON ha.hardware_id = t.hardware_id AND ha.weights_dtype = t.kv_dtype
),
b AS (
    SELECT m.*,
           kv_read_bytes(m.growing_token_bytes, m.bounded_groups, m.state_bytes, m.context_mean_tokens)
               AS kv_mean_rank_bytes,
           -- what the scheduler holds for one request (kv_admission): its KV at the mean context when blocks are
           -- taken as it grows, its whole input + output when admission reserves to completion
           kv_read_bytes(m.growing_token_bytes, m.bounded_groups, m.state_bytes,
                         CASE m.kv_admission WHEN 'whole_request' THEN m.input_tokens + m.output_tokens
                                             ELSE m.context_mean_tokens END) AS kv_admitted_rank_bytes,
           allreduce_s_per_token(m.tp, m.layers, m.hidden_size, bf.bytes_per_element, m.interconnect_bytes_per_s,
                                 m.interconnect_domain_size) AS allreduce_s_per_token
    FROM m CROSS JOIN (SELECT bytes_per_element FROM precisions WHERE dtype = 'bf16') bf
),
sized AS (
    SELECT b.*,
           coalesce(b.concurrency,
                    least(greatest(1, floor(b.pool_bytes / b.kv_admitted_rank_bytes)), coalesce(b.batch_cap, 1e9)))::BIGINT
               AS batch,
           decode_flop(b.params_active, b.hidden_size, b.decode_attn_flop_per_context_token, b.bounded_groups,
                       b.state_flop_per_token, b.context_mean_tokens)
           + b.input_tokens * decode_flop(b.params_active, b.hidden_size, b.prefill_attn_flop_per_context_token,
                                          b.bounded_groups, b.state_flop_per_token, b.input_tokens / 2.0)
             / b.output_tokens
               AS flop_per_output_token,
           -- the attention part of it (QKᵀ and PV over the context, decode and prefill forms)
           b.decode_attn_flop_per_context_token * b.context_mean_tokens
           + b.prefill_attn_flop_per_context_token * b.input_tokens * (b.input_tokens / 2.0) / b.output_tokens
           + 4 * b.hidden_size * coalesce(list_sum(list_transform(b.bounded_groups,
                 lambda g: g.layers * (least(b.context_mean_tokens, g.window_tokens)
                                       + b.input_tokens * least(b.input_tokens / 2.0, g.window_tokens)
                                         / b.output_tokens))), 0)
               AS attn_flop_per_output_token,
           -- the decode token's own FLOP and attention FLOP (the rest of the two above is the prompt's)
           decode_flop(b.params_active, b.hidden_size, b.decode_attn_flop_per_context_token, b.bounded_groups,
                       b.state_flop_per_token, b.context_mean_tokens) AS decode_flop_per_output_token,
           b.decode_attn_flop_per_context_token * b.context_mean_tokens
           + 4 * b.hidden_size * coalesce(list_sum(list_transform(b.bounded_groups,
                 lambda g: g.layers * least(b.context_mean_tokens, g.window_tokens))), 0)
               AS decode_attn_flop_per_output_token
    FROM b
),
timed AS (
    SELECT s.*,
           1 + s.input_tokens / s.output_tokens AS tokens_per_output_token,
           -- parameters of one routed expert summed over the MoE layers (104 expert_params); 0 for dense models
           expert_params(s.params_total, s.params_active, s.moe_experts, s.moe_experts_per_token) AS expert_params,
           params_read(s.params_total, s.params_active, s.moe_experts, s.moe_experts_per_token, s.batch)
               AS read_params,
           (s.flop_per_output_token - s.attn_flop_per_output_token) / (s.tp * s.peak_flop_per_s)
           + s.attn_flop_per_output_token / (s.tp * s.attn_peak_flop_per_s) AS compute_s,
           (1 + s.input_tokens / s.output_tokens) * s.allreduce_s_per_token AS allreduce_s,
           s.input_tokens / s.output_tokens * s.allreduce_s_per_token AS allreduce_prompt_s,
           -- the share of decode steps that carry a prompt chunk (header, PROMPT STEPS): B ÷ output requests
           -- arrive per step, each prompt taking ceil(input ÷ (budget − B)) steps' spare budget
           least(1.0, s.batch / s.output_tokens
                      * ceil(s.input_tokens / greatest(s.step_token_budget - s.batch, 1))) AS prompt_step_share
    FROM sized s
),
classes AS (
    SELECT t.*,
           -- dense GEMMs: the non-routed weights (attention projections, dense and shared FFNs, lm_head)
           t.weights_bytes * (t.params_total - coalesce(t.moe_experts, 0) * t.expert_params) / t.params_total / t.batch
               / (t.tp * t.bandwidth_bytes_per_s) AS gemm_memory_s,
           2 * (t.params_active - coalesce(t.moe_experts_per_token, 0) * t.expert_params) * t.tokens_per_output_token
               / (t.tp * t.peak_flop_per_s) AS gemm_compute_s,
           -- grouped expert GEMMs: the experts this batch hits, and the routed activations every token moves
           (t.weights_bytes * (t.read_params - (t.params_total - coalesce(t.moe_experts, 0) * t.expert_params))
                / t.params_total / t.batch
            + t.moe_activation_bytes_per_token * t.tp * t.tokens_per_output_token)
               / (t.tp * t.bandwidth_bytes_per_s) AS expert_memory_s,
           2 * coalesce(t.moe_experts_per_token, 0) * t.expert_params * t.tokens_per_output_token
               / (t.tp * t.peak_flop_per_s) AS expert_compute_s,
           -- attention: the KV one sequence reads; QKᵀ and PV at the KV precision's peak, recurrent updates
           t.kv_mean_rank_bytes * t.tp / (t.tp * t.bandwidth_bytes_per_s) AS attention_memory_s,
           t.attn_flop_per_output_token / (t.tp * t.attn_peak_flop_per_s)
           + (t.flop_per_output_token - t.attn_flop_per_output_token - 2 * t.params_active * t.tokens_per_output_token)
             / (t.tp * t.peak_flop_per_s) AS attention_compute_s,
           -- the prompt's parts of the classes above (the rest is the decode token's; expected_mixed_step_s, 104)
           2 * (t.params_active - coalesce(t.moe_experts_per_token, 0) * t.expert_params)
               * (t.tokens_per_output_token - 1) / (t.tp * t.peak_flop_per_s) AS gemm_compute_prompt_s,
           t.moe_activation_bytes_per_token * t.tp * (t.tokens_per_output_token - 1)
               / (t.tp * t.bandwidth_bytes_per_s) AS expert_memory_prompt_s,
           2 * coalesce(t.moe_experts_per_token, 0) * t.expert_params * (t.tokens_per_output_token - 1)
               / (t.tp * t.peak_flop_per_s) AS expert_compute_prompt_s,
           (t.attn_flop_per_output_token - t.decode_attn_flop_per_output_token) / (t.tp * t.attn_peak_flop_per_s)
           + (t.flop_per_output_token - t.decode_flop_per_output_token
              - (t.attn_flop_per_output_token - t.decode_attn_flop_per_output_token)
              - 2 * t.params_active * (t.tokens_per_output_token - 1)) / (t.tp * t.peak_flop_per_s)
               AS attention_compute_prompt_s
    FROM timed t
),
split AS (
    SELECT c.*,
           c.weights_bytes * c.read_params / c.params_total / c.batch + c.kv_mean_rank_bytes * c.tp
           + c.moe_activation_bytes_per_token * c.tp * c.tokens_per_output_token AS bytes_per_output_token,
           c.gemm_memory_s + c.expert_memory_s + c.attention_memory_s AS memory_s,
           -- the kernels' time at efficiency 1, decode-only and prompt steps apart (104 expected_mixed_step_s), and
           -- the part of it on compute roofs: the time is piecewise linear in 1 ÷ compute efficiency, its slope
           -- there is the compute-bound time (a step 10⁻⁶ moves no class across its ridge but at a tie)
           expected_mixed_step_s(c.prompt_step_share, c.gemm_memory_s, c.gemm_compute_s, c.gemm_compute_prompt_s,
                                 c.expert_memory_s, c.expert_memory_prompt_s, c.expert_compute_s,
                                 c.expert_compute_prompt_s, c.attention_memory_s, c.attention_compute_s,
                                 c.attention_compute_prompt_s, 0, 0, 1, 1) AS kernels_s,
           (expected_mixed_step_s(c.prompt_step_share, c.gemm_memory_s, c.gemm_compute_s, c.gemm_compute_prompt_s,
                                  c.expert_memory_s, c.expert_memory_prompt_s, c.expert_compute_s,
                                  c.expert_compute_prompt_s, c.attention_memory_s, c.attention_compute_s,
                                  c.attention_compute_prompt_s, 0, 0, 1, 1 / (1 + 1e-6))
            - expected_mixed_step_s(c.prompt_step_share, c.gemm_memory_s, c.gemm_compute_s, c.gemm_compute_prompt_s,
                                    c.expert_memory_s, c.expert_memory_prompt_s, c.expert_compute_s,
                                    c.expert_compute_prompt_s, c.attention_memory_s, c.attention_compute_s,
                                    c.attention_compute_prompt_s, 0, 0, 1, 1)) * 1e6 AS compute_bound_s,
           expected_mixed_step_s(c.prompt_step_share, c.gemm_memory_s, c.gemm_compute_s, c.gemm_compute_prompt_s,
                                 c.expert_memory_s, c.expert_memory_prompt_s, c.expert_compute_s,
                                 c.expert_compute_prompt_s, c.attention_memory_s, c.attention_compute_s,
                                 c.attention_compute_prompt_s, c.allreduce_s, c.allreduce_prompt_s, 1, 1) AS step_s
    FROM classes c
)
SELECT source_id, measurement_idx, engine_id, engine_family, engine_version, in_fit, scenario, source_date, source_url,
       hardware_id, architecture, vendor, model_id, weights_dtype, kv_dtype, tp, input_tokens, output_tokens,
       concurrency, context_mean_tokens, batch, moe_experts IS NOT NULL AS moe,
       output_tok_per_s, ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s,
       flop_per_output_token, attn_flop_per_output_token, bytes_per_output_token, memory_s, compute_s, allreduce_s,
       gemm_memory_s, gemm_compute_s, expert_memory_s, expert_compute_s, attention_memory_s, attention_compute_s,
       step_token_budget, prompt_step_share, gemm_compute_prompt_s, expert_memory_prompt_s, expert_compute_prompt_s,
       attention_compute_prompt_s, allreduce_prompt_s,
       1 / step_s AS ceiling_tok_per_s,
       CASE WHEN compute_s IS NULL OR memory_s IS NULL THEN NULL
            WHEN compute_bound_s > kernels_s - compute_bound_s THEN 'compute' ELSE 'memory' END AS bound,
       output_tok_per_s * step_s AS ratio,
       file, line
FROM split
