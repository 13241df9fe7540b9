-- naive_gap: why the naive plan's device count differs from the recommendation, term by term, for each
-- model's recommended option, and which term decides.
-- Grain: one row per model with a recommendation (rank_in_model = 1 and it meets the workload) × term that
--   moves its capacity (term_rank 1 = largest |impact|); a model with no such term has one row, term NULL.
-- Inputs: report_options (plan_options.sql), report_capacity (the recommended row at the workload context),
--   kv_layer_costs, layer_groups, hardware, engines, report_engine_capacity (the engine's blocks per request at
--   the default max_num_batched_tokens; empty when the database has no engine_capacity).
-- Terms (each with its own numbers, so the sentence is the scenario's, never a generic one):
--   window         sliding / chunked layers: the naive formula stores them at the full context T; they keep
--                  min(T, W) tokens (W = the window, or the chunk C)
--   mla            MLA layers: the naive formula decompresses K and V per head; the cache holds one latent
--   kv_replication fewer KV heads than TP ranks: each rank keeps a whole head (replicated), the naive formula
--                  divides the heads by TP
--   k_eq_v         K = V layers stored once (first principles) against the naive K and V
--   state          recurrent layers: a constant state per sequence the naive formula leaves out
--   pool           the naive pool (marketed GB − weights) against the KV pool (usable − reserve − residents −
--                  weights, per rank)
--   engine         the engine release admits fewer sequences than the pool holds (engine accounting)
--   tpot           decode speed: the replica runs fewer sequences than memory and the engine allow
-- Units: bytes per device (per TP rank) for per-sequence and pool figures; tokens; sequences; devices.
--   impact         ln of the factor the term moves the naive capacity by (> 0: the naive plan buys too few
--                  because of it; < 0: too many).  Per-sequence terms share ln(seq ÷ naive seq) in proportion
--                  to their bytes.
--   decisive       the term whose impact is largest in the direction of the device gap ('same' when the
--                  naive plan buys as many devices)
WITH rec AS (SELECT * FROM report_options WHERE rank_in_model = 1 AND meets),
cap AS (
    SELECT r.model_id, r.hardware_id, r.engine_id, r.weights_dtype, r.kv_dtype, r.tp, r.context_tokens AS t,
           r.devices, r.naive_devices, r.planned_seqs, r.engine_seqs, r.engine_limited,
           c.max_seqs, c.naive_max_seqs, c.seq_bytes, c.naive_seq_bytes, c.pool_bytes, c.naive_pool_bytes,
           c.usable_bytes, c.claimed_bytes, c.reserve_bytes, c.resident_bytes, c.weights_bytes_per_rank, h.marketed_bytes,
           ec.blocks_per_request, ec.block_size_tokens, ec.num_groups
    FROM rec r
    JOIN report_capacity c ON c.model_id = r.model_id AND c.hardware_id = r.hardware_id AND c.engine_id = r.engine_id
         AND c.weights_dtype = r.weights_dtype AND c.kv_dtype = r.kv_dtype AND c.tp = r.tp
         AND c.context_tokens = r.context_tokens
    JOIN hardware h ON h.hardware_id = r.hardware_id
    LEFT JOIN report_engine_capacity ec
           ON ec.model_id = r.model_id AND ec.hardware_id = r.hardware_id AND ec.engine_id = r.engine_id
          AND ec.weights_dtype = r.weights_dtype AND ec.kv_dtype = r.kv_dtype AND ec.tp = r.tp
          AND ec.max_model_len = r.context_tokens AND ec.default_batched
),
groups AS (
    SELECT c.model_id, k.group_idx, k.kind, k.layer_count AS layers, k.token_bytes, k.naive_token_bytes,
           k.kv_heads_per_rank, g.kv_heads, g.k_eq_v, k.window_tokens,
           coalesce(k.state_bytes, 0) + coalesce(k.conv_state_bytes, 0) AS state_bytes,
           least(c.t, coalesce(k.window_tokens, c.t)) AS kept_tokens, c.t, c.tp
    FROM cap c
    JOIN kv_layer_costs k ON k.model_id = c.model_id AND k.kv_dtype = c.kv_dtype AND k.tp = c.tp
    JOIN layer_groups g ON g.model_id = k.model_id AND g.group_idx = k.group_idx
    WHERE NOT k.shares_layers AND k.kind NOT IN ('shared', 'mlp')
),
-- bytes per sequence per rank each term adds (> 0) or saves (< 0) against the naive formula
seq_terms AS (
    SELECT model_id, 'window' AS term, sum(layers) AS layers, min(window_tokens) AS window_tokens,
           any_value(kind) AS layer_kind, NULL::BIGINT AS kv_heads, NULL::BIGINT AS kv_heads_per_rank,
           NULL::DOUBLE AS token_bytes, NULL::DOUBLE AS naive_token_bytes,
           -sum(layers * naive_token_bytes * (t - kept_tokens)) AS delta_bytes
    FROM groups WHERE kind IN ('sliding', 'chunked') AND kept_tokens < t GROUP BY model_id
    UNION ALL
    SELECT model_id, 'mla', sum(layers), NULL, 'mla', NULL, NULL, any_value(token_bytes), any_value(naive_token_bytes),
           sum(layers * (token_bytes - naive_token_bytes) * kept_tokens)
    FROM groups WHERE kind = 'mla' GROUP BY model_id
    UNION ALL
    SELECT model_id, 'kv_replication', sum(layers), NULL, any_value(kind), max(kv_heads), max(kv_heads_per_rank),
           max(token_bytes), max(naive_token_bytes), sum(layers * (token_bytes - naive_token_bytes) * kept_tokens)
    FROM groups WHERE kind IN ('full', 'sliding', 'chunked') AND kv_heads < tp AND token_bytes > naive_token_bytes
    GROUP BY model_id
    UNION ALL
    SELECT model_id, 'k_eq_v', sum(layers), NULL, any_value(kind), max(kv_heads), max(kv_heads_per_rank),
           max(token_bytes), max(naive_token_bytes), sum(layers * (token_bytes - naive_token_bytes) * kept_tokens)
    FROM groups WHERE k_eq_v AND token_bytes < naive_token_bytes GROUP BY model_id
    UNION ALL
    SELECT model_id, 'state', sum(layers), NULL, 'recurrent', NULL, NULL, NULL, NULL, sum(layers * state_bytes)
    FROM groups WHERE kind = 'recurrent' GROUP BY model_id
),
seq_share AS (
    SELECT s.*, c.seq_bytes, c.naive_seq_bytes,
           CASE WHEN c.seq_bytes <> c.naive_seq_bytes
                THEN ln(c.seq_bytes / c.naive_seq_bytes) * s.delta_bytes / (c.seq_bytes - c.naive_seq_bytes)
                ELSE 0 END AS impact
    FROM seq_terms s JOIN cap c USING (model_id)
    WHERE s.delta_bytes <> 0
),
terms AS (
    SELECT model_id, term, impact, layers, window_tokens, layer_kind, kv_heads, kv_heads_per_rank, token_bytes,
           naive_token_bytes, delta_bytes
    FROM seq_share
    UNION ALL
    SELECT model_id, 'pool', ln(naive_pool_bytes / pool_bytes), NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           naive_pool_bytes - pool_bytes
    FROM cap WHERE pool_bytes > 0 AND naive_pool_bytes > 0 AND naive_pool_bytes <> pool_bytes
    UNION ALL
    SELECT model_id, 'engine', ln(max_seqs / engine_seqs), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM cap WHERE engine_seqs > 0 AND engine_seqs < max_seqs
    UNION ALL
    SELECT model_id, 'tpot', ln(least(max_seqs, coalesce(engine_seqs, max_seqs)) / planned_seqs),
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM cap WHERE planned_seqs > 0 AND planned_seqs < least(max_seqs, coalesce(engine_seqs, max_seqs))
),
picked AS (
    SELECT c.model_id,
           CASE WHEN c.naive_devices IS NULL OR c.naive_devices = c.devices THEN NULL
                WHEN c.naive_devices < c.devices THEN arg_max(t.term, t.impact) FILTER (WHERE t.impact > 0)
                ELSE arg_min(t.term, t.impact) FILTER (WHERE t.impact < 0) END AS decisive
    FROM cap c LEFT JOIN terms t USING (model_id)
    GROUP BY c.model_id, c.naive_devices, c.devices
)
SELECT c.*, coalesce(p.decisive, CASE WHEN c.naive_devices IS NULL THEN 'naive_does_not_fit' ELSE 'same' END)
           AS decisive,
       t.term, t.impact, row_number() OVER (PARTITION BY c.model_id ORDER BY abs(t.impact) DESC, t.term) AS term_rank,
       t.layers, t.window_tokens, t.layer_kind, t.kv_heads, t.kv_heads_per_rank, t.token_bytes,
       t.naive_token_bytes, t.delta_bytes, e.name AS engine_name
FROM cap c
JOIN picked p USING (model_id)
LEFT JOIN terms t ON t.model_id = c.model_id
LEFT JOIN engines e ON e.engine_id = c.engine_id
ORDER BY c.model_id, term_rank
