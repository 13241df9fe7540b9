-- weights_rank_gap(tp_list, for_engine := NULL): table macro, why an engine's weights per rank differ from first principles': the terms
-- between model_weights.weights_bytes ÷ tp (first principles, the seeds' arithmetic) and model_weights_per_rank's
-- weights_bytes_per_rank (what an engine release loads on one rank, engine_memory_pools' weights_bytes).  `kvreg fit`
-- prints them beside the engine's weights (trial: kimi-linear-48b-a3b fp32 at TP 16, first principles 11.44 GiB,
-- sglang-0.5 11.78 GiB: 0.09 GiB of norms and router gates every rank holds whole + 0.25 GiB of fp32 rotary cos/sin
-- cache).
-- Grain: one row per model × weights_dtype (its default checkpoint, as model_weights) × tp (each distinct positive
--   value of tp_list).
-- Inputs: model_weights (030), model_weights_at (035), engine_accounting (for_engine's rotary-cache dtype and absorbed
--   MLA copy).
-- Units: bytes per rank.
--   first_principles_bytes  model_weights.weights_bytes ÷ tp
--   engine_bytes            weights_bytes_per_rank (035), its rotary caches as for_engine keeps them
--   vocab_padding_bytes     the embedding and LM head rows a rank holds beyond vocab ÷ tp: the vocab padded to 64
--                           rows and split (VocabParallelEmbedding: vLLM vocab_parallel_embedding.py 0.19.0:75, :289;
--                           SGLang 0.5.23 layers/vocab_parallel_embedding.py:48, :57-59, :327)
--   whole_bytes             what every rank holds whole instead of a 1/tp share: norms and MoE router gates
--                           (ReplicatedLinear) and the k/v projections replicated once tp exceeds the KV heads
--                           (QKVParallelLinear num_kv_head_replicas; SGLang layers/linear.py 0.5.23:1140-1145)
--   buffer_bytes            the rotary cos/sin caches, not checkpoint bytes, on every rank (buffers; kvreg/weights.py):
--                           in the model dtype, as vLLM registers them (rotary_embedding/base.py 0.19.0:59-63), or at
--                           for_engine's rope_cache_bytes_per_element where its accounting states one (SGLang 0.5.23
--                           keeps them fp32 on CUDA and HIP, layers/rotary_embedding/base.py 0.5.23:115-120: twice
--                           the bytes for a 16-bit model); engine_buffer_bytes (035), as engine_memory_pools_at
--   mla_absorbed_bytes      the 16-bit copy of a quantized MLA kv_b_proj that for_engine keeps on the rank
--                           (engine_accounting.mla_absorbed_copy; 035 engine_mla_absorbed_bytes: vLLM 0.8.4
--                           v1/attention/backends/mla/common.py:660-709), 0 for no engine
--   tensor_rule_bytes       the rest: the served checkpoint's own tensors at their precisions (16-bit embeddings and
--                           norms, block scales) against parameters × bytes per element (0 for a listed checkpoint)
--   engine_bytes = first_principles_bytes + vocab_padding_bytes + whole_bytes + buffer_bytes + mla_absorbed_bytes
--                  + tensor_rule_bytes.
-- Source: both engines count what the load allocates per rank: vLLM's "Model loading took" (gpu_model_runner.py
--   0.19.0:4821, torch bytes allocated), SGLang's weight_load_mem_usage = free memory before − after load_model
--   (model_executor/model_runner.py 0.5.23:1272, :1364-1365), the memory its KV pool then cannot use
--   (mem_cache/kv_cache_configurator.py 0.5.23:2990-3007 _profile_available_bytes).
CREATE OR REPLACE MACRO weights_rank_gap(tp_list, for_engine := NULL) AS TABLE
WITH rope AS (   -- the release's own rotary-cache dtype, NULL = the model dtype (and for no engine)
    SELECT (SELECT a.rope_cache_bytes_per_element FROM engine_accounting a WHERE a.engine_id = for_engine) AS bpe,
           (SELECT a.mla_absorbed_copy FROM engine_accounting a WHERE a.engine_id = for_engine) AS absorbed
)
SELECT w.model_id, w.weights_dtype, r.tp, w.checkpoint_id,
       w.weights_bytes / r.tp AS first_principles_bytes,
       r.weights_bytes_per_rank - r.buffer_bytes + engine_buffer_bytes(r.buffer_bytes, r.buffer_elements, rope.bpe)
           + engine_mla_absorbed_bytes(r.mla_absorbed_bytes_per_rank, rope.absorbed) AS engine_bytes,
       r.vocab_bytes_per_rank - r.vocab_bytes_total / r.tp AS vocab_padding_bytes,
       (r.sharded_bytes_per_rank - r.sharded_bytes_total / r.tp)
           + (r.replicated_bytes - r.buffer_bytes) * (1 - 1 / r.tp) AS whole_bytes,
       engine_buffer_bytes(r.buffer_bytes, r.buffer_elements, rope.bpe) AS buffer_bytes,
       engine_mla_absorbed_bytes(r.mla_absorbed_bytes_per_rank, rope.absorbed) AS mla_absorbed_bytes,
       (r.vocab_bytes_total + r.sharded_bytes_total + r.replicated_bytes - r.buffer_bytes - w.weights_bytes) / r.tp
           AS tensor_rule_bytes
FROM model_weights w
JOIN model_weights_at(tp_list) r ON r.model_id = w.model_id AND r.checkpoint_id = w.checkpoint_id
CROSS JOIN rope
