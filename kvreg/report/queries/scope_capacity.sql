-- scope_capacity: the capacity view restricted to what one report lists (materialised once per report as
-- the temp table report_capacity, which grid, options, plan_options, chart_capacity and sensitivity read).
-- Every context of the contexts axis is kept: the capacity chart and the sensitivity use them all.
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × context_tokens.
-- Inputs: capacity (kvreg/sql/250_capacity.sql); parameters $models, $hardware, $engines,
--   $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]): the report's lists.
-- Units: as capacity (bytes, sequences, tokens).
-- Why: filtering with constant lists lets DuckDB push the filter into the view's scans; joining the
--   report_items table instead evaluates the view over the whole registry first.
SELECT * FROM capacity
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
