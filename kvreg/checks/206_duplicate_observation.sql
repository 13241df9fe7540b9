-- duplicate_observation: one engine startup written twice (a log ingested again under another id, or a copy with
-- one figure edited), which calibration (kvreg/sql/ observation views, `kvreg calibrate`) would count twice, silently.
-- Grain: one row per observation after the first of its startup.  A startup is identified by what one start
-- measured about itself and how it was run, not by the KV pool figures an edit would change: its settings (engine
-- version, model_hf_id, tp, pp, dp, dtype, max_model_len, gpu_memory_utilization, max_num_batched_tokens,
-- max_num_seqs, kv_dtype, weights_dtype, enforce_eager, quantization, draft model, speculative tokens) and its
-- memory figures ("Model loading took", "Available KV cache memory", the device's total memory), NULLs equal; the KV
-- pool figures (num_gpu_blocks, kv_cache_tokens, max_concurrency) join the key only for an observation that logged
-- none of those memory figures (a curated record of the pool lines alone: nothing else tells two starts apart).
-- So a copy whose "GPU KV cache size" was edited is still the same startup (trial16 #7; check 208 reports the edit).
-- The curated model, hardware and engine ids are left out (a copy ingested without --model / --hardware lacks
-- them).  Observations that logged no KV figure are not compared.
-- The first is the earliest by file; related names it (ingest-log reads it).  Inputs: observations.
SELECT file, line, 'logged' AS key,
       -- format() of a NULL is NULL: each figure a log may lack reads "not logged", never an empty message
       format('this observation repeats {}:{} ({}): the same start ({}, {}, {}, {}) and the same settings, so '
              'calibration would count one start twice',
              first_value(file) OVER w, first_value(line) OVER w, first_value(observation_id) OVER w,
              coalesce('available ' || round(available_kv_bytes / 2 ^ 30, 2) || ' GiB', 'available not logged'),
              coalesce(num_gpu_blocks || ' blocks', 'blocks not logged'),
              coalesce(kv_cache_tokens || ' tokens', 'tokens not logged'),
              coalesce('concurrency ' || max_concurrency, 'concurrency not logged')) AS message,
       'remove one of the two; if they are two separate starts that logged the very same figures, keep one: '
       'a rerun that repeats every figure adds nothing to calibration' AS hint,
       first_value(file) OVER w AS related
FROM observations
WHERE available_kv_bytes IS NOT NULL OR num_gpu_blocks IS NOT NULL OR kv_cache_tokens IS NOT NULL
WINDOW w AS (PARTITION BY model_loading_bytes, available_kv_bytes, total_gpu_memory_bytes,
                          -- the pool figures only where no memory figure identifies the start
                          CASE WHEN coalesce(model_loading_bytes, available_kv_bytes, total_gpu_memory_bytes) IS NULL
                               THEN [num_gpu_blocks, kv_cache_tokens, max_concurrency] END,
                          engine_version, lower(model_hf_id), tp, pp, dp, dtype,
                          max_model_len, gpu_memory_utilization, max_num_batched_tokens, max_num_seqs, kv_dtype,
                          weights_dtype, enforce_eager, quantization, draft_model_id, num_speculative_tokens
             ORDER BY file)
QUALIFY row_number() OVER w > 1
