-- report_block_size: a report's engine_settings.block_size that a listed engine release does not accept
-- (engine_accounting.block_sizes, read from each release's code; NULL = kvreg does not model the knob there).
-- The block macros give no rows for such a release, so the report would silently lose its engine figures.
-- Grain: one row per report × listed engine with accounting that refuses the value.
-- Inputs: report_workloads, report_items, engine_accounting.  Engines without accounting (first-principles,
--   unpaged) do not use the knob and are not checked.
SELECT w.file, w.block_size_line AS line, 'engine_settings.block_size' AS key,
       format('report sets block_size {} but engine {} {}', w.block_size, i.item_id,
              CASE WHEN a.block_sizes IS NULL THEN 'has no block-size knob in kvreg'
                   ELSE 'does not accept it' END) AS message,
       CASE WHEN a.block_sizes IS NULL THEN 'only vLLM releases model --block-size; leave it unset or drop the engine'
            ELSE 'allowed for ' || i.item_id || ': ' || replace(a.block_sizes, ',', ', ') || ' tokens' END AS hint
FROM report_workloads w
JOIN report_items i ON i.report_id = w.report_id AND i.item_kind = 'engine'
JOIN engine_accounting a ON a.engine_id = i.item_id
WHERE w.block_size IS NOT NULL
  AND (a.block_sizes IS NULL
       OR NOT list_contains(list_transform(string_split(a.block_sizes, ','), lambda x: x::BIGINT), w.block_size))
ORDER BY w.file, w.block_size_line, i.item_idx
