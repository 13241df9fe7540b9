-- report_contexts: the contexts report $report shows in its grid and sizes its workload at (BIGINT[] tokens,
-- ascending): its `contexts` list and its workload context.  The scope of report_capacity (scope_capacity.sql).
SELECT list(DISTINCT t ORDER BY t) AS contexts
FROM (SELECT item_value::BIGINT AS t FROM report_items WHERE report_id = $report AND item_kind = 'context'
      UNION ALL SELECT context_tokens FROM report_workloads WHERE report_id = $report)
