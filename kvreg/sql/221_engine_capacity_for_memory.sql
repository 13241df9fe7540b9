-- engine_capacity_for_memory(available_kv_bytes, max_model_len, max_num_batched_tokens, block_size := NULL): table
-- macro,
-- the block arithmetic alone for a given "Available KV cache memory" (e.g. read from a startup log),
-- so the engine's accounting can be checked exactly, separately from the reserve estimate.
-- It is engine_capacity_at (220) with that memory given: the same arithmetic, no second copy.
-- Grain: one row per engine × served model × kv_dtype × tp.
-- Units: bytes per device, blocks, tokens, sequences; same columns and rules as engine_capacity
--   (max_num_seqs is the release's small-GPU default; admitted_seqs is capped by it; hardware_id and
--   weights_dtype are NULL: no device); block_size: the --block-size knob (NULL = the release default), as 220.
CREATE OR REPLACE MACRO engine_capacity_for_memory(available_kv_bytes, max_model_len, max_num_batched_tokens,
                                                   block_size := NULL) AS TABLE
SELECT * FROM engine_capacity_at([max_model_len], max_num_batched_tokens := max_num_batched_tokens,
                                 available_kv_bytes := available_kv_bytes, block_size := block_size)
