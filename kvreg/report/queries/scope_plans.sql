-- scope_plans: the ranked_plans(users, context_tokens, tpot_s, ttft_s, lists…) table macro for what the report
-- lists (temp table report_plans, read by plan_options): the same sizing and the same ranking as `kvreg plan`
-- (kvreg/sql/280_ranked_plans.sql over 275_plans.sql), so the report and the CLI give the same rows.
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp.
-- Inputs: ranked_plans macro; parameters $users, $context_tokens, $tpot_s, $ttft_s (the report's workload),
--   $models, $hardware, $engines, $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]), $weights_pairs
--   (the per-model precisions, report_weights, kvreg/sql/031); the report's cost basis
--   $cost_basis, $tco_years, $tco_usd_per_kwh, $tco_pue (ranked_plans prices on it); the workload's
--   $input_tokens, $output_tokens, $shared_prefix_tokens, $parallel_samples (NULL = not given); $users NULL and
--   $request_rate_per_s (req/s) when the workload gives a rate: plans then applies Little's law itself
--   (workload_requests, 272), as `kvreg plan --request-rate` does.
-- Units: as plans (sequences, devices, seconds, USD per hour); rank_list, rank_in_list, rank_in_model as
--   ranked_plans.  $efficiency_basis: plans' (fitted, or vendor_measured for the second plan of a † call:
--   report_plans_vendor, kvreg/report/context.py vendor_plans).
SELECT * FROM ranked_plans($users, $context_tokens, $tpot_s, ttft_s := $ttft_s, models := $models,
                           hardware := $hardware, engines := $engines, weights_dtypes := $weights_dtypes,
                           kv_dtypes := $kv_dtypes, tps := $tp, cost_basis := $cost_basis, tco_years := $tco_years,
                           tco_usd_per_kwh := $tco_usd_per_kwh, tco_pue := $tco_pue,
                           gpu_memory_utilization := $gpu_memory_utilization,
                           max_num_seqs := $max_num_seqs, max_num_batched_tokens := $max_num_batched_tokens,
                           enforce_eager := $enforce_eager, num_speculative_tokens := $num_speculative_tokens,
                           block_size := $block_size,
                           input_tokens := $input_tokens, output_tokens := $output_tokens,
                           shared_prefix_tokens := $shared_prefix_tokens, parallel_samples := $parallel_samples,
                           request_rate_per_s := $request_rate_per_s, efficiency_basis := $efficiency_basis,
                           weights_pairs := $weights_pairs)
