-- workload: the report's workload target with its context label.
-- Grain: one row per report.  Inputs: report_workloads, contexts (every workload context is on the axis).
-- Units: users = concurrent sequences; context in tokens; tpot_s, ttft_s in seconds; hours per month.
SELECT w.*, c.label AS context_label
FROM report_workloads w JOIN contexts c USING (context_tokens)
WHERE w.report_id = $report
