-- calibration_summary: calibration error per engine release.
-- Grain: one row per engine release id of the observations (NULL = release not determined).
-- Inputs: calibration.  Units: counts, % of the logged token figure.
--   block_*: (a) block arithmetic from the logged available memory; e2e_*: (b) end to end.
--   median / worst are over |error %| of the reproducible observations with a prediction;
--   not_reproducible counts observations flagged reproducible: false (their notes say which setting is missing).
CREATE OR REPLACE VIEW calibration_summary AS
SELECT engine_id, count(*) AS observations,
       count(*) FILTER (WHERE NOT reproducible) AS not_reproducible,
       count(block_error_pct) FILTER (WHERE reproducible) AS block_checked,
       count(*) FILTER (WHERE block_within_rounding AND reproducible) AS block_within_rounding,
       median(abs(block_error_pct)) FILTER (WHERE reproducible) AS block_median_abs_error_pct,
       max(abs(block_error_pct)) FILTER (WHERE reproducible) AS block_worst_abs_error_pct,
       count(e2e_error_pct) FILTER (WHERE reproducible) AS e2e_checked,
       median(abs(e2e_error_pct)) FILTER (WHERE reproducible) AS e2e_median_abs_error_pct,
       max(abs(e2e_error_pct)) FILTER (WHERE reproducible) AS e2e_worst_abs_error_pct
FROM calibration
GROUP BY engine_id
