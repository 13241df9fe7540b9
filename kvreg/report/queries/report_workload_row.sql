-- report_workload_row: the report's workload (temp table report_workload, workload.sql), one row.
SELECT * FROM report_workload
