-- shown_precisions: the one configuration family each model's charts and printed appendix show: the recommended
-- option's weights dtype, KV dtype and engine, or the report's first ones when no listed configuration serves the
-- workload (temp table report_shown_precisions; read by chart_scope, chart_capacity, grid, pools and per_sequence).
-- Grain: one row per listed model.
-- Inputs: report_options (rank_in_model = 1 AND meets: the recommendation), report_items.
-- Columns: model_id, engine_id, weights_dtype, kv_dtype; recommended (true: the recommendation's, false: the
--   report's first listed precisions and engine).
WITH pick AS (SELECT item_kind, item_id, item_idx FROM report_items WHERE report_id = $report),
firsts AS (
    SELECT arg_min(item_id, item_idx) FILTER (WHERE item_kind = 'weights_dtype') AS weights_dtype,
           arg_min(item_id, item_idx) FILTER (WHERE item_kind = 'kv_dtype') AS kv_dtype,
           arg_min(item_id, item_idx) FILTER (WHERE item_kind = 'engine') AS engine_id
    FROM pick
),
rec AS (SELECT model_id, engine_id, weights_dtype, kv_dtype FROM report_options WHERE rank_in_model = 1 AND meets)
SELECT pm.item_id AS model_id, coalesce(r.engine_id, f.engine_id) AS engine_id,
       coalesce(r.weights_dtype, f.weights_dtype) AS weights_dtype, coalesce(r.kv_dtype, f.kv_dtype) AS kv_dtype,
       r.model_id IS NOT NULL AS recommended
FROM pick pm
CROSS JOIN firsts f
LEFT JOIN rec r ON r.model_id = pm.item_id
WHERE pm.item_kind = 'model'
