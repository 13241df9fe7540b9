-- levers: what would change each model's recommendation, from its own numbers (plan_levers, kvreg/sql/284: the
-- runner-up's price at which it wins, the bandwidth efficiency at which the device count or the pick changes, the
-- max_num_batched_tokens settings at which the engine's admission moves the count) — the lines `kvreg plan` prints.
-- Grain: one row per model with a recommendation in report_plans (the report's ranked_plans, scope_plans.sql).
-- Inputs: report_plans; $gpu_memory_utilization, $max_num_seqs, $enforce_eager, $num_speculative_tokens, $block_size:
--   the report's engine settings (NULL = the release's), at which the admission is re-evaluated.
-- Units: as plan_levers (fractions, devices, sequences, tokens, USD per hour).
SELECT * FROM plan_levers('report_plans', gpu_memory_utilization := $gpu_memory_utilization,
                          max_num_seqs := $max_num_seqs, enforce_eager := $enforce_eager,
                          num_speculative_tokens := $num_speculative_tokens, block_size := $block_size)
