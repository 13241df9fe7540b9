-- capacity_first_principles_rows_at(<as capacity_at>): table macro, capacity_at's first-principles rows before
-- sizing (the pool and one sequence's bytes; the engine columns NULL); block_size is not read (blocks are the
-- engine rows').  Columns: memory_pools_at's, kv_sequence_costs_at's per-sequence bytes, engine_* (NULL).
CREATE OR REPLACE MACRO capacity_first_principles_rows_at(context_list, gpu_memory_utilization := NULL,
                                                          max_num_seqs := NULL, max_num_batched_tokens := NULL,
                                                          enforce_eager := NULL, num_speculative_tokens := NULL,
                                                          block_size := NULL, only_models := NULL,
                                                          only_hardware := NULL, only_engines := NULL) AS TABLE
-- first-principles rows: the simple budget and the per-kind arithmetic
SELECT p.*, s.kv_dtype, s.context_tokens, s.context_label, s.within_native, s.seq_bytes, s.growing_bytes,
       s.bounded_bytes, s.state_bytes, s.conv_state_bytes, s.naive_seq_bytes,
       NULL::BOOLEAN AS engine_starts, NULL::BOOLEAN AS engine_request_len_capped,
       NULL::BIGINT AS engine_admitted_seqs, NULL::BIGINT AS engine_logged_kv_tokens,
       NULL::BIGINT AS engine_num_blocks, NULL::BIGINT AS engine_blocks_per_request,
       NULL::BIGINT AS engine_running_blocks_per_request,
       NULL::BIGINT AS engine_block_size, NULL::BOOLEAN AS engine_block_size_is_default,
       NULL::BOOLEAN AS engine_mla_block_size_forced, NULL::BIGINT AS engine_mla_block_tokens
FROM memory_pools_at(gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs,
                     max_num_batched_tokens := max_num_batched_tokens, enforce_eager := enforce_eager,
                     num_speculative_tokens := num_speculative_tokens, only_models := only_models,
                     only_hardware := only_hardware, only_engines := only_engines) p
JOIN kv_sequence_costs_at(context_list) s ON s.model_id = p.model_id AND s.tp = p.tp
WHERE p.pool_basis = 'first-principles';

-- capacity_engine_rows_at(<as capacity_at>): table macro, capacity_at's engine-release rows before sizing (the
-- release's pool, its admission from engine_capacity_at), the same columns as
-- capacity_first_principles_rows_at.  A macro of its own so that a plan sized on first principles alone can be
-- bound without it (the first_principles scope, kvreg/sql/276: binding this branch was ~half of a
-- first-principles plan's CPU).
CREATE OR REPLACE MACRO capacity_engine_rows_at(context_list, gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                                max_num_batched_tokens := NULL, enforce_eager := NULL,
                                                num_speculative_tokens := NULL, block_size := NULL, only_models := NULL,
                                                only_hardware := NULL, only_engines := NULL) AS TABLE
-- engine rows: driven by engine_capacity_at (one row per scenario and context), so the large side is
-- probed against the small pool and per-sequence tables instead of joined to a second large table.
-- The scenario keys are e's (equal to p's by the join): a caller's filter on them (the report's lists,
-- a fit's ids) is then pushed into engine_capacity_at's scans; DuckDB does not carry a list_contains
-- filter across a join's equality, so with p's keys it evaluated the whole registry's engine grid
-- (9 million rows for the Q4 2026 report's 3,840) before the join filtered it: 5.9 → 0.7 s.
-- max_num_seqs is the release's cap as engine_capacity_at applies it (SGLang's from its pool, 220 capped)
SELECT p.* REPLACE (e.model_id AS model_id, e.hardware_id AS hardware_id, e.engine_id AS engine_id,
                    e.weights_dtype AS weights_dtype, e.tp AS tp, e.max_num_seqs AS max_num_seqs),
       s.kv_dtype, s.context_tokens, s.context_label, s.within_native, s.seq_bytes, s.growing_bytes,
       s.bounded_bytes, s.state_bytes, s.conv_state_bytes, s.naive_seq_bytes,
       e.starts, e.request_len_capped, e.admitted_seqs, e.logged_kv_tokens, e.num_blocks, e.blocks_per_request,
       e.running_blocks_per_request, e.block_size,
       e.block_size_is_default, e.mla_block_size_forced, e.mla_block_tokens
FROM engine_capacity_at(context_list, gpu_memory_utilization := gpu_memory_utilization,
                        max_num_seqs := max_num_seqs, max_num_batched_tokens := max_num_batched_tokens,
                        enforce_eager := enforce_eager, num_speculative_tokens := num_speculative_tokens,
                        block_size := block_size, only_models := only_models,
                        only_hardware := only_hardware, only_engines := only_engines) e
JOIN memory_pools_at(gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs,
                     max_num_batched_tokens := max_num_batched_tokens, enforce_eager := enforce_eager,
                     num_speculative_tokens := num_speculative_tokens, only_models := only_models,
                     only_hardware := only_hardware, only_engines := only_engines) p
  ON p.pool_basis = 'engine' AND p.engine_id = e.engine_id AND p.model_id = e.model_id
 AND p.hardware_id = e.hardware_id AND p.weights_dtype = e.weights_dtype AND p.tp = e.tp
JOIN kv_sequence_costs_at(context_list) s
  ON s.model_id = e.model_id AND s.kv_dtype = e.kv_dtype AND s.tp = e.tp AND s.context_tokens = e.max_model_len
-- only_engines once more as in_ids (007): one engine id folds to an equality the optimizer can prune this branch
-- with (a first-principles plan), which the list_contains filters inside the macros do not allow
WHERE in_ids(only_engines, e.engine_id);

-- capacity_at(context_list, gpu_memory_utilization := NULL, max_num_seqs := NULL,
--   max_num_batched_tokens := NULL, enforce_eager := NULL, num_speculative_tokens := NULL, block_size := NULL,
--   only_models := NULL, only_hardware := NULL, only_engines := NULL): table macro,
-- how many sequences fit at any context lengths, naive vs first principles vs what the engine admits —
-- the ONE definition of the capacity every per-scenario view plans on; the view capacity is this macro
-- applied to the contexts axis table.  The knobs (NULL = the engine's default) go to memory_pools_at and
-- engine_capacity_at.  only_models / only_hardware / only_engines (VARCHAR[], NULL = all) go to memory_pools_at and
-- engine_capacity_at:
-- the engine rows' pool side is joined by keys, so a caller's filter on them does not reach it (the report passes its
-- lists).
-- One memory model per engine id: for an engine release with accounting rules (pool_basis = 'engine') the
-- pool is the release's available KV memory and max_seqs is the engine's admission (engine_capacity_at:
-- blocks, the start check, max_num_seqs); for first-principles it is floor(pool ÷ seq_bytes).
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp × context (each
--   distinct positive value of context_list, a LIST of token counts).
-- Inputs: the two row sets, capacity_first_principles_rows_at and capacity_engine_rows_at (above: memory_pools_at,
--   kv_sequence_costs_at, engine_capacity_at), sized here.
-- Units: sequences (whole), tokens, bytes per device.
--   first_principles_seqs  floor(pool_bytes / seq_bytes), 0 when nothing fits (the same pool, any engine)
--   max_seqs        the sequences the scenario is sized on: engine_admitted_seqs for pool_basis 'engine',
--                   first_principles_seqs otherwise
--   naive_max_seqs  floor(naive_pool_bytes / naive_seq_bytes)
--   pool_tokens     tokens of context the pool holds: engine rows the release's logged "GPU KV cache size";
--                   first principles pool ÷ seq × s (the definition vLLM ≥0.22 logs)
--   naive_ratio     naive_max_seqs ÷ max_seqs: how far the naive planner over-promises
--   fits            one sequence fits: the engine starts and admits one (engine), pool_bytes ≥ seq_bytes
--                   (first principles)
--   engine_starts   the release starts at this max_model_len (NULL for first principles)
--   engine_request_len_capped  it starts but caps the request length below this context (one request of it does not
--                   fit the pool: SGLang, TensorRT-LLM; engine_capacity_at request_len_capped), so it admits 0
--   max_num_seqs    engine rows: the cap engine_capacity_at applied (the knob, the release's running-requests rule
--                   on its pool, or its default); first principles: memory_pools_at's
--   engine_num_blocks, engine_blocks_per_request, engine_running_blocks_per_request  the release's blocks, one
--                   request's blocks at the context (the start-up figure) and what it holds while it decodes
--                   (engine_capacity_at; NULL for first principles): plans (275) re-admits with a shared prefix from them
--   kv_pool_share   fraction of the claimed memory that is KV pool (the rest weights, reserve, residents)
--   pool_basis and the knob columns: as memory_pools_at
--   block_size, block_size_is_default, mla_block_size_forced  engine rows: the block size set (the --block-size knob,
--                   passed to engine_capacity_at only: it changes blocks, not the pool) as engine_capacity_at; NULL for
--                   first principles
--   mla_block_tokens  engine rows: the device's MLA block (engine_capacity_at; 0 without MLA layers), the key plans
--                   join workload_blocks_at on; NULL for first principles
-- Source: kv-budget-lesson.txt (36 vs 48 sequences), kv-arithmetic-hybrid-attention.txt; engine rows:
--   engine_accounting.md (220).
CREATE OR REPLACE MACRO capacity_at(context_list, gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                    max_num_batched_tokens := NULL, enforce_eager := NULL,
                                    num_speculative_tokens := NULL, block_size := NULL, only_models := NULL,
                                    only_hardware := NULL, only_engines := NULL) AS TABLE
WITH joined AS (
    SELECT * FROM capacity_first_principles_rows_at(context_list, gpu_memory_utilization := gpu_memory_utilization,
                  max_num_seqs := max_num_seqs, max_num_batched_tokens := max_num_batched_tokens,
                  enforce_eager := enforce_eager, num_speculative_tokens := num_speculative_tokens,
                  block_size := block_size, only_models := only_models, only_hardware := only_hardware,
                  only_engines := only_engines)
    UNION ALL
    SELECT * FROM capacity_engine_rows_at(context_list, gpu_memory_utilization := gpu_memory_utilization,
                  max_num_seqs := max_num_seqs, max_num_batched_tokens := max_num_batched_tokens,
                  enforce_eager := enforce_eager, num_speculative_tokens := num_speculative_tokens,
                  block_size := block_size, only_models := only_models, only_hardware := only_hardware,
                  only_engines := only_engines)
),
sized AS (
    SELECT j.*,
           greatest(0, floor(j.pool_bytes / j.seq_bytes))::BIGINT AS first_principles_seqs,
           greatest(0, floor(j.naive_pool_bytes / j.naive_seq_bytes))::BIGINT AS naive_max_seqs,
           greatest(0, floor(j.pool_bytes / j.seq_bytes * j.context_tokens))::BIGINT AS first_principles_tokens,
           CASE WHEN j.pool_basis = 'engine' THEN j.engine_admitted_seqs
                ELSE greatest(0, floor(j.pool_bytes / j.seq_bytes)) END::BIGINT AS max_seqs,
           CASE WHEN j.pool_basis = 'engine' THEN j.engine_logged_kv_tokens
                ELSE greatest(0, floor(j.pool_bytes / j.seq_bytes * j.context_tokens)) END::BIGINT AS pool_tokens,
           CASE WHEN j.pool_basis = 'engine' THEN j.engine_starts AND j.engine_admitted_seqs >= 1
                ELSE j.pool_bytes >= j.seq_bytes END AS fits
    FROM joined j
)
SELECT z.model_id, z.hardware_id, z.engine_id, z.weights_dtype, z.kv_dtype, z.tp,
       z.context_tokens, z.context_label, z.within_native,
       z.usable_bytes, z.claimed_bytes, z.reserve_bytes, z.resident_bytes, z.weights_bytes_per_rank, z.weights_basis,
       z.pool_bytes, z.naive_pool_bytes, z.naive_weights_bytes,
       z.seq_bytes, z.growing_bytes, z.bounded_bytes, z.state_bytes, z.conv_state_bytes, z.naive_seq_bytes,
       z.max_seqs, z.naive_max_seqs, z.pool_tokens,
       z.naive_max_seqs / nullif(z.max_seqs, 0) AS naive_ratio,
       z.fits,
       greatest(0, z.pool_bytes) / z.claimed_bytes AS kv_pool_share,
       z.first_principles_seqs, z.first_principles_tokens, z.engine_starts, z.engine_request_len_capped,
       z.engine_admitted_seqs,
       z.engine_num_blocks, z.engine_blocks_per_request, z.engine_running_blocks_per_request,
       z.pool_basis, z.gpu_memory_utilization, z.util_is_default, z.max_num_seqs, z.max_num_seqs_is_default,
       z.max_num_batched_tokens, z.default_batched, z.enforce_eager, z.num_speculative_tokens,
       z.engine_block_size AS block_size, z.engine_block_size_is_default AS block_size_is_default,
       z.engine_mla_block_size_forced AS mla_block_size_forced, z.engine_mla_block_tokens AS mla_block_tokens
FROM sized z
