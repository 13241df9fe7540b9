-- duplicate_throughput_measurement: one published run written twice (in two throughput entries, or twice in one),
-- which the efficiency fit (kvreg/sql/150_throughput_ceilings.sql and after) would count twice, silently.
-- Grain: one row per measurement after the first of its run.  A run is the measurement's source (the URL its
-- output_tok_per_s cites, through field_provenance and sources; the entry and source id where the source has no
-- URL), hardware, engine release, model, weights and KV precision, TP, scenario, input and output lengths,
-- concurrency, request rate and max batch (NULLs equal).  The first is the earliest by file, then line.
-- Inputs: throughput_measurements, field_provenance, sources.
WITH cited AS (
    SELECT t.*, coalesce(s.url, t.source_id || ':' || coalesce(p.source_id, '')) AS run_source
    FROM throughput_measurements t
    LEFT JOIN field_provenance p
           ON p.kind = 'throughput' AND p.entry_id = t.source_id
          AND p.field = format('measurements.{}.output_tok_per_s', t.measurement_idx)
    LEFT JOIN sources s ON s.kind = 'throughput' AND s.entry_id = t.source_id AND s.source_id = p.source_id
)
SELECT file, line, format('measurements.{}', measurement_idx) AS key,
       format('this measurement repeats {}:{} (measurements.{} of {}): same source, hardware, engine, model, '
              'precision, TP, lengths and concurrency, so the fit would count one run twice',
              first_value(file) OVER w, first_value(line) OVER w, first_value(measurement_idx) OVER w,
              first_value(source_id) OVER w) AS message,
       'remove one of the two; if they are different runs (another prompt count, a retry), cite each run''s own '
       'log as its source (field_sources: {run_a: [measurements.0], run_b: [measurements.1]})' AS hint
FROM cited
WINDOW w AS (PARTITION BY run_source, hardware_id, engine_id, model_id, weights_dtype, kv_dtype, tp, scenario,
                          input_tokens, output_tokens, concurrency, request_rate_per_s, max_batch
             ORDER BY file, line)
QUALIFY row_number() OVER w > 1
