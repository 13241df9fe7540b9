-- chart_capacity: max concurrency against context length for each model's primary configuration
-- on each listed hardware (the recommended option's weights dtype, KV dtype and engine — the report's
-- first ones when the model has no recommendation — at the smallest listed TP size whose weights fit and whose heads split, report_memory_pools.fit_tp), over every context of the contexts axis up to the
-- longer of the model's native context and the report's longest context.
-- engine_seqs is what the first listed engine release with accounting data (admission_engine_id) admits
-- in the same hardware × precision × TP configuration (report_engine_admission), NULL when none is listed.
-- Grain: one row per model × hardware × context_tokens.
-- Inputs: report_capacity_axis (every axis context, chart_scope.sql), served_tp_sharding, report_memory_pools (scope_memory_pools.sql: the capacity rows' pools), contexts, models, report_items, report_engine_admission,
--   report_shown_precisions (shown_precisions.sql: the recommendation's precisions and engine, else the report's first).
-- Units: sequences; context in tokens.
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
firsts AS (
    SELECT max(item_value) FILTER (WHERE item_kind = 'context') AS longest_context_tokens,
           arg_min(item_id, item_idx) FILTER (WHERE item_kind = 'engine'
                                               AND item_id IN (SELECT engine_id FROM report_engine_admission))
               AS admission_engine_id
    FROM pick
),
cfg AS (   -- at fit_tp (scope_memory_pools.sql: the smallest listed TP size whose weights fit; none: no line)
    SELECT p.model_id, p.hardware_id, r.engine_id, r.weights_dtype, r.kv_dtype,
           p.tp, f.longest_context_tokens, f.admission_engine_id
    FROM report_memory_pools p
    CROSS JOIN firsts f
    JOIN report_shown_precisions r ON r.model_id = p.model_id
    JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = p.model_id
    JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = p.hardware_id
    WHERE p.engine_id = r.engine_id AND p.weights_dtype = r.weights_dtype
      AND p.tp = p.fit_tp
)
SELECT c.model_id, c.hardware_id, c.engine_id, c.weights_dtype, c.kv_dtype, c.tp, c.context_tokens,
       c.context_label, c.first_principles_seqs AS max_seqs, c.naive_max_seqs, e.admitted_seqs AS engine_seqs,
       cfg.admission_engine_id
FROM cfg
JOIN report_capacity_axis c ON c.model_id = cfg.model_id AND c.hardware_id = cfg.hardware_id AND c.engine_id = cfg.engine_id
               AND c.weights_dtype = cfg.weights_dtype AND c.kv_dtype = cfg.kv_dtype AND c.tp = cfg.tp
JOIN models m ON m.model_id = c.model_id
JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = c.model_id
JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = c.hardware_id
LEFT JOIN report_engine_admission e
       ON e.model_id = c.model_id AND e.hardware_id = c.hardware_id AND e.engine_id = cfg.admission_engine_id
      AND e.weights_dtype = c.weights_dtype AND e.kv_dtype = c.kv_dtype AND e.tp = c.tp
      AND e.context_tokens = c.context_tokens
WHERE c.context_tokens >= 1024
  AND c.context_tokens <= greatest(m.native_context_tokens, cfg.longest_context_tokens)
ORDER BY pm.item_idx, ph.item_idx, c.context_tokens
