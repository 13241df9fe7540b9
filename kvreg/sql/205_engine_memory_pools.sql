-- engine_memory_pools: the KV memory an engine release predicts it has, per device.
-- Grain: one row per engine × served model × hardware × weights_dtype × tp × max_num_batched_tokens.
-- Inputs: engine_accounting, engines, served_models, models, model_weights, hardware, tp_sizes,
--   batched_tokens.
-- Units: bytes per device (per TP rank); tokens; sequences.
--   weights_bytes      served weights ÷ tp (a draft model's weights at its own dtype are added)
--   default_batched    true for the release's default max_num_batched_tokens on this device
--                      (vLLM get_batch_defaults: larger defaults from large_gpu_min_bytes, except
--                      the excluded device names)
--   max_num_seqs       the release's default on this device
--   non_torch_bytes    non-torch growth of the profile run at this tp (engine_non_torch_bytes, 204)
--   torch_workspace_bytes, moe_workspace_bytes  persistent torch allocations of the profile run (204)
--   activation_bytes   the forward dummy run's peak over T = max_num_batched_tokens (engine_forward_peak_bytes)
--   sampler_bytes_per_seq  the dummy sampler run's bytes per scheduled sequence (sampler rule × vocab)
--   sampler_bytes      the dummy sampler run's peak at max_num_seqs (engine_sampler_peak_bytes)
--   act_bytes, intermediate_size, moe_intermediate_size, moe_top_k  the model geometry these use
--   reserve_bytes      engine_reserve_bytes (204): persistent terms + max(forward, sampler) + cudagraph
--                      (docs/engine.md: each term's source in vLLM's code)
--   available_kv_bytes predicted "Available KV cache memory" by util_basis:
--                      total:            usable·util − weights − reserve                (vLLM §1)
--                      free:             (usable − weights − reserve)·util             (TRT-LLM §9)
--                      free_before_load: (usable − non_torch)·util − weights − (reserve − non_torch) (SGLang §8)
CREATE OR REPLACE VIEW engine_memory_pools AS
WITH draft AS (
    SELECT s.served_id, sum(w.weights_bytes) AS draft_weights_bytes
    FROM served_models s JOIN models m ON m.model_id = s.model_id
    JOIN model_weights w ON w.model_id = s.model_id AND w.weights_dtype = m.dtype
    WHERE s.role = 'draft'
    GROUP BY ALL
),
served AS (
    SELECT s.served_id AS model_id, w.weights_dtype, w.weights_bytes + coalesce(d.draft_weights_bytes, 0) AS weights_bytes,
           m.hidden_size, coalesce(m.vocab_size, 0) AS vocab_size, g.intermediate_size, g.moe_intermediate_size,
           m.moe_experts_per_token AS moe_top_k,
           -- activations run in the model dtype (fp32 checkpoints at 4 bytes, everything else 16-bit)
           CASE WHEN m.dtype = 'fp32' THEN 4 ELSE 2 END AS act_bytes
    FROM served_models s
    JOIN models m ON m.model_id = s.model_id
    JOIN model_weights w ON w.model_id = s.model_id
    LEFT JOIN model_profile_geometry g ON g.model_id = s.model_id
    LEFT JOIN draft d ON d.served_id = s.served_id
    WHERE s.role = 'target'
),
dev AS (
    SELECT a.*, e.gpu_memory_utilization, h.hardware_id, h.usable_bytes, h.interconnect_domain_size,
           a.large_gpu_min_bytes IS NOT NULL AND h.usable_bytes >= a.large_gpu_min_bytes
               AND NOT coalesce(list_bool_or(list_transform(string_split(coalesce(a.large_gpu_excludes, ''), ','),
                                                            lambda x: x <> '' AND starts_with(h.hardware_id, x))), false)
               AS large_gpu
    FROM engine_accounting a JOIN engines e USING (engine_id) CROSS JOIN hardware h
),
knobs AS (
    SELECT d.*, s.*, t.tp, b.max_num_batched_tokens AS batched,
           b.max_num_batched_tokens = CASE WHEN d.large_gpu THEN coalesce(d.max_num_batched_tokens_large_gpu,
                                                                           d.max_num_batched_tokens)
                                           ELSE d.max_num_batched_tokens END AS default_batched,
           CASE WHEN d.large_gpu THEN coalesce(d.max_num_seqs_large_gpu, d.max_num_seqs) ELSE d.max_num_seqs END
               AS default_seqs
    FROM dev d CROSS JOIN served s CROSS JOIN tp_sizes t CROSS JOIN batched_tokens b
),
pool AS (
    SELECT engine_id, model_id, hardware_id, weights_dtype, tp, batched AS max_num_batched_tokens, default_batched,
           default_seqs AS max_num_seqs, usable_bytes, gpu_memory_utilization, util_basis,
           engine_non_torch_bytes(non_torch_bytes, non_torch_multi_gpu_bytes, non_torch_per_extra_rank_bytes,
                                  non_torch_multi_gpu_pcie_bytes, tp, coalesce(interconnect_domain_size, 1) >= tp)
               AS non_torch_bytes,
           torch_workspace_bytes,
           engine_moe_workspace_bytes(moe_workspace, batched, moe_top_k, moe_intermediate_size,
                                      hidden_size, tp, act_bytes) AS moe_workspace_bytes,
           cudagraph_bytes,
           weights_bytes / tp AS weights_bytes,
           engine_forward_peak_bytes(batched, hidden_size, intermediate_size, tp, act_bytes,
                                     forward_hidden_tensors, forward_intermediate_tensors,
                                     activation_bytes_per_token_hidden) AS activation_bytes,
           sampler_bytes_per_seq_vocab * vocab_size AS sampler_bytes_per_seq,
           engine_sampler_peak_bytes(default_seqs, vocab_size, sampler_bytes_per_seq_vocab, sampler_buffer_rows,
                                     batched, hidden_size, act_bytes, profile_hidden_kept)
               AS sampler_bytes,
           -- kept for the calibration, which re-evaluates the sampler at an observation's max_num_seqs
           hidden_size, vocab_size, act_bytes, intermediate_size, moe_intermediate_size, moe_top_k,
           sampler_bytes_per_seq_vocab, sampler_buffer_rows, profile_hidden_kept
    FROM knobs
),
reserved AS (
    SELECT *, engine_reserve_bytes(non_torch_bytes, torch_workspace_bytes, moe_workspace_bytes, activation_bytes,
                                   sampler_bytes, cudagraph_bytes, false) AS reserve_bytes
    FROM pool
)
SELECT *,
       CASE util_basis
            WHEN 'total' THEN usable_bytes * gpu_memory_utilization - weights_bytes - reserve_bytes
            WHEN 'free' THEN (usable_bytes - weights_bytes - reserve_bytes) * gpu_memory_utilization
            ELSE (usable_bytes - non_torch_bytes) * gpu_memory_utilization - weights_bytes
                 - (reserve_bytes - non_torch_bytes) END AS available_kv_bytes
FROM reserved
