-- calibration: each observed engine startup beside kvreg's prediction, with the error.
-- Grain: one row per observation (registry/observations).
-- Inputs: observation_engine (229: each observation with its release's rules, KV layout and request blocks),
--   observation_weights, engine_memory_pools; scalar macros engine_concurrency, engine_logged_tokens.
-- Units: bytes per device, blocks, tokens, % (error ÷ logged × 100).
--   logged_tokens          "GPU KV cache size" as logged (V0: # GPU blocks × block size)
--   (a) block arithmetic from the logged available memory (exact up to print rounding):
--     block_tokens         predicted tokens at the printed value
--     block_tokens_low/high predicted tokens at printed value ∓ half a unit of its last decimal
--                          ("51.63 GiB" is anything in [51.625, 51.635) GiB; the release's
--                          available_log_decimals wins: "6.9" from format_gib means 6.90)
--     block_within_rounding logged_tokens lies in [low, high]
--     block_concurrency    predicted "Maximum concurrency" at the printed value (unrounded)
--     block_error_tokens / block_error_pct  block_tokens − logged_tokens, and ÷ logged_tokens × 100
--     implied_num_blocks / implied_concurrency  blocks implied by the logged tokens (where the
--                          release's token rule inverts) and the concurrency they give: checks the
--                          per-request block formula (e.g. sliding windows) without the memory figure
--     block_concurrency_error_pct  block_concurrency − logged "Maximum concurrency", ÷ logged × 100
--   (b) end to end from hardware, registry weights and util (obs setting or release default):
--     e2e_available_kv_bytes, e2e_tokens, e2e_error_tokens, e2e_error_pct, e2e_concurrency,
--     e2e_concurrency_error_pct, e2e_available_error_bytes (predicted − logged available memory)
--     e2e_cuda_graph_bytes    the CUDA graphs the release subtracts at the observation's max_num_seqs / enforce_eager
--     e2e_cuda_graph_estimate_bytes  vLLM's CUDA-graph estimate modelled there (204 engine_cudagraph_bytes; NULL for
--                             releases without a cudagraph_profile), subtracted or not
--   each budget line the log prints, predicted − logged, bytes (NULL where the log is silent):
--     requested_error_bytes   usable × util − "worker requested memory" (the hardware entry's usable bytes)
--     weights_error_bytes     weights ÷ pp − "weights memory" / "Model loading took"
--     activation_error_bytes  max(activation, sampler × max_num_seqs) − "torch peak memory increase"
--     non_torch_error_bytes   non_torch − "non-torch forward increase memory"
--     cuda_graph_error_bytes  the CUDA-graph reserve − the graph memory taken ("CUDA graph pool memory
--                             (actual)" / "Graph capturing ... took"); a release that does not subtract
--                             graphs before sizing the pool (vLLM ≤ 0.19 by default) budgets 0 here
--     cuda_graph_estimate_error_bytes  e2e_cuda_graph_estimate_bytes − "Estimated CUDA graph memory: X GiB total"
--                             (the estimate itself, printed from 0.19 whether or not the release subtracts it)
--     non_kv_error_bytes      weights + reserve − "Total non KV cache memory"
-- Rules: pipeline parallel stages hold ceil(layers / pp) layers and weights ÷ pp (single-group
--   layouts only; engine_accounting.md §7); enforce_eager drops the CUDA-graph estimate; kv_dtype defaults to bf16 ('auto' = model dtype);
--   weights_dtype defaults to the model's dtype unless a quantization is logged (then it must be stated); the weights are
--   the served checkpoint's (observation_weights: by model_hf_id, else the default at weights_dtype); an observation whose
--   model, engine or hardware is not in the registry gets NULL predictions and says which in `missing`.
CREATE OR REPLACE VIEW calibration AS
WITH o AS (SELECT * FROM observation_engine),
e2e AS (
    SELECT o.observation_id, p.usable_bytes, coalesce(o.gpu_memory_utilization, p.gpu_memory_utilization) AS util,
           -- the checkpoint the log served (observation_weights, 036: matched by hf_id, else the default at
           -- the logged precision) plus any draft model's share; the pool's own weights where none is known
           coalesce(w.weights_bytes_per_rank + p.draft_weights_bytes / o.pp, p.weights_bytes_per_rank / o.pp) AS weights_bytes_per_rank,
           -- the release's reserve (204) at the observation's max_num_seqs and enforce_eager
           engine_reserve_bytes(p.non_torch_bytes, p.torch_workspace_bytes, p.moe_workspace_bytes, p.activation_bytes,
                                engine_sampler_peak_bytes(coalesce(o.max_num_seqs, o.default_seqs), p.vocab_size,
                                                          p.sampler_bytes_per_seq_vocab, p.sampler_buffer_rows,
                                                          p.max_num_batched_tokens, p.hidden_size, p.act_bytes,
                                                          p.profile_hidden_kept),
                                cg.subtracted_bytes, o.enforce_eager) AS reserve_bytes,
           -- the same terms as the log's budget lines: non-torch; the torch peak increase (workspaces + the
           -- larger dummy run); the CUDA graphs the release subtracts
           p.non_torch_bytes AS e2e_non_torch_bytes,
           p.torch_workspace_bytes + p.moe_workspace_bytes
               + greatest(p.activation_bytes,
                          engine_sampler_peak_bytes(coalesce(o.max_num_seqs, o.default_seqs), p.vocab_size,
                                                    p.sampler_bytes_per_seq_vocab, p.sampler_buffer_rows,
                                                    p.max_num_batched_tokens, p.hidden_size, p.act_bytes,
                                                    p.profile_hidden_kept)) AS e2e_activation_bytes,
           CASE WHEN coalesce(o.enforce_eager, false) THEN 0 ELSE cg.subtracted_bytes END AS e2e_cuda_graph_bytes,
           cg.estimate_bytes AS e2e_cuda_graph_estimate_bytes,
           p.util_basis
    FROM o
    JOIN engine_memory_pools p ON p.engine_id = o.engine_id AND p.model_id = o.served_id AND p.hardware_id = o.hardware_id
                              AND p.weights_dtype = o.wdtype AND p.tp = o.tp
                              AND p.max_num_batched_tokens = coalesce(o.max_num_batched_tokens, o.default_T)
    LEFT JOIN observation_weights w ON w.observation_id = o.observation_id,
    -- the CUDA-graph estimate (204 engine_cudagraph_bytes) at the observation's max_num_seqs and enforce_eager; what
    -- the release subtracts: that estimate where it does (≥ 0.20), else the flat figure
    LATERAL (SELECT e.estimate_bytes,
                    CASE WHEN p.cudagraph_profiled AND p.cudagraph_subtracted THEN e.estimate_bytes
                         ELSE p.cudagraph_bytes END AS subtracted_bytes
             FROM (SELECT CASE WHEN p.cudagraph_profiled THEN engine_cudagraph_bytes(
                          engine_cudagraph_capture_sizes(coalesce(o.max_num_seqs, o.default_seqs), p.cudagraph_num_spec,
                                                         p.max_num_batched_tokens, p.cudagraph_max_capture_size,
                                                         p.cudagraph_append_max_num_seqs, o.enforce_eager),
                          coalesce(o.max_num_seqs, o.default_seqs), p.cudagraph_num_spec, p.cudagraph_first_fixed_bytes,
                          p.cudagraph_forward_bytes_per_token, p.cudagraph_split_kv_bytes_per_token,
                          p.cudagraph_per_graph_piecewise_bytes, p.cudagraph_per_graph_full_bytes) END AS estimate_bytes) e) cg
),
e2e_avail AS (
    SELECT observation_id, usable_bytes, util, weights_bytes_per_rank, reserve_bytes, e2e_non_torch_bytes,
           e2e_activation_bytes, e2e_cuda_graph_bytes, e2e_cuda_graph_estimate_bytes, util_basis,
           engine_available_kv_bytes(util_basis, usable_bytes, util, weights_bytes_per_rank, reserve_bytes,
                                     e2e_non_torch_bytes) AS e2e_available_kv_bytes
    FROM e2e
),
blocks AS (
    SELECT o.*,
           e.usable_bytes, e.util, e.weights_bytes_per_rank, e.reserve_bytes, e.e2e_available_kv_bytes,
           e.e2e_non_torch_bytes, e.e2e_activation_bytes, e.e2e_cuda_graph_bytes, e.e2e_cuda_graph_estimate_bytes,
           e.util_basis,
           coalesce(o.kv_cache_tokens, o.num_gpu_blocks * o.block_size_tokens) AS logged_tokens,
           o.available_half_unit_bytes AS half_unit_bytes,
           floor(o.available_kv_bytes / o.block_bytes)::BIGINT AS nb_mid,
           o.available_blocks_low AS nb_low, o.available_blocks_high AS nb_high,
           CASE WHEN e.e2e_available_kv_bytes >= 0 THEN floor(e.e2e_available_kv_bytes / o.block_bytes)
                WHEN e.e2e_available_kv_bytes < 0 THEN 0 END::BIGINT AS nb_e2e,
           -- blocks implied by the logged figures (229): the block count where the release prints it with the tokens
           CASE WHEN o.logged_tokens_rule = 'blocks_x_block_size' THEN coalesce(o.num_gpu_blocks, o.tokens_implied_blocks)
                ELSE o.tokens_implied_blocks END AS nb_implied
    FROM o LEFT JOIN e2e_avail e USING (observation_id)
),
pred AS (
    SELECT *,
           engine_concurrency(nb_mid, concurrency_blocks_per_request, block_size_tokens, L, concurrency_rule) AS block_concurrency,
           engine_logged_tokens(nb_mid, num_groups, block_size_tokens,
                                engine_concurrency(nb_mid, concurrency_blocks_per_request, block_size_tokens, L, concurrency_rule),
                                L, logged_tokens_rule) AS block_tokens,
           engine_logged_tokens(nb_low, num_groups, block_size_tokens,
                                engine_concurrency(nb_low, concurrency_blocks_per_request, block_size_tokens, L, concurrency_rule),
                                L, logged_tokens_rule) AS block_tokens_low,
           engine_logged_tokens(nb_high, num_groups, block_size_tokens,
                                engine_concurrency(nb_high, concurrency_blocks_per_request, block_size_tokens, L, concurrency_rule),
                                L, logged_tokens_rule) AS block_tokens_high,
           engine_logged_tokens(nb_e2e, num_groups, block_size_tokens,
                                engine_concurrency(nb_e2e, concurrency_blocks_per_request, block_size_tokens, L, concurrency_rule),
                                L, logged_tokens_rule) AS e2e_tokens,
           engine_concurrency(nb_e2e, concurrency_blocks_per_request, block_size_tokens, L, concurrency_rule) AS e2e_concurrency,
           engine_concurrency(nb_implied, concurrency_blocks_per_request, block_size_tokens, L, concurrency_rule)
               AS implied_concurrency
    FROM blocks
)
SELECT observation_id, engine_id, engine_version, model_id, served_id, hardware_id, tp, pp, kv AS kv_dtype,
       wdtype AS weights_dtype, L AS max_model_len, reproducible, source_url,
       concat_ws(', ', CASE WHEN model_id IS NULL THEN 'model unknown'
                            WHEN NOT model_known THEN 'model ' || model_id || ' not in registry' END,
                       CASE WHEN NOT engine_known THEN 'engine release unknown' END,
                       CASE WHEN L IS NULL THEN 'max_model_len unknown' END,
                       CASE WHEN NOT hardware_known THEN 'hardware unknown' END,
                       CASE WHEN wdtype IS NULL AND quantization IS NOT NULL
                            THEN 'weights dtype unknown (quantization ' || quantization || ')' END,
                       CASE WHEN NOT reproducible THEN split_part(notes, ' — ', 1) END) AS missing,
       logged_tokens, max_concurrency AS logged_concurrency, available_kv_bytes AS logged_available_kv_bytes,
       started AS logged_started,
       layout_mode, num_groups, block_size_tokens, block_bytes, blocks_per_request,
       nb_mid AS block_num_blocks, block_tokens, block_tokens_low, block_tokens_high,
       logged_tokens BETWEEN block_tokens_low AND block_tokens_high AS block_within_rounding,
       block_concurrency, nb_implied AS implied_num_blocks, implied_concurrency,
       block_tokens - logged_tokens AS block_error_tokens,
       100.0 * (block_tokens - logged_tokens) / nullif(logged_tokens, 0) AS block_error_pct,
       usable_bytes, util AS gpu_memory_utilization, weights_bytes_per_rank, reserve_bytes, e2e_available_kv_bytes,
       e2e_available_kv_bytes - available_kv_bytes AS e2e_available_error_bytes,
       e2e_tokens, e2e_concurrency,
       e2e_tokens - logged_tokens AS e2e_error_tokens,
       100.0 * (e2e_tokens - logged_tokens) / nullif(logged_tokens, 0) AS e2e_error_pct,
       100.0 * (block_concurrency - max_concurrency) / nullif(max_concurrency, 0) AS block_concurrency_error_pct,
       100.0 * (e2e_concurrency - max_concurrency) / nullif(max_concurrency, 0) AS e2e_concurrency_error_pct,
       requested_bytes AS logged_requested_bytes, logged_weights_bytes, logged_activation_bytes,
       logged_non_torch_bytes, logged_cuda_graph_bytes, logged_cuda_graph_estimated_bytes, logged_non_kv_bytes,
       e2e_activation_bytes, e2e_non_torch_bytes, e2e_cuda_graph_bytes, e2e_cuda_graph_estimate_bytes,
       CASE WHEN util_basis = 'total' THEN usable_bytes * util END - requested_bytes AS requested_error_bytes,
       weights_bytes_per_rank - logged_weights_bytes AS weights_error_bytes,
       e2e_activation_bytes - logged_activation_bytes AS activation_error_bytes,
       e2e_non_torch_bytes - logged_non_torch_bytes AS non_torch_error_bytes,
       e2e_cuda_graph_bytes - logged_cuda_graph_bytes AS cuda_graph_error_bytes,
       e2e_cuda_graph_estimate_bytes - logged_cuda_graph_estimated_bytes AS cuda_graph_estimate_error_bytes,
       weights_bytes_per_rank + reserve_bytes - logged_non_kv_bytes AS non_kv_error_bytes,
       e2e_available_kv_bytes >= 0 AND nb_e2e >= blocks_per_request AS e2e_starts
FROM pred
