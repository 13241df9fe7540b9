-- scope_memory_pools: each listed configuration's KV pool per device, as the report's capacity rows computed it
-- (temp table report_memory_pools, read by chart_capacity to pick each hardware's smallest TP whose weights fit).
-- Cut from report_capacity_all (capacity_at over the contexts axis at the report's engine_settings,
-- scope_capacity.sql), whose pool columns are memory_pools_at's (kvreg/sql/245 over 240) at those settings: the chart
-- picks its TP from the very pool its cells were sized on (one memory model per engine id).  Evaluating
-- memory_pools_at apart took the release defaults, so a report with engine_settings (a lower
-- gpu_memory_utilization, say) could chart a TP whose capacity rows read 0 (tests/test_one_memory_model.py).  The
-- pool depends on neither the KV dtype nor the context (memory_pools_at's grain has neither: one value per group).
-- Grain: one row per listed model × hardware × engine × weights_dtype × tp with capacity rows.
-- Inputs: report_capacity_all (kvreg/report/context.py rank_options).
-- Units: bytes per device (per TP rank).
SELECT model_id, hardware_id, engine_id, weights_dtype, tp, any_value(pool_bytes) AS pool_bytes,
       any_value(weights_bytes) AS weights_bytes, any_value(pool_basis) AS pool_basis
FROM report_capacity_all
GROUP BY ALL
