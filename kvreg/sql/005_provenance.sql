-- provenance: one row per number a fact entry states, with the source it rests on.
-- Grain: kind × entry_id × field.  basis: own (the field cites it), shipped-config (re-derived
-- from the model's shipped config.json and equal), default (the entry's field_sources names it),
-- unsourced (a validation problem, so never in a built database).  url/title come from the
-- entry's sources list; source 'shipped-config' is the config.json file beside the entry.
CREATE OR REPLACE VIEW provenance AS
SELECT p.kind, p.entry_id, p.field, p.value, p.source_id, p.basis,
       CASE WHEN p.basis = 'shipped-config' THEN regexp_replace(p.file, '\.ya?ml$', '.config.json')
            ELSE s.url END AS url,
       CASE WHEN p.basis = 'shipped-config' THEN 'config.json shipped beside the entry'
            ELSE s.title END AS title,
       p.confidence, p.confidence_basis, p.note, p.file, p.line
FROM field_provenance p
LEFT JOIN sources s ON s.kind = p.kind AND s.entry_id = p.entry_id AND s.source_id = p.source_id;
