-- calibration_summary: calibration error per engine release and over all releases.
-- Grain: one row per engine release id of the observations (NULL engine_id with overall = false:
--   release not determined), plus one row with overall = true (every observation).
-- Inputs: calibration.  Units: counts; % of the logged figure; bytes (rendered as GiB by kvreg calibrate).
--   block_*: (a) block arithmetic from the logged available memory; e2e_*: (b) end to end.
--   *_median_abs_* / *_worst_abs_*: median and maximum of |error| over the reproducible observations
--   with that figure (tokens %, concurrency %, bytes for available memory and each budget line);
--   not_reproducible counts observations flagged reproducible: false (their notes say which setting is missing).
CREATE OR REPLACE VIEW calibration_summary AS
SELECT engine_id, grouping(engine_id) = 1 AS overall, count(*) AS observations,
       count(*) FILTER (WHERE NOT reproducible) AS not_reproducible,
       count(block_error_pct) FILTER (WHERE reproducible) AS block_checked,
       count(*) FILTER (WHERE block_within_rounding AND reproducible) AS block_within_rounding,
       median(abs(block_error_pct)) FILTER (WHERE reproducible) AS block_median_abs_error_pct,
       max(abs(block_error_pct)) FILTER (WHERE reproducible) AS block_worst_abs_error_pct,
       median(abs(block_concurrency_error_pct)) FILTER (WHERE reproducible) AS block_concurrency_median_abs_error_pct,
       max(abs(block_concurrency_error_pct)) FILTER (WHERE reproducible) AS block_concurrency_worst_abs_error_pct,
       count(e2e_error_pct) FILTER (WHERE reproducible) AS e2e_checked,
       median(abs(e2e_error_pct)) FILTER (WHERE reproducible) AS e2e_median_abs_error_pct,
       max(abs(e2e_error_pct)) FILTER (WHERE reproducible) AS e2e_worst_abs_error_pct,
       median(abs(e2e_concurrency_error_pct)) FILTER (WHERE reproducible) AS e2e_concurrency_median_abs_error_pct,
       max(abs(e2e_concurrency_error_pct)) FILTER (WHERE reproducible) AS e2e_concurrency_worst_abs_error_pct,
       count(e2e_available_error_bytes) FILTER (WHERE reproducible) AS available_checked,
       median(abs(e2e_available_error_bytes)) FILTER (WHERE reproducible) AS available_median_abs_error_bytes,
       max(abs(e2e_available_error_bytes)) FILTER (WHERE reproducible) AS available_worst_abs_error_bytes,
       median(abs(requested_error_bytes)) FILTER (WHERE reproducible) AS requested_median_abs_error_bytes,
       median(abs(weights_error_bytes)) FILTER (WHERE reproducible) AS weights_median_abs_error_bytes,
       max(abs(weights_error_bytes)) FILTER (WHERE reproducible) AS weights_worst_abs_error_bytes,
       median(abs(activation_error_bytes)) FILTER (WHERE reproducible) AS activation_median_abs_error_bytes,
       max(abs(activation_error_bytes)) FILTER (WHERE reproducible) AS activation_worst_abs_error_bytes,
       median(abs(non_torch_error_bytes)) FILTER (WHERE reproducible) AS non_torch_median_abs_error_bytes,
       max(abs(non_torch_error_bytes)) FILTER (WHERE reproducible) AS non_torch_worst_abs_error_bytes,
       median(abs(cuda_graph_error_bytes)) FILTER (WHERE reproducible) AS cuda_graph_median_abs_error_bytes,
       max(abs(cuda_graph_error_bytes)) FILTER (WHERE reproducible) AS cuda_graph_worst_abs_error_bytes,
       count(cuda_graph_estimate_error_bytes) FILTER (WHERE reproducible) AS cuda_graph_estimate_checked,
       median(abs(cuda_graph_estimate_error_bytes)) FILTER (WHERE reproducible) AS cuda_graph_estimate_median_abs_error_bytes,
       max(abs(cuda_graph_estimate_error_bytes)) FILTER (WHERE reproducible) AS cuda_graph_estimate_worst_abs_error_bytes,
       median(abs(non_kv_error_bytes)) FILTER (WHERE reproducible) AS non_kv_median_abs_error_bytes,
       max(abs(non_kv_error_bytes)) FILTER (WHERE reproducible) AS non_kv_worst_abs_error_bytes
FROM calibration
GROUP BY GROUPING SETS ((engine_id), ())
