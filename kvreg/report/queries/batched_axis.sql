-- batched_axis: the max_num_batched_tokens settings the report's levers re-admit at (plan_levers_admission,
-- kvreg/sql/284: the batched_tokens axis and the recommendation's own setting, which is a release default — on the
-- axis, kvreg/engine_tables.py — or the report's $max_num_batched_tokens), as one list for scope_engine_capacity.sql.
-- Passed to it as a constant: a subquery in engine_capacity_at's batched_axis keeps DuckDB from folding the macro's
-- `batched_axis IS NULL` tests, and the filters of engine_request_blocks_at (215) then run above its lengths ×
-- settings fan-out (2.35 M rows instead of 0.3 M for the Q4 2026 report, +0.4 s CPU).
-- Grain: one row.  Inputs: batched_tokens; $max_num_batched_tokens (NULL = the release default).
-- Units: tokens.
-- The axis itself is plan_batched_axis (284), the one definition `kvreg plan`'s levers use too.
SELECT axis AS batched_axis FROM plan_batched_axis([$max_num_batched_tokens::BIGINT])
