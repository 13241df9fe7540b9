-- chart_scope: what report_capacity_axis (scope_capacity.sql over every context of the axis) must hold for the
-- capacity chart (chart_capacity.sql) and the sensitivity's longest context: each model's recommended weights
-- dtype, KV dtype and engine, and the report's first ones when a model has no recommendation.
-- Grain: one row.  VARCHAR[] lists (a superset: chart_capacity picks each model's own configuration);
--   axis_contexts the contexts axis (BIGINT[] tokens, ascending).
-- Inputs: report_options (rank_in_model = 1 AND meets), report_items, contexts.
WITH pick AS (SELECT item_kind, item_id, item_idx FROM report_items WHERE report_id = $report),
firsts AS (
    SELECT arg_min(item_id, item_idx) FILTER (WHERE item_kind = 'weights_dtype') AS weights_dtype,
           arg_min(item_id, item_idx) FILTER (WHERE item_kind = 'kv_dtype') AS kv_dtype,
           arg_min(item_id, item_idx) FILTER (WHERE item_kind = 'engine') AS engine_id
    FROM pick
),
shown AS (
    SELECT weights_dtype, kv_dtype, engine_id FROM report_options WHERE rank_in_model = 1 AND meets
    UNION ALL
    SELECT weights_dtype, kv_dtype, engine_id FROM firsts
    WHERE EXISTS (SELECT 1 FROM pick p WHERE p.item_kind = 'model' AND p.item_id NOT IN
                  (SELECT model_id FROM report_options WHERE rank_in_model = 1 AND meets))
)
SELECT list(DISTINCT weights_dtype) AS weights_dtypes, list(DISTINCT kv_dtype) AS kv_dtypes,
       list(DISTINCT engine_id) AS engines,
       (SELECT list(context_tokens ORDER BY context_tokens) FROM contexts) AS axis_contexts
FROM shown
