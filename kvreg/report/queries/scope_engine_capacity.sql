-- scope_engine_capacity: engine_capacity at each engine release's default max_num_batched_tokens
-- (default_batched), restricted to what one report lists; materialised once per report as the temp table
-- report_engine_capacity, from which report_engine_admission and engine_quirks read (one pass over the
-- deep engine_capacity view instead of two).  Every max_model_len of the axis is kept (the capacity chart).
-- Grain: one row per listed model × hardware × engine × weights_dtype × kv_dtype × tp × max_model_len
--   (× max_num_batched_tokens should a release have several defaults).
-- Inputs: engine_capacity (kvreg/sql/220_engine_capacity.sql); parameters $models, $hardware, $engines,
--   $weights_dtypes, $kv_dtypes (VARCHAR[]), $tp (BIGINT[]).
-- Units: as engine_capacity (sequences, tokens, bytes).
SELECT * FROM engine_capacity
WHERE list_contains($models, model_id) AND list_contains($hardware, hardware_id) AND list_contains($engines, engine_id)
  AND list_contains($weights_dtypes, weights_dtype) AND list_contains($kv_dtypes, kv_dtype) AND list_contains($tp, tp)
  AND default_batched
