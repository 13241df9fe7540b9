-- workload: the report's workload target with its context label.
-- Grain: one row per report.  Inputs: report_workloads, contexts (every workload context is on the axis);
--   macro workload_requests (kvreg/sql/272_workload_blocks.sql: Little's law, the one `kvreg plan --request-rate`
--   and the plans macro use).
-- Units: users = concurrent requests (sequences, times parallel_samples): the definition's users, or
--   ⌈request_rate_per_s × (TTFT + (output − 1) × TPOT)⌉ when it gives a request rate instead (requests per
--   second); given_users the definition's users (NULL with a rate); context in tokens; tpot_s, ttft_s in seconds;
--   hours per month.
SELECT w.* REPLACE (coalesce(w.users, workload_requests(w.request_rate_per_s, w.ttft_s, w.output_tokens, w.tpot_s))
                    AS users),
       w.users AS given_users, c.label AS context_label
FROM report_workloads w JOIN contexts c USING (context_tokens)
WHERE w.report_id = $report
