-- report_chart_capacity_ordered: the report_chart_capacity temp table (chart_capacity.sql) in plotting order.
SELECT c.* FROM report_chart_capacity c
JOIN report_items pm ON pm.item_kind = 'model' AND pm.item_id = c.model_id
JOIN report_items ph ON ph.item_kind = 'hardware' AND ph.item_id = c.hardware_id AND ph.report_id = pm.report_id
WHERE pm.report_id = $report
ORDER BY pm.item_idx, ph.item_idx, c.context_tokens
