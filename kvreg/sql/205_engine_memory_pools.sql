-- engine_memory_pools_at(max_num_batched_tokens := NULL, gpu_memory_utilization := NULL, max_num_seqs := NULL,
--   enforce_eager := NULL, num_speculative_tokens := NULL, batched_axis := NULL, only_models := NULL,
--   only_hardware := NULL, only_engines := NULL): table macro, the KV memory an
-- engine release predicts it has, per device, with the engine knobs a user sets (NULL = the release's
-- default for the device) — the ONE definition of the engine pool arithmetic.  The view
-- engine_memory_pools is this macro over the batched_tokens axis (batched_axis := that list).
-- only_models / only_hardware / only_engines (VARCHAR[] of served model, hardware and engine ids; NULL = all) keep
-- those rows only, filtered on the first tables read (served_models, hardware, engine_accounting): a caller that
-- joins these rows by their keys (220, 240) cannot push its own list_contains filter across the join's equality,
-- and the whole registry's pools are ~1.4 M rows (the Q4 2026 report needs 2,560).  No value depends on the other
-- rows (every CTE below is per engine × model × hardware, or a DISTINCT of settings).
-- Grain: one row per engine × served model × hardware × weights_dtype × tp × max_num_batched_tokens
--   (batched_axis when given, else the one value max_num_batched_tokens or the release default).
-- Inputs: engine_accounting, engines, served_models, models, model_weights, model_weights_per_rank, hardware, tp_sizes.
-- Units: bytes per device (per TP rank); tokens; sequences.
--   weights_bytes_per_rank  served weights per rank (the whole model's: model_weights.weights_bytes): the
--                      served checkpoint's model_weights_per_rank (035) — a
--                      listed one, or the precision's generic checkpoint under the same per-tensor rule;
--                      the model's weights ÷ tp only where no tensor table exists; the rotary cos/sin caches at
--                      the release's rope_cache_bytes_per_element where it states one; the absorbed MLA copy where
--                      the release keeps one (mla_absorbed_copy, 035 engine_mla_absorbed_bytes); a draft model's weights
--                      at its own dtype ÷ tp are added (draft_weights_bytes: that part alone)
--   default_batched    true for the release's default max_num_batched_tokens on this device
--                      (vLLM get_batch_defaults: larger defaults from large_gpu_min_bytes, except
--                      the excluded device names)
--   max_num_seqs       the knob, or the release's default on this device; max_num_seqs_is_default says which
--   gpu_memory_utilization  the knob, or the release's default; util_is_default says which
--   enforce_eager      the knob (default false): no CUDA graphs are captured, so the cudagraph term is 0
--                      (vllm/v1/worker/gpu_worker.py determine_available_memory, 0.19.0 l. 379–381:
--                      cudagraph_memory_estimate = 0 when enforce_eager)
--   num_speculative_tokens  the knob as given (NULL = the served model's own); the served set's own count
--                      drives the recurrent blocks and conv rows (200, 215); no effect on this pool yet
--   non_torch_bytes    non-torch growth of the profile run at this tp and link (engine_non_torch_bytes, 204)
--   torch_workspace_bytes, moe_workspace_bytes  persistent torch allocations of the profile run (204)
--   activation_bytes   the forward dummy run's peak over T = max_num_batched_tokens (engine_forward_peak_bytes)
--   sampler_bytes_per_seq  the dummy sampler run's bytes per scheduled sequence (sampler rule × vocab)
--   sampler_bytes      the dummy sampler run's peak at max_num_seqs (engine_sampler_peak_bytes)
--   hidden_size, vocab_size, act_bytes, intermediate_size, moe_intermediate_size, moe_top_k,
--   sampler_bytes_per_seq_vocab, sampler_buffer_rows, profile_hidden_kept  the geometry and rules these use
--   reserve_bytes      engine_reserve_bytes (204): persistent terms + max(forward, sampler) + cudagraph
--                      (docs/engine.md: each term's source in vLLM's code)
--   available_kv_bytes predicted "Available KV cache memory" by util_basis (engine_available_kv_bytes, 203):
--                      total:            usable·util − weights − reserve                (vLLM §1)
--                      free:             (usable − weights − reserve)·util             (TRT-LLM §9)
--                      free_before_load: (usable − non_torch)·util − weights − (reserve − non_torch) (SGLang §8)
-- Every column reference below is qualified: a macro parameter shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_memory_pools_at(max_num_batched_tokens := NULL, gpu_memory_utilization := NULL,
                                               max_num_seqs := NULL, enforce_eager := NULL,
                                               num_speculative_tokens := NULL, batched_axis := NULL,
                                               only_models := NULL, only_hardware := NULL,
                                               only_engines := NULL) AS TABLE
WITH attn_geometry AS (   -- what a FULL graph's split-KV accumulators are sized by (204 engine_cudagraph_split_kv_bytes)
    SELECT model_id,
           max(CASE WHEN kind = 'mla' THEN kv_lora_rank ELSE coalesce(v_head_dim, head_dim) END) AS attn_value_width,
           max(head_dim) AS attn_max_head_dim, bool_or(kind = 'mla') AS attn_mla
    FROM layer_groups WHERE head_dim IS NOT NULL OR kind = 'mla'
    GROUP BY model_id
),
draft AS (
    SELECT s.served_id, sum(w.weights_bytes) AS draft_weights_bytes
    FROM served_models s JOIN models m ON m.model_id = s.model_id
    JOIN model_weights w ON w.model_id = s.model_id AND w.weights_dtype = m.dtype
    WHERE s.role = 'draft'
    GROUP BY ALL
),
served AS (
    SELECT s.served_id AS model_id, s.model_id AS target_model_id, w.weights_dtype, w.checkpoint_id, w.weights_basis,
           w.weights_bytes, coalesce(d.draft_weights_bytes, 0) AS draft_weights_bytes,
           m.hidden_size, coalesce(m.vocab_size, 0) AS vocab_size, g.intermediate_size, g.moe_intermediate_size,
           m.moe_experts_per_token AS moe_top_k, m.layers, m.attention_heads, m.architecture AS model_architecture,
           s.num_speculative_tokens AS served_num_spec, ag.attn_value_width, ag.attn_max_head_dim, ag.attn_mla,
           -- activations run in the model dtype (fp32 checkpoints at 4 bytes, everything else 16-bit)
           CASE WHEN m.dtype = 'fp32' THEN 4 ELSE 2 END AS act_bytes
    FROM served_models s
    JOIN models m ON m.model_id = s.model_id
    JOIN model_weights w ON w.model_id = s.model_id
    LEFT JOIN model_profile_geometry g ON g.model_id = s.model_id
    LEFT JOIN draft d ON d.served_id = s.served_id
    LEFT JOIN attn_geometry ag ON ag.model_id = s.model_id
    WHERE s.role = 'target' AND (only_models IS NULL OR list_contains(only_models, s.served_id))
),
device_tier AS (   -- mem_fraction_rule: the first tier whose memory bound the device is below (SGLang, 203)
    SELECT t.engine_id, h.hardware_id,
           arg_min({'batched': t.chunked_prefill_tokens, 'bs': t.cuda_graph_max_bs, 'bs_tp4': t.cuda_graph_max_bs_tp4},
                   t.tier_idx) AS tier
    FROM engine_mem_fraction_tiers t CROSS JOIN hardware h
    WHERE t.below_bytes IS NULL OR h.usable_bytes < t.below_bytes
    GROUP BY ALL
),
dev AS (
    SELECT a.*, e.gpu_memory_utilization AS release_gpu_memory_utilization, h.hardware_id, h.usable_bytes,
           h.interconnect_domain_size, h.interconnect_link, h.architecture AS hardware_architecture,
           engine_large_gpu(a.large_gpu_min_bytes, a.large_gpu_excludes, h.usable_bytes, h.hardware_id) AS large_gpu,
           dt.tier.batched AS tier_batched, dt.tier.bs AS tier_graph_bs, dt.tier.bs_tp4 AS tier_graph_bs_tp4
    FROM engine_accounting a JOIN engines e USING (engine_id) CROSS JOIN hardware h
    LEFT JOIN device_tier dt ON dt.engine_id = a.engine_id AND dt.hardware_id = h.hardware_id
    WHERE (only_hardware IS NULL OR list_contains(only_hardware, h.hardware_id))
      AND (only_engines IS NULL OR list_contains(only_engines, a.engine_id))
),
knobs AS (
    SELECT d.*,
           CASE WHEN d.tier_batched IS NOT NULL THEN d.tier_batched
                WHEN d.large_gpu THEN coalesce(d.max_num_batched_tokens_large_gpu, d.max_num_batched_tokens)
                ELSE d.max_num_batched_tokens END AS release_batched,
           CASE WHEN d.large_gpu THEN coalesce(d.max_num_seqs_large_gpu, d.max_num_seqs) ELSE d.max_num_seqs END
               AS release_max_num_seqs
    FROM dev d
),
set_knobs AS (
    SELECT k.*,
           coalesce(gpu_memory_utilization, k.release_gpu_memory_utilization)::DOUBLE AS util_set,
           coalesce(max_num_seqs, k.release_max_num_seqs)::BIGINT AS seqs_set,
           coalesce(enforce_eager, false) AS eager_set,
           unnest(coalesce(batched_axis, [coalesce(max_num_batched_tokens, k.release_batched)]))::BIGINT AS batched_set
    FROM knobs k
),
release_util AS (   -- the release's default utilization per device, batched setting and tp: the engine's one value, or
                    -- the release's rule (SGLang's mem_fraction_static from the device memory, the prefill chunk and the
                    -- CUDA-graph batch at this tp: 203 engine_mem_fraction); a few thousand rows, joined by equality
    SELECT DISTINCT d.engine_id, d.hardware_id, d.batched_set, t.tp,
           CASE WHEN d.mem_fraction_base_bytes IS NOT NULL AND d.tier_graph_bs IS NOT NULL
                THEN engine_mem_fraction(d.usable_bytes, d.batched_set,
                                         CASE WHEN t.tp >= 4 THEN coalesce(d.tier_graph_bs_tp4, d.tier_graph_bs)
                                              ELSE d.tier_graph_bs END,
                                         t.tp, d.mem_fraction_base_bytes, d.mem_fraction_per_prefill_token_bytes,
                                         d.mem_fraction_min_prefill_tokens, d.mem_fraction_per_graph_batch_bytes,
                                         d.mem_fraction_per_rank_bytes, d.mem_fraction_floor_bytes,
                                         d.mem_fraction_floor_above_bytes, d.mem_fraction_decimals)
                ELSE d.release_gpu_memory_utilization END AS release_util
    FROM set_knobs d CROSS JOIN tp_sizes t
),
pool AS (
    SELECT d.engine_id, s.model_id, d.hardware_id, s.weights_dtype, t.tp, d.batched_set AS max_num_batched_tokens,
           d.batched_set = d.release_batched AS default_batched,
           d.seqs_set AS max_num_seqs, d.seqs_set = d.release_max_num_seqs AS max_num_seqs_is_default,
           d.usable_bytes, coalesce(gpu_memory_utilization, u.release_util)::DOUBLE AS gpu_memory_utilization,
           coalesce(gpu_memory_utilization, u.release_util) = u.release_util AS util_is_default,
           d.eager_set AS enforce_eager, num_speculative_tokens::BIGINT AS num_speculative_tokens,
           d.util_basis,
           engine_non_torch_bytes(d.non_torch_bytes, d.non_torch_multi_gpu_bytes, d.non_torch_per_extra_rank_bytes,
                                  d.non_torch_multi_gpu_pcie_bytes, t.tp,
                                  coalesce(d.interconnect_link = 'gpu_link' AND d.interconnect_domain_size >= t.tp, false))
               AS non_torch_bytes,
           d.torch_workspace_bytes,
           engine_moe_workspace_bytes(d.moe_workspace, d.batched_set, s.moe_top_k, s.moe_intermediate_size,
                                      s.hidden_size, t.tp, s.act_bytes) AS moe_workspace_bytes,
           CASE WHEN d.eager_set THEN 0 ELSE d.cudagraph_bytes END AS flat_cudagraph_bytes,
           -- the CUDA-graph profile's terms (204; NULL where the release has no cudagraph_profile)
           d.cudagraph_profiled, d.cudagraph_subtracted, d.cudagraph_max_capture_size, d.cudagraph_append_max_num_seqs,
           coalesce(num_speculative_tokens, s.served_num_spec) AS cudagraph_num_spec,
           CASE WHEN d.cudagraph_profiled THEN d.torch_workspace_bytes END AS cudagraph_first_fixed_bytes,
           CASE WHEN d.cudagraph_profiled
                THEN engine_forward_peak_bytes(1, s.hidden_size, s.intermediate_size, t.tp, s.act_bytes,
                                               d.forward_hidden_tensors, d.forward_intermediate_tensors,
                                               d.activation_bytes_per_token_hidden) END AS cudagraph_forward_bytes_per_token,
           -- FA3 is chosen on the listed hardware architectures for a model the backend accepts (no bidirectional
           -- multimodal prefix; head size a multiple of 8 and ≤ the limit, or MLA through FLASH_ATTN_MLA)
           CASE WHEN d.cudagraph_profiled
                THEN engine_cudagraph_split_kv_bytes(
                         d.cudagraph_split_kv_splits, 1, s.attention_heads, t.tp, s.attn_value_width,
                         coalesce(list_contains(string_split(coalesce(d.cudagraph_split_kv_hardware, ''), ','),
                                                d.hardware_architecture)
                                  AND NOT list_contains(string_split(coalesce(d.cudagraph_split_kv_excluded_models, ''), ','),
                                                        s.model_architecture)
                                  AND (s.attn_mla OR (s.attn_max_head_dim % 8 = 0
                                                      AND s.attn_max_head_dim <= d.cudagraph_split_kv_max_head_dim)),
                                  false)) END AS cudagraph_split_kv_bytes_per_token,
           greatest(d.cudagraph_piecewise_per_layer_bytes * s.layers, d.cudagraph_min_per_graph_bytes)
               AS cudagraph_per_graph_piecewise_bytes,
           greatest(d.cudagraph_full_per_layer_bytes * s.layers, d.cudagraph_min_per_graph_bytes)
               AS cudagraph_per_graph_full_bytes,
           -- the rotary caches at the release's own dtype where it states one (SGLang: fp32; 035 engine_buffer_bytes)
           -- and the absorbed MLA copy where the release keeps one (035 engine_mla_absorbed_bytes)
           coalesce(r.weights_bytes_per_rank - r.buffer_bytes
                        + engine_buffer_bytes(r.buffer_bytes, r.buffer_elements, d.rope_cache_bytes_per_element)
                        + engine_mla_absorbed_bytes(r.mla_absorbed_bytes_per_rank, d.mla_absorbed_copy),
                    s.weights_bytes / t.tp) + s.draft_weights_bytes / t.tp AS weights_bytes_per_rank,
           s.draft_weights_bytes / t.tp AS draft_weights_bytes,
           engine_forward_peak_bytes(d.batched_set, s.hidden_size, s.intermediate_size, t.tp, s.act_bytes,
                                     d.forward_hidden_tensors, d.forward_intermediate_tensors,
                                     d.activation_bytes_per_token_hidden) AS activation_bytes,
           d.sampler_bytes_per_seq_vocab * s.vocab_size AS sampler_bytes_per_seq,
           engine_sampler_peak_bytes(d.seqs_set, s.vocab_size, d.sampler_bytes_per_seq_vocab, d.sampler_buffer_rows,
                                     d.batched_set, s.hidden_size, s.act_bytes, d.profile_hidden_kept) AS sampler_bytes,
           -- kept for the calibration, which re-evaluates the sampler at an observation's max_num_seqs
           s.hidden_size, s.vocab_size, s.act_bytes, s.intermediate_size, s.moe_intermediate_size, s.moe_top_k,
           d.sampler_bytes_per_seq_vocab, d.sampler_buffer_rows, d.profile_hidden_kept
    FROM set_knobs d CROSS JOIN served s CROSS JOIN tp_sizes t
    JOIN release_util u ON u.engine_id = d.engine_id AND u.hardware_id = d.hardware_id AND u.batched_set = d.batched_set
                       AND u.tp = t.tp
    -- the served checkpoint's bytes per rank (035: vocab padded and split, k/v replicated past the KV
    -- heads, norms/routers/rotary caches on every rank).  A precision the entry lists no checkpoint for
    -- is served as its generic checkpoint under the same per-tensor rule (16-bit embeddings and norms,
    -- rotary buffers): the engine holds a real checkpoint, never params × bytes (that is first principles')
    LEFT JOIN model_weights_per_rank r ON r.model_id = s.target_model_id
                                      AND r.checkpoint_id = s.checkpoint_id AND r.tp = t.tp
),
graph_sizes AS (   -- the capture sizes (204) once per distinct setting: a handful of settings for ~1.7 M pool rows,
                  -- where building the size list on every row was most of this macro's time
    SELECT k.*, len(k.sizes) AS n_pw,
           len(engine_cudagraph_full_sizes(k.sizes, k.seqs_set, k.num_spec)) AS n_full,
           list_max(k.sizes) AS max_size,
           list_max(engine_cudagraph_full_sizes(k.sizes, k.seqs_set, k.num_spec)) AS max_full_size
    FROM (SELECT DISTINCT d.seqs_set, d.batched_set, d.eager_set, d.cudagraph_max_capture_size,
                          d.cudagraph_append_max_num_seqs, n.num_spec,
                          engine_cudagraph_capture_sizes(d.seqs_set, n.num_spec, d.batched_set,
                                                         d.cudagraph_max_capture_size,
                                                         d.cudagraph_append_max_num_seqs, d.eager_set) AS sizes
          FROM set_knobs d
          CROSS JOIN (SELECT DISTINCT coalesce(num_speculative_tokens, s.served_num_spec) AS num_spec FROM served s) n
          WHERE d.cudagraph_profiled) k
),
cg AS (   -- the CUDA-graph estimate (204 engine_cudagraph_bytes_of_counts) at this max_num_seqs, num_spec, T and enforce_eager
    SELECT p.*, coalesce(g.n_pw, 0) AS cudagraph_piecewise_graphs, coalesce(g.n_full, 0) AS cudagraph_full_graphs,
           CASE WHEN p.cudagraph_profiled
                THEN engine_cudagraph_bytes_of_counts(coalesce(g.n_pw, 0), coalesce(g.n_full, 0), g.max_size,
                                                      g.max_full_size, p.cudagraph_first_fixed_bytes,
                                                      p.cudagraph_forward_bytes_per_token,
                                                      p.cudagraph_split_kv_bytes_per_token,
                                                      p.cudagraph_per_graph_piecewise_bytes,
                                                      p.cudagraph_per_graph_full_bytes)
                END AS cudagraph_estimate_bytes
    FROM pool p
    LEFT JOIN graph_sizes g
      ON p.cudagraph_profiled AND g.seqs_set IS NOT DISTINCT FROM p.max_num_seqs
     AND g.batched_set IS NOT DISTINCT FROM p.max_num_batched_tokens AND g.eager_set IS NOT DISTINCT FROM p.enforce_eager
     AND g.num_spec IS NOT DISTINCT FROM p.cudagraph_num_spec
     AND g.cudagraph_max_capture_size IS NOT DISTINCT FROM p.cudagraph_max_capture_size
     AND g.cudagraph_append_max_num_seqs IS NOT DISTINCT FROM p.cudagraph_append_max_num_seqs
),
graphs AS (   -- what the release subtracts: the estimate where it does (≥ 0.20), else the flat figure (0 with enforce_eager)
    SELECT c.* EXCLUDE (flat_cudagraph_bytes),
           CASE WHEN c.cudagraph_profiled AND c.cudagraph_subtracted THEN c.cudagraph_estimate_bytes
                ELSE c.flat_cudagraph_bytes END AS cudagraph_bytes
    FROM cg c
),
reserved AS (   -- the release's reserve (204): cudagraph_bytes is already 0 with enforce_eager
    SELECT p.*, engine_reserve_bytes(p.non_torch_bytes, p.torch_workspace_bytes, p.moe_workspace_bytes,
                                     p.activation_bytes, p.sampler_bytes, p.cudagraph_bytes, false)
                - p.non_torch_bytes AS torch_reserve_bytes
    FROM graphs p
)
SELECT r.* EXCLUDE (torch_reserve_bytes), r.non_torch_bytes + r.torch_reserve_bytes AS reserve_bytes,
       engine_available_kv_bytes(r.util_basis, r.usable_bytes, r.gpu_memory_utilization, r.weights_bytes_per_rank,
                                 r.non_torch_bytes + r.torch_reserve_bytes, r.non_torch_bytes) AS available_kv_bytes
FROM reserved r;

-- engine_memory_pools: engine_memory_pools_at over the batched_tokens axis, every knob at the release default
-- (columns, grain and units as the macro above).
CREATE OR REPLACE VIEW engine_memory_pools AS
SELECT * FROM engine_memory_pools_at(batched_axis := (SELECT list(max_num_batched_tokens ORDER BY max_num_batched_tokens)
                                                      FROM batched_tokens))
