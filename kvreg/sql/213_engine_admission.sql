-- engine_starts(...) and engine_admitted_seqs(...): scalar macros, whether a release starts and how many
-- sequences it then admits; shared by engine_capacity (220) and engine_capacity_for_memory (221).
-- Units: blocks, sequences.
-- Inputs: num_blocks, blocks_per_request, null_block_in_fit_check; starts, concurrency, max_num_seqs.
-- Source (engine_accounting.md §3, §4): startup fails unless one request of max_model_len fits
--   (check_enough_kv_cache_memory); the null block (block 0) is left out of that check where the
--   release subtracts it; admission is floor(concurrency) capped by max_num_seqs.
CREATE OR REPLACE MACRO engine_starts(num_blocks, blocks_per_request, null_block_in_fit_check) AS
    num_blocks - CASE WHEN null_block_in_fit_check THEN 1 ELSE 0 END >= blocks_per_request;

CREATE OR REPLACE MACRO engine_admitted_seqs(starts, concurrency, max_num_seqs) AS
    CASE WHEN starts THEN least(floor(concurrency), max_num_seqs) ELSE 0 END::BIGINT;
