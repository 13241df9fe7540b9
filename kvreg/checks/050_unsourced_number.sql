-- A number with no source of its own, not re-derived from a shipped config, and not covered by
-- the entry's field_sources (kvreg/provenance.py): every fact's number must say where it is from.
SELECT file, line, field AS key,
       format('{} {} states {} with no source', kind, entry_id, field) AS message,
       'write it as {value: ..., source: <id>}, or list its key under field_sources: {<source id>: [' ||
       split_part(field, '.', 1) || ']} when the entry''s source gives it' AS hint
FROM field_provenance
WHERE basis = 'unsourced'
ORDER BY file, line
