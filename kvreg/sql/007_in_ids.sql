-- in_ids(ids, id): scalar macro, the id filter of the `only_*` parameters (only_models, only_hardware, only_engines):
-- TRUE when ids is NULL (no filter) or id is one of ids — list_contains(ids, id), written so that a ONE-id list (every
-- `kvreg plan`: its engine) becomes the equality id = ids[1] once DuckDB folds the constant list.  An equality on a
-- key is pushed to the tables' scans, where the scans' statistics (min/max of the column) can prove it empty and
-- DuckDB's optimizer drops the whole branch before optimising and running it: a first-principles plan then plans and
-- runs none of capacity_at's engine-admission branch (kvreg plan, llama-3.1-70b 200 users × 32K: capacity_at 1.58 →
-- 0.68 s CPU; benchmarks/README.md "Speed commands").  list_contains alone is opaque to that proof.
-- Inputs: ids VARCHAR[] (or NULL), id VARCHAR.  Result: BOOLEAN; an empty list matches nothing (FALSE).
-- Written as a CASE: DuckDB folds its constant conditions away (an OR of the same three terms was not folded, and the
-- branch was not dropped).
CREATE OR REPLACE MACRO in_ids(ids, id) AS
    CASE WHEN ids IS NULL THEN TRUE WHEN len(ids) = 1 THEN id = ids[1] ELSE list_contains(ids, id) END
