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
--   sampler_bytes_per_seq  the dummy sampler run's bytes per scheduled sequence (sampler constant × vocab)
--   reserve_bytes      non_torch + max(activation·hidden·T, sampler·max_num_seqs·vocab) + cudagraph
--                      (engine_accounting.md §1c; constants fitted to logs, kvreg/schema/accounting.py)
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
           m.hidden_size, coalesce(m.vocab_size, 0) AS vocab_size
    FROM served_models s
    JOIN models m ON m.model_id = s.model_id
    JOIN model_weights w ON w.model_id = s.model_id
    LEFT JOIN draft d ON d.served_id = s.served_id
    WHERE s.role = 'target'
),
dev AS (
    SELECT a.*, e.gpu_memory_utilization, h.hardware_id, h.usable_bytes,
           a.large_gpu_min_bytes IS NOT NULL AND h.usable_bytes >= a.large_gpu_min_bytes
               AND NOT coalesce(list_bool_or(list_transform(string_split(coalesce(a.large_gpu_excludes, ''), ','),
                                                            lambda x: x <> '' AND starts_with(h.hardware_id, x))), false)
               AS large_gpu
    FROM engine_accounting a JOIN engines e USING (engine_id) CROSS JOIN hardware h
),
pool AS (
    SELECT d.engine_id, s.model_id, d.hardware_id, s.weights_dtype, t.tp, b.max_num_batched_tokens,
           b.max_num_batched_tokens = CASE WHEN d.large_gpu THEN coalesce(d.max_num_batched_tokens_large_gpu,
                                                                           d.max_num_batched_tokens)
                                           ELSE d.max_num_batched_tokens END AS default_batched,
           CASE WHEN d.large_gpu THEN coalesce(d.max_num_seqs_large_gpu, d.max_num_seqs) ELSE d.max_num_seqs END
               AS max_num_seqs,
           d.usable_bytes, d.gpu_memory_utilization, d.util_basis, d.non_torch_bytes, d.cudagraph_bytes,
           s.weights_bytes / t.tp AS weights_bytes,
           d.activation_bytes_per_token_hidden * s.hidden_size * b.max_num_batched_tokens AS activation_bytes,
           d.sampler_bytes_per_seq_vocab * s.vocab_size AS sampler_bytes_per_seq,
           d.sampler_bytes_per_seq_vocab * s.vocab_size
               * CASE WHEN d.large_gpu THEN coalesce(d.max_num_seqs_large_gpu, d.max_num_seqs) ELSE d.max_num_seqs END
               AS sampler_bytes
    FROM dev d CROSS JOIN served s CROSS JOIN tp_sizes t CROSS JOIN batched_tokens b
)
SELECT *,
       non_torch_bytes + greatest(activation_bytes, sampler_bytes) + cudagraph_bytes AS reserve_bytes,
       CASE util_basis
            WHEN 'total' THEN usable_bytes * gpu_memory_utilization - weights_bytes
                              - (non_torch_bytes + greatest(activation_bytes, sampler_bytes) + cudagraph_bytes)
            WHEN 'free' THEN (usable_bytes - weights_bytes
                              - (non_torch_bytes + greatest(activation_bytes, sampler_bytes) + cudagraph_bytes))
                             * gpu_memory_utilization
            ELSE (usable_bytes - non_torch_bytes) * gpu_memory_utilization - weights_bytes
                 - (greatest(activation_bytes, sampler_bytes) + cudagraph_bytes) END AS available_kv_bytes
FROM pool
