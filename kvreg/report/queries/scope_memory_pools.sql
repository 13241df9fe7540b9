-- scope_memory_pools: the memory_pools view restricted to what one report lists (temp table
-- report_memory_pools, read by chart_capacity to pick each hardware's smallest TP whose weights fit).
-- Grain: one row per listed model × hardware × engine × weights_dtype × tp.
-- Inputs: memory_pools_at (kvreg/sql/240_memory_pools.sql, the memory_pools view's macro, its engine pools cut to the
--   report's models and hardware); parameters $models, $hardware, $engines,
--   $weights_dtypes (VARCHAR[]), $tp (BIGINT[]).
-- Units: as memory_pools (bytes).
SELECT * FROM memory_pools_at(only_models := $models, only_hardware := $hardware)
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($tp, tp)
