-- scope_memory_pools: each listed configuration's KV pool per device, as the report's capacity rows computed it
-- (temp table report_memory_pools, read by chart_capacity to pick each hardware's smallest TP whose weights fit).
-- Cut from report_capacity_all (capacity_at over the contexts axis at the report's engine_settings,
-- scope_capacity.sql), whose pool columns are memory_pools_at's (kvreg/sql/245 over 240) at those settings: the chart
-- picks its TP from the very pool its cells were sized on (one memory model per engine id).  Evaluating
-- memory_pools_at apart took the release defaults, so a report with engine_settings (a lower
-- gpu_memory_utilization, say) could chart a TP whose capacity rows read 0 (tests/test_one_memory_model.py).  The
-- pool depends on neither the KV dtype nor the context (memory_pools_at's grain has neither: one value per group).
-- The one rule for "the TP size a device is shown at" (issue 12 item 6, each formula once), per model × hardware ×
-- engine × weights_dtype: fit_tp, the smallest listed TP size whose weights fit (pool_bytes > 0) and whose heads
-- split (served_tp_sharding, kvreg/sql/037: an engine refuses the others at load; NULL where none does), the TP size of the model's capacity chart (chart_capacity.sql); budget_tp, fit_tp else the largest listed
-- TP size, the one row per device the PDF appendix's memory budget prints (pools.sql budget_printed).
-- Grain: one row per listed model × hardware × engine × weights_dtype × tp with capacity rows.
-- Inputs: report_capacity_all (kvreg/report/context.py rank_options), served_tp_sharding (037).
-- Units: bytes per device (per TP rank); fit_tp, budget_tp TP sizes.
SELECT *, coalesce(fit_tp, max(tp) OVER per_device) AS budget_tp
FROM (SELECT c.*, min(c.tp) FILTER (WHERE c.pool_bytes > 0 AND coalesce(sh.shards, TRUE)) OVER per_device AS fit_tp
      FROM (SELECT model_id, hardware_id, engine_id, weights_dtype, tp, any_value(pool_bytes) AS pool_bytes,
                   any_value(weights_bytes_per_rank) AS weights_bytes_per_rank, any_value(pool_basis) AS pool_basis
            FROM report_capacity_all
            GROUP BY ALL) c
      LEFT JOIN served_tp_sharding sh ON sh.served_id = c.model_id AND sh.tp = c.tp
      WINDOW per_device AS (PARTITION BY model_id, hardware_id, engine_id, weights_dtype))
WINDOW per_device AS (PARTITION BY model_id, hardware_id, engine_id, weights_dtype)
