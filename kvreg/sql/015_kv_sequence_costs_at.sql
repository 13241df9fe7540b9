-- kv_sequence_costs_at(context_list): table macro, the complete memory cost of one sequence at
-- any context lengths — the ONE definition of the per-context arithmetic; the view
-- kv_sequence_costs is this macro applied to the contexts axis table.
-- Grain: one row per model × kv_dtype × tp × context (each distinct positive value of context_list,
--   a LIST of token counts, e.g. [32000, 32768]; NULL and non-positive values are dropped).
-- Inputs: kv_layer_costs, models.
-- Units: bytes per sequence, per TP rank.
--   context_label  32Ki for 32,768; 1Mi for 1,048,576; 32,000 otherwise (as tables.context_label)
--   within_native  context_tokens ≤ the model's native context (beyond it: computed, but warned about)
--   growing_bytes  = Σ unbounded layers (full, mla) layer_count × token_bytes × s
--   bounded_bytes  = Σ sliding/chunked layers layer_count × token_bytes × min(s, window)
--   state_bytes    = Σ recurrent layers layer_count × state (ssm + conv), constant in s;
--                    conv_state_bytes is the convolution part of it (the budget lesson omits it)
--   seq_bytes      = growing + bounded + state
--   naive_seq_bytes = 2·L·n_kv·d_h·s·p as a naive reader of config.json applies it: every
--                    attention layer (sliding and chunked counted as full, shared layers counted,
--                    recurrent layers and state left out) at the model's most common attention shape.
--   growing_token_bytes = bytes each further token of context adds (all unbounded layers).
--   naive_seq_ratio = naive_seq_bytes ÷ seq_bytes
-- Source: kv-cache-chapter.txt §2.2; kv-arithmetic-hybrid-attention.txt; kv-budget-lesson.txt.
CREATE OR REPLACE MACRO kv_sequence_costs_at(context_list) AS TABLE
WITH ctx AS (
    SELECT DISTINCT c::BIGINT AS context_tokens
    FROM (SELECT unnest(context_list) AS c)
    WHERE c IS NOT NULL AND c > 0
),
per_group AS (
    SELECT model_id, kv_dtype, tp,
           sum(CASE WHEN window_tokens IS NULL THEN layer_count * token_bytes ELSE 0 END) AS growing_token_bytes,
           sum(CASE WHEN kind <> 'recurrent' AND naive_token_bytes IS NOT NULL THEN layer_count ELSE 0 END)
               AS naive_layers,
           sum(layer_count * state_bytes) AS state_bytes,
           sum(layer_count * conv_state_bytes) AS conv_state_bytes
    FROM kv_layer_costs GROUP BY ALL
),
bounded AS (
    SELECT l.model_id, l.kv_dtype, l.tp, c.context_tokens,
           sum(l.layer_count * l.token_bytes * least(c.context_tokens, l.window_tokens)) AS bounded_bytes
    FROM kv_layer_costs l CROSS JOIN ctx c
    WHERE l.window_tokens IS NOT NULL
    GROUP BY ALL
),
shape AS (   -- the most common attention shape: the one covering the most layers
    SELECT model_id, kv_dtype, tp, arg_max(naive_token_bytes, layers) AS naive_token_bytes
    FROM (SELECT model_id, kv_dtype, tp, naive_token_bytes, sum(layer_count) AS layers
          FROM kv_layer_costs WHERE naive_token_bytes IS NOT NULL GROUP BY ALL)
    GROUP BY ALL
)
SELECT p.model_id, p.kv_dtype, p.tp, c.context_tokens,
       CASE WHEN c.context_tokens % 1048576 = 0 THEN (c.context_tokens // 1048576)::VARCHAR || 'Mi'
            WHEN c.context_tokens % 1024 = 0 THEN (c.context_tokens // 1024)::VARCHAR || 'Ki'
            ELSE format('{:,}', c.context_tokens) END AS context_label,
       c.context_tokens <= m.native_context_tokens AS within_native,
       p.growing_token_bytes,
       p.growing_token_bytes * c.context_tokens AS growing_bytes,
       coalesce(b.bounded_bytes, 0) AS bounded_bytes,
       p.state_bytes,
       p.conv_state_bytes,
       p.growing_token_bytes * c.context_tokens + coalesce(b.bounded_bytes, 0) + p.state_bytes AS seq_bytes,
       p.naive_layers * s.naive_token_bytes AS naive_token_bytes,
       p.naive_layers * s.naive_token_bytes * c.context_tokens AS naive_seq_bytes,
       p.naive_layers * s.naive_token_bytes * c.context_tokens
           / (p.growing_token_bytes * c.context_tokens + coalesce(b.bounded_bytes, 0) + p.state_bytes) AS naive_seq_ratio
FROM per_group p
JOIN models m USING (model_id)
CROSS JOIN ctx c
LEFT JOIN bounded b ON b.model_id = p.model_id AND b.kv_dtype = p.kv_dtype AND b.tp = p.tp
                   AND b.context_tokens = c.context_tokens
LEFT JOIN shape s ON s.model_id = p.model_id AND s.kv_dtype = p.kv_dtype AND s.tp = p.tp
