-- levers_core: levers.sql when no model's recommendation is an engine row (kvreg/report/context.py report_levers):
-- plan_levers_core (kvreg/sql/284) without admission rows — there is no configuration to re-admit over the
-- batched_tokens axis, so no batched-tokens lever — the rows plan_levers gives then, without binding the engine
-- admission chain (as `kvreg plan` does, kvreg/plan_levers.py).
-- Grain: one row per model with a recommendation in report_plans (the report's ranked_plans, scope_plans.sql).
-- Inputs: report_plans.
-- Units: as plan_levers (fractions, devices, sequences, tokens, USD per hour).
SELECT * FROM plan_levers_core('report_plans')
