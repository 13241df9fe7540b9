-- chart_scope: what report_capacity_axis (scope_capacity.sql over every context of the axis) must hold for the
-- capacity chart (chart_capacity.sql) and the sensitivity's longest context: each model's shown weights dtype,
-- KV dtype and engine (report_shown_precisions: the recommendation's, else the report's first ones).
-- Grain: one row.  VARCHAR[] lists (a superset: chart_capacity picks each model's own configuration);
--   axis_contexts the contexts axis (BIGINT[] tokens, ascending).
-- Inputs: report_shown_precisions (shown_precisions.sql), contexts.
SELECT list(DISTINCT weights_dtype) AS weights_dtypes, list(DISTINCT kv_dtype) AS kv_dtypes,
       list(DISTINCT engine_id) AS engines,
       (SELECT list(context_tokens ORDER BY context_tokens) FROM contexts) AS axis_contexts
FROM report_shown_precisions
