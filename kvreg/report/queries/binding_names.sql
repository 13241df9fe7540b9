-- binding_names: the plain words for each per-replica limit, written once; plan_options.sql, options.sql and
-- sensitivity.sql join this table (report_binding_names), so the summary table, the options tables and the
-- decision text name a binding the same way.
-- Grain: one row per binding_key.
--   binding_key   'engine' (the sequences the engine release admits, its KV pool and block accounting),
--                 'memory' (first-principles KV pool), 'tpot' (the largest batch whose decode step meets the TPOT)
--   binding_name  the words the report prints
SELECT * FROM (VALUES ('engine', 'KV memory at engine admission'),
                      ('memory', 'KV memory'),
                      ('tpot', 'decode speed (TPOT)')) AS t(binding_key, binding_name)
