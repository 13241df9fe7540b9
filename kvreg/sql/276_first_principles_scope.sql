-- first_principles: a schema of stand-ins for the two engine-release macros `plans` (275) reads, each giving no
-- rows, so that a plan sized on first principles alone (`kvreg plan`'s default engine) is bound without the engine
-- admission chain.  `kvreg plan` puts the schema first on DuckDB's search path for its rankings
-- (kvreg/plan_eval.py plan_settings); every other name still resolves to main's, and the rows are those of main's
-- macros with only_engines := ['first-principles'] (the engine rows are then empty there too: in_ids, 007).
-- Why: DuckDB binds every branch of an inlined macro before its optimizer drops the empty ones, and binding and
-- optimising capacity_at's engine branch (engine_capacity_at, 220) and workload_blocks_at's block layout (272) was
-- about half of such a plan's CPU (kvreg plan, llama-3.1-70b, 200 users × 32K, one ranking: 0.45 → 0.20 s CPU;
-- benchmarks/README.md "Speed commands").
-- Only evaluation changes: no formula here.  tests/test_plan_evaluation.py checks the stand-ins' columns and types
-- against main's and the plans' rows with and without the schema.
CREATE SCHEMA IF NOT EXISTS first_principles;

-- capacity_at's engine rows (245 capacity_engine_rows_at), none: the first-principles rows' columns and types (the
-- two branches of capacity_at's UNION ALL have the same), no row.  The name inside resolves to main's.
CREATE OR REPLACE MACRO first_principles.capacity_engine_rows_at(context_list, gpu_memory_utilization := NULL,
                                                                 max_num_seqs := NULL, max_num_batched_tokens := NULL,
                                                                 enforce_eager := NULL, num_speculative_tokens := NULL,
                                                                 block_size := NULL, only_models := NULL,
                                                                 only_hardware := NULL, only_engines := NULL) AS TABLE
SELECT * FROM capacity_first_principles_rows_at(context_list, gpu_memory_utilization := gpu_memory_utilization,
                                                max_num_seqs := max_num_seqs,
                                                max_num_batched_tokens := max_num_batched_tokens,
                                                enforce_eager := enforce_eager,
                                                num_speculative_tokens := num_speculative_tokens,
                                                only_models := only_models, only_hardware := only_hardware,
                                                only_engines := only_engines)
WHERE FALSE;

-- workload_blocks_at (272), none: plans joins it to engine rows only (pool_basis 'engine'), so a first-principles
-- plan reads no row of it; the columns and types are main's.
CREATE OR REPLACE MACRO first_principles.workload_blocks_at(prefix_tokens, prompt_tokens, block_size := NULL) AS TABLE
SELECT NULL::VARCHAR AS engine_id, NULL::VARCHAR AS model_id, NULL::VARCHAR AS kv_dtype, NULL::BIGINT AS tp,
       NULL::BIGINT AS mla_block_tokens, NULL::BIGINT AS prefix_blocks, NULL::BIGINT AS prompt_blocks
WHERE FALSE;
