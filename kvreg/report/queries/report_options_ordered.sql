-- report_options_ordered: the report_options temp table (options.sql or plan_options.sql), cheapest first.
SELECT * FROM report_options ORDER BY model_idx, rank_in_model
