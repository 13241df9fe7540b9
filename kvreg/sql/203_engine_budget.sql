-- Engine budget: scalar macros for the two rules every engine figure shares — which release defaults a
-- device gets, and how the KV memory follows from the claim, the weights and the reserve.  Written once
-- here; engine_memory_pools_at (205) and the calibration (230) both call them.
-- Units: bytes per device (per TP rank); util is a fraction.

-- Does a release give this device its large-GPU defaults?  vLLM's get_batch_defaults (engine/arg_utils.py
-- 0.19.0: larger max_num_batched_tokens / max_num_seqs from a device-memory threshold), except the device
-- ids the release names (large_gpu_excludes, comma-separated id prefixes).
CREATE OR REPLACE MACRO engine_large_gpu(large_gpu_min_bytes, large_gpu_excludes, usable_bytes, hardware_id) AS
    large_gpu_min_bytes IS NOT NULL AND usable_bytes >= large_gpu_min_bytes
    AND NOT coalesce(list_bool_or(list_transform(string_split(coalesce(large_gpu_excludes, ''), ','),
                                                 lambda x: x <> '' AND starts_with(hardware_id, x))), false);

-- Predicted "Available KV cache memory" by the release's util_basis (engine_accounting.md):
--   total:            usable·util − weights − reserve                          (vLLM §1: requested_memory − non_kv)
--   free:             (usable − weights − reserve)·util                        (TRT-LLM §9: fraction of free memory)
--   free_before_load: (usable − non_torch)·util − weights − (reserve − non_torch) (SGLang §8: mem_fraction_static
--                     of the memory free before the weights load, the non-torch part already taken)
CREATE OR REPLACE MACRO engine_available_kv_bytes(util_basis, usable_bytes, util, weights_bytes_per_rank, reserve_bytes,
                                                  non_torch_bytes) AS
    CASE util_basis
         WHEN 'total' THEN usable_bytes * util - weights_bytes_per_rank - reserve_bytes
         WHEN 'free' THEN (usable_bytes - weights_bytes_per_rank - reserve_bytes) * util
         WHEN 'free_before_load' THEN (usable_bytes - non_torch_bytes) * util - weights_bytes_per_rank
                                      - (reserve_bytes - non_torch_bytes) END;

-- The default gpu_memory_utilization of a release that derives it from the device (SGLang's mem_fraction_static:
-- ServerArgs._handle_gpu_memory_settings, python/sglang/srt/server_args.py 0.5.x; engine_accounting.md §8;
-- registry accounting.mem_fraction_rule):
--   reserved = base + per_prefill_token · max(chunked_prefill_size, min_prefill_tokens) + per_graph_batch · cuda_graph_max_bs
--              + per_rank · tp   (pp = 1), then max(reserved, floor) on devices of more than floor_above;
--   round((gpu_mem − reserved) ÷ gpu_mem, decimals).  Bytes in, a fraction out; NULL where the release has no rule.
CREATE OR REPLACE MACRO engine_mem_fraction(gpu_mem_bytes, chunked_prefill_tokens, cuda_graph_max_bs, tp, base_bytes,
                                            per_prefill_token_bytes, min_prefill_tokens, per_graph_batch_bytes,
                                            per_rank_bytes, floor_bytes, floor_above_bytes, decimals) AS
    round((gpu_mem_bytes
           - greatest(base_bytes + per_prefill_token_bytes * greatest(chunked_prefill_tokens, min_prefill_tokens)
                      + per_graph_batch_bytes * cuda_graph_max_bs + per_rank_bytes * tp,
                      CASE WHEN gpu_mem_bytes > floor_above_bytes THEN floor_bytes ELSE 0 END)) / gpu_mem_bytes, decimals::INTEGER);
