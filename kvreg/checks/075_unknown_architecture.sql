-- unknown_architecture: a hardware entry's architecture family that is a mistyping of a known one.  The family is a
-- join key, compared exactly: hardware without throughput measurements of its own borrows its family's fitted
-- efficiency (kvreg/sql/253_speed_efficiency_by_holdout.sql), and the engine rules pick MLA backends, platforms and
-- precisions by it (kvreg/sql/058_engine_support.sql, 200_engine_layer_specs.sql).  `architecture: Hopper` on the
-- H20 matched nothing: its plan efficiency fell from 0.62 derived (the hopper fit) to its stated 0.45, silently.
-- Known families: those two or more hardware entries share, and those the engine rules name (engine_platforms,
-- engine_precision_rules, engine_mla_backend_rules architectures; accounting cudagraph_split_kv_hardware).
-- Flagged: (1) any family with an upper-case letter (the shipped families are lower-case, as the engine rules
-- name them); (2) a family of one entry, named by no rule, one edit (levenshtein) from a known family of 4 or more
-- characters, where the two differ in more than their digits (cdna5 beside cdna4 is a new generation, not a typo).
-- A new family of its own (rubin, say) is accepted: it borrows no fit until it is measured.
-- Grain: one row per such hardware entry.  Inputs: hardware, engine_platforms, engine_precision_rules,
-- engine_mla_backend_rules, engine_accounting.  The hint's {near:architecture:…} lists the nearest families of the
-- other hardware entries (kvreg/suggest.py, kvreg/checks/__init__.py).
WITH named AS (
    SELECT architectures AS a FROM engine_platforms
    UNION ALL SELECT architectures FROM engine_precision_rules
    UNION ALL SELECT architectures FROM engine_mla_backend_rules
    UNION ALL SELECT cudagraph_split_kv_hardware FROM engine_accounting
),
family AS (
    SELECT DISTINCT unnest(string_split(a, ',')) AS family FROM named WHERE a IS NOT NULL AND a <> ''
    UNION
    SELECT architecture FROM hardware WHERE architecture IS NOT NULL GROUP BY architecture HAVING count(*) >= 2
)
SELECT h.file, h.line, 'architecture' AS key,
       format('architecture ''{}'' of {} is not a known family ({}): the speed fit and the engine rules match families '
              'exactly, so {} would borrow no family''s efficiency', h.architecture, h.hardware_id,
              CASE WHEN h.architecture <> lower(h.architecture) THEN 'families are lower-case'
                   ELSE 'one letter from ' || (SELECT string_agg(f.family, ', ' ORDER BY f.family) FROM family f
                                               WHERE levenshtein(h.architecture, f.family) = 1) END,
              h.hardware_id) AS message,
       '{near:architecture:' || h.architecture || '}write the family as the other entries and the engine rules do '
       || '(kvreg sql "SELECT DISTINCT architecture FROM hardware"); a new family is written lower-case' AS hint
FROM hardware h
WHERE h.architecture IS NOT NULL
  AND (h.architecture <> lower(h.architecture)
       OR (h.architecture NOT IN (SELECT family FROM family)
           AND EXISTS (SELECT 1 FROM family f
                       WHERE length(f.family) >= 4 AND levenshtein(h.architecture, f.family) = 1
                         AND regexp_replace(h.architecture, '[0-9.]', '', 'g')
                             <> regexp_replace(f.family, '[0-9.]', '', 'g'))))
ORDER BY h.file
