-- engine_memory_pools_at(max_num_batched_tokens := NULL, gpu_memory_utilization := NULL, max_num_seqs := NULL,
--   enforce_eager := NULL, num_speculative_tokens := NULL, batched_axis := NULL): table macro, the KV memory an
-- engine release predicts it has, per device, with the engine knobs a user sets (NULL = the release's
-- default for the device) — the ONE definition of the engine pool arithmetic.  The view
-- engine_memory_pools is this macro over the batched_tokens axis (batched_axis := that list).
-- Grain: one row per engine × served model × hardware × weights_dtype × tp × max_num_batched_tokens
--   (batched_axis when given, else the one value max_num_batched_tokens or the release default).
-- Inputs: engine_accounting, engines, served_models, models, model_weights, hardware, tp_sizes.
-- Units: bytes per device (per TP rank); tokens; sequences.
--   weights_bytes      served weights ÷ tp (a draft model's weights at its own dtype are added)
--   default_batched    true for the release's default max_num_batched_tokens on this device
--                      (vLLM get_batch_defaults: larger defaults from large_gpu_min_bytes, except
--                      the excluded device names)
--   max_num_seqs       the knob, or the release's default on this device; max_num_seqs_is_default says which
--   gpu_memory_utilization  the knob, or the release's default; util_is_default says which
--   enforce_eager      the knob (default false): no CUDA graphs are captured, so the cudagraph term is 0
--                      (vllm/v1/worker/gpu_worker.py determine_available_memory, 0.19.0 l. 379–381:
--                      cudagraph_memory_estimate = 0 when enforce_eager)
--   num_speculative_tokens  the knob as given (NULL = the served model's own); plumbed for the reserve
--                      and block rules that depend on it, no effect on this pool yet
--   sampler_bytes_per_seq  the dummy sampler run's bytes per scheduled sequence (sampler constant × vocab)
--   reserve_bytes      non_torch + max(activation·hidden·T, sampler·max_num_seqs·vocab) + cudagraph
--                      (engine_accounting.md §1c; constants fitted to logs, kvreg/schema/accounting.py)
--   available_kv_bytes predicted "Available KV cache memory" by util_basis:
--                      total:            usable·util − weights − reserve                (vLLM §1)
--                      free:             (usable − weights − reserve)·util             (TRT-LLM §9)
--                      free_before_load: (usable − non_torch)·util − weights − (reserve − non_torch) (SGLang §8)
-- Every column reference below is qualified: a macro parameter shadows an unqualified column of its name.
CREATE OR REPLACE MACRO engine_memory_pools_at(max_num_batched_tokens := NULL, gpu_memory_utilization := NULL,
                                               max_num_seqs := NULL, enforce_eager := NULL,
                                               num_speculative_tokens := NULL, batched_axis := NULL) AS TABLE
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
    SELECT a.*, e.gpu_memory_utilization AS release_gpu_memory_utilization, h.hardware_id, h.usable_bytes,
           a.large_gpu_min_bytes IS NOT NULL AND h.usable_bytes >= a.large_gpu_min_bytes
               AND NOT coalesce(list_bool_or(list_transform(string_split(coalesce(a.large_gpu_excludes, ''), ','),
                                                            lambda x: x <> '' AND starts_with(h.hardware_id, x))), false)
               AS large_gpu
    FROM engine_accounting a JOIN engines e USING (engine_id) CROSS JOIN hardware h
),
knobs AS (
    SELECT d.*,
           CASE WHEN d.large_gpu THEN coalesce(d.max_num_batched_tokens_large_gpu, d.max_num_batched_tokens)
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
pool AS (
    SELECT d.engine_id, s.model_id, d.hardware_id, s.weights_dtype, t.tp, d.batched_set AS max_num_batched_tokens,
           d.batched_set = d.release_batched AS default_batched,
           d.seqs_set AS max_num_seqs, d.seqs_set = d.release_max_num_seqs AS max_num_seqs_is_default,
           d.usable_bytes, d.util_set AS gpu_memory_utilization,
           d.util_set = d.release_gpu_memory_utilization AS util_is_default,
           d.eager_set AS enforce_eager, num_speculative_tokens::BIGINT AS num_speculative_tokens,
           d.util_basis, d.non_torch_bytes,
           CASE WHEN d.eager_set THEN 0 ELSE d.cudagraph_bytes END AS cudagraph_bytes,
           s.weights_bytes / t.tp AS weights_bytes,
           d.activation_bytes_per_token_hidden * s.hidden_size * d.batched_set AS activation_bytes,
           d.sampler_bytes_per_seq_vocab * s.vocab_size AS sampler_bytes_per_seq,
           d.sampler_bytes_per_seq_vocab * s.vocab_size * d.seqs_set AS sampler_bytes
    FROM set_knobs d CROSS JOIN served s CROSS JOIN tp_sizes t
),
reserved AS (   -- the release's reserve above non-torch memory: one expression (a reserve model drops in here)
    SELECT p.*, greatest(p.activation_bytes, p.sampler_bytes) + p.cudagraph_bytes AS torch_reserve_bytes
    FROM pool p
)
SELECT r.* EXCLUDE (torch_reserve_bytes), r.non_torch_bytes + r.torch_reserve_bytes AS reserve_bytes,
       CASE r.util_basis
            WHEN 'total' THEN r.usable_bytes * r.gpu_memory_utilization - r.weights_bytes
                              - (r.non_torch_bytes + r.torch_reserve_bytes)
            WHEN 'free' THEN (r.usable_bytes - r.weights_bytes - (r.non_torch_bytes + r.torch_reserve_bytes))
                             * r.gpu_memory_utilization
            ELSE (r.usable_bytes - r.non_torch_bytes) * r.gpu_memory_utilization - r.weights_bytes
                 - r.torch_reserve_bytes END AS available_kv_bytes
FROM reserved r;

-- engine_memory_pools: engine_memory_pools_at over the batched_tokens axis, every knob at the release default
-- (columns, grain and units as the macro above).
CREATE OR REPLACE VIEW engine_memory_pools AS
SELECT * FROM engine_memory_pools_at(batched_axis := (SELECT list(max_num_batched_tokens ORDER BY max_num_batched_tokens)
                                                      FROM batched_tokens))
