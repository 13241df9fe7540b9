-- sources: the sources the report's numbers rest on, generated from the provenance view (kvreg/sql/005: one
-- row per number a fact entry states, with the source it cites), for every model, hardware and engine entry
-- the report lists.  A source an entry lists but no number of it cites is not shown (it backs no figure).
-- Grain: one row per (entry, source the entry's numbers cite); an entry none of whose numbers is in
--   provenance gets one row with NULL source fields.
-- Inputs: report_items, provenance, sources (date, note, list position), models, hardware, engines, hardware_peaks
--   (which peak_flops.<precision> a listed weights precision computes in: only those are the report's figures).
--   source_id   the cited source id; 'shipped-config' for numbers re-derived from the config.json beside a
--               model entry (provenance basis 'shipped-config')
--   basis       the provenance bases of those numbers ('own', 'default', 'shipped-config'), comma-separated
--   fields      the fields that cite it (YAML key paths, file order); n_fields how many
WITH used AS (
    SELECT DISTINCT item_kind AS kind, item_id AS entry_id,
           CASE item_kind WHEN 'model' THEN 1 WHEN 'hardware' THEN 2 ELSE 3 END AS kind_order
    FROM report_items WHERE report_id = $report AND item_kind IN ('model', 'hardware', 'engine')
),
files AS (
    SELECT 'model' AS kind, model_id AS entry_id, file FROM models
    UNION ALL SELECT 'hardware', hardware_id, file FROM hardware
    UNION ALL SELECT 'engine', engine_id, file FROM engines
),
cited AS (
    SELECT p.kind, p.entry_id, coalesce(p.source_id, p.basis) AS source_id,
           string_agg(DISTINCT p.basis, ', ' ORDER BY p.basis) AS basis,
           any_value(p.url) AS url, any_value(p.title) AS title,
           list(p.field ORDER BY p.line, p.field) AS fields, count(*) AS n_fields
    FROM provenance p
    JOIN used u ON u.kind = p.kind AND u.entry_id = p.entry_id
    -- a device's peak at a precision the report never computes in is no figure of this report: the roofs use the
    -- peak at hardware_peaks.compute_dtype of each listed weights precision (120: fp8/fp4 math where native and
    -- stated, else bf16), so rtx-pro-6000's only stated peak, nvfp4, cited a source (topcpu) that no figure of a
    -- bf16/fp8 report reads — an orphan row
    WHERE NOT (p.kind = 'hardware' AND p.field LIKE 'peak_flops.%'
               AND p.field NOT IN (SELECT 'peak_flops.' || hp.compute_dtype
                                   FROM hardware_peaks hp
                                   JOIN (SELECT DISTINCT weights_dtype FROM report_weights
                                         WHERE report_id = $report) w ON w.weights_dtype = hp.weights_dtype
                                   WHERE hp.hardware_id = p.entry_id))
    GROUP BY ALL
)
SELECT u.kind, u.entry_id, f.file, c.source_id, c.basis, c.url, c.title, s.date, s.note, c.fields, c.n_fields,
       CASE WHEN regexp_matches(c.url, '^https?://') THEN c.url END AS link_url
FROM used u
JOIN files f USING (kind, entry_id)
LEFT JOIN cited c ON c.kind = u.kind AND c.entry_id = u.entry_id
LEFT JOIN sources s ON s.kind = c.kind AND s.entry_id = c.entry_id AND s.source_id = c.source_id
ORDER BY u.kind_order, u.entry_id, s.source_idx NULLS LAST, c.source_id
