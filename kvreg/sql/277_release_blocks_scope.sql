-- release_blocks: a schema of stand-ins for the two block-layout macros at the release's default block size, each
-- reading the rows of its parameterless view (engine_kv_buckets, 201; engine_kv_layout, 202), which a built database
-- holds as tables (kvreg.build.PERSISTED_VIEWS).  `kvreg plan` puts the schema first on DuckDB's search path for an
-- engine-release plan with no --block-size (kvreg/plan_eval.py plan_settings): engine_capacity_at (220),
-- engine_request_blocks_at (215) and workload_blocks_at (272) then read those rows instead of binding, optimising and
-- running the whole layout chain (engine_layer_specs_at, the compressed and packed buckets: every model's layout,
-- ~10,000 rows, computed again inside each plan query before its filters reach it).  Every other name still
-- resolves to main's.
-- Why: an engine-release plan binds the admission chain in its ranking and again in plan_levers' re-admission; the
-- layout chain was most of each (engine_capacity_at for llama-3.1-8b on two devices: 0.45 → 0.13 s CPU;
-- benchmarks/README.md "Speed commands", session 12).
-- Grain, inputs, columns and units: those of engine_kv_buckets_at and engine_kv_layout_at at block_size NULL (the
-- views are those macros at NULL).  Only evaluation changes: no formula here.  A block size other than NULL is an
-- error (the stand-ins hold the default layout only; plan_settings never scopes a plan that sets one).
-- tests/test_plan_evaluation.py checks the stand-ins' rows and types against main's macros and the plans' rows with
-- and without the schema.
CREATE SCHEMA IF NOT EXISTS release_blocks;

-- engine_kv_buckets_at (201) at the release default block size: the rows of the view engine_kv_buckets.
-- The parameter block_size shadows the column of its name: `block_size IS NULL` is the parameter.
CREATE OR REPLACE MACRO release_blocks.engine_kv_buckets_at(block_size := NULL) AS TABLE
SELECT * FROM engine_kv_buckets
WHERE CASE WHEN block_size IS NULL THEN TRUE
           ELSE error('release_blocks.engine_kv_buckets_at holds the release default block size only') END;

-- engine_kv_layout_at (202) at the release default block size: the rows of the view engine_kv_layout.
CREATE OR REPLACE MACRO release_blocks.engine_kv_layout_at(block_size := NULL) AS TABLE
SELECT * FROM engine_kv_layout
WHERE CASE WHEN block_size IS NULL THEN TRUE
           ELSE error('release_blocks.engine_kv_layout_at holds the release default block size only') END;
