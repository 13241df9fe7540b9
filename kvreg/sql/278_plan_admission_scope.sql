-- plan_admission: a schema holding a stand-in for engine_capacity_at (220) that reads the admission rows `kvreg plan`
-- computed once for its workload, so that its ranking (plans 275 → capacity_at 245) and plan_levers' re-admission
-- over the batched-tokens axis (284) read ONE admission table instead of each binding and running the engine
-- admission chain.  `kvreg plan` (kvreg/plan_eval.py plan_settings) fills the temp table plan_admission_rows with
-- engine_capacity_at at the plan's context, knobs, model, devices and engine over the batched_tokens axis and any
-- max_num_batched_tokens given (the ranking's setting is one point of the levers' axis), then puts this schema first
-- on DuckDB's search path for the ranking; every other name still resolves to main's.
-- Grain, columns, units: engine_capacity_at's, the rows of plan_admission_rows at the call's arguments: the one
--   max_num_batched_tokens given, else each device's release default (default_batched, as engine_capacity_at gives
--   with the knob unset: the pool and blocks at that setting are the same rows, 205 set_knobs), the contexts and ids
--   listed, and only rows made at the knobs asked for (each knob given equals the row's setting, an unset one is the
--   row's release default), so a table made at other settings gives no rows, never another number.
-- Only evaluation changes: no formula here.  A given available_kv_bytes or batched_axis is an error (a plan passes
-- neither to capacity_at).  tests/test_plan_evaluation.py checks the plans' rows with and without the schema.
-- The table is named by the stand-in's last parameter, admission_rows (default 'plan_admission_rows', which no caller
-- passes), read through query_table: DuckDB binds a macro's body when it is created, and a temp table made at plan
-- time does not exist then; a table named by a parameter is resolved at each call only.
CREATE SCHEMA IF NOT EXISTS plan_admission;

-- Every column reference is qualified: a macro parameter shadows an unqualified column of its name.
CREATE OR REPLACE MACRO plan_admission.engine_capacity_at(context_list, max_num_batched_tokens := NULL,
                                                          gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                                          enforce_eager := NULL, num_speculative_tokens := NULL,
                                                          available_kv_bytes := NULL, batched_axis := NULL,
                                                          block_size := NULL, only_models := NULL,
                                                          only_hardware := NULL, only_engines := NULL,
                                                          admission_rows := 'plan_admission_rows') AS TABLE
SELECT a.* FROM query_table(admission_rows) a
WHERE CASE WHEN available_kv_bytes IS NULL AND batched_axis IS NULL THEN TRUE
           ELSE error('plan_admission.engine_capacity_at answers a plan''s call only (no available_kv_bytes, no'
                      || ' batched_axis)') END
  AND CASE WHEN max_num_batched_tokens IS NULL THEN a.default_batched
           ELSE a.max_num_batched_tokens = max_num_batched_tokens END
  AND CASE WHEN gpu_memory_utilization IS NULL THEN a.util_is_default
           ELSE a.gpu_memory_utilization = gpu_memory_utilization END
  AND CASE WHEN max_num_seqs IS NULL THEN a.max_num_seqs_is_default ELSE a.max_num_seqs = max_num_seqs END
  AND a.enforce_eager = coalesce(enforce_eager, FALSE)
  AND a.num_speculative_tokens IS NOT DISTINCT FROM num_speculative_tokens
  AND CASE WHEN block_size IS NULL THEN a.block_size_is_default ELSE a.block_size = block_size END
  AND list_contains(context_list, a.max_model_len)
  AND in_ids(only_models, a.model_id) AND in_ids(only_hardware, a.hardware_id) AND in_ids(only_engines, a.engine_id);

-- capacity_at's first-principles rows (245 capacity_first_principles_rows_at), none: a plan ranked in this scope is
-- an engine release's (only_engines names that release alone), whose capacity_at has no first-principles row
-- (memory_pools_at gives pool_basis 'first-principles' to the first-principles engine only), so its ranking is bound
-- without that branch's pools and per-sequence costs (~0.1 s CPU of a ~0.4 s ranking).  The columns and types are
-- main's, kept in the empty table plan_admission.first_principles_none made here at the build.
CREATE OR REPLACE TABLE plan_admission.first_principles_none AS
SELECT * FROM capacity_first_principles_rows_at([1]) LIMIT 0;

CREATE OR REPLACE MACRO plan_admission.capacity_first_principles_rows_at(context_list, gpu_memory_utilization := NULL,
                                                                         max_num_seqs := NULL,
                                                                         max_num_batched_tokens := NULL,
                                                                         enforce_eager := NULL,
                                                                         num_speculative_tokens := NULL,
                                                                         block_size := NULL, only_models := NULL,
                                                                         only_hardware := NULL,
                                                                         only_engines := NULL) AS TABLE
SELECT * FROM plan_admission.first_principles_none;
