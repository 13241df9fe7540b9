-- model_weights_at(tp_list): table macro, the weight bytes one tensor-parallel rank holds — the ONE
-- definition of the per-rank split; the view model_weights_per_rank applies it to the tp_sizes axis.
-- Grain: one row per model × checkpoint (every listed one and each generic one) × tp (each distinct
--   positive value of tp_list).
-- Inputs: checkpoints, checkpoint_tensors, models.
-- Units: bytes per rank, except the *_total columns (whole model).  What vLLM 0.19.0 logs as "Model
--   loading took X GiB" (gpu_model_runner.py:4821: torch bytes allocated while loading, parameters
--   plus buffers, per rank) is weights_bytes_per_rank.
--   vocab_bytes_per_rank      embed + lm_head: vocab padded to 64, ÷ tp rows (VocabParallelEmbedding,
--                             vocab_parallel_embedding.py:75 pad_vocab_size, :289 per partition)
--   sharded_bytes_per_rank    split groups × max(1/tp, 1/parts): attention q/o over heads, k/v over KV
--                             heads and replicated once tp exceeds them (QKVParallelLinear), MLP, experts,
--                             recurrent mixers, towers ÷ tp.  With measured checkpoint bytes, the split
--                             groups are scaled so the whole model equals the measurement
--                             (measured − vocab − replicated, the rule only splitting it)
--   replicated_bytes          norms, MoE router gates (ReplicatedLinear) and buffers (rotary cos/sin
--                             cache), on every rank
--   buffer_bytes, buffer_elements  the rotary cos/sin caches (part of replicated_bytes), in bytes at the
--                             checkpoint's buffer dtype and in elements (an engine that keeps them in another
--                             dtype prices them with engine_buffer_bytes below)
--   weights_bytes_per_rank    vocab + sharded + replicated
--   mla_absorbed_bytes_per_rank  a 16-bit copy of this rank's share of a QUANTIZED MLA kv_b_proj (parts kv_b.*:
--                             kvreg/weights.py): its elements × max(1/tp, 1/heads) × 2 bytes (the bf16/fp16 activation
--                             dtype); 0 for an unquantized kv_b_proj (the engine only views it).  Not in
--                             weights_bytes_per_rank: an engine release adds it where its accounting says it keeps the
--                             copy (engine_accounting.mla_absorbed_copy; engine_mla_absorbed_bytes below)
--   basis                     'measured' (checkpoint bytes given) or 'rule' (per-tensor rule only)
-- Source: kvreg/weights.py (tensor groups, vLLM 0.19.0 file:line); checked against the 18 vLLM 0.19.0
--   H100 "Model loading took" figures (tests/test_checkpoints.py).
CREATE OR REPLACE MACRO model_weights_at(tp_list) AS TABLE
WITH tps AS (
    SELECT DISTINCT t::BIGINT AS tp FROM (SELECT unnest(tp_list) AS t) WHERE t IS NOT NULL AND t > 0
),
totals AS (
    SELECT model_id, checkpoint_id,
           sum(CASE WHEN shard = 'split' THEN bytes ELSE 0 END) AS split_total,
           sum(CASE WHEN shard = 'vocab' THEN bytes ELSE 0 END) AS vocab_total,
           sum(CASE WHEN shard = 'replicated' THEN bytes ELSE 0 END) AS replicated_bytes,
           sum(CASE WHEN tensor_group = 'buffers' THEN bytes ELSE 0 END) AS buffer_bytes,
           sum(CASE WHEN tensor_group = 'buffers' THEN elements ELSE 0 END) AS buffer_elements
    FROM checkpoint_tensors GROUP BY ALL
),
per_rank AS (
    SELECT t.model_id, t.checkpoint_id, p.tp,
           sum(CASE t.shard
                   WHEN 'vocab' THEN t.bytes / nullif(m.vocab_size, 0) * ceil(m.vocab_size / 64.0) * 64 / p.tp
                   ELSE 0 END) AS vocab_bytes_per_rank,
           sum(CASE t.shard
                   WHEN 'split' THEN t.bytes * greatest(1.0 / p.tp, 1.0 / coalesce(t.shard_parts, p.tp))
                   ELSE 0 END) AS split_rule_per_rank,
           sum(CASE WHEN t.part LIKE 'kv_b.%' AND t.quantized
                    THEN t.elements * 2.0 * greatest(1.0 / p.tp, 1.0 / coalesce(t.shard_parts, p.tp))
                    ELSE 0 END) AS mla_absorbed_bytes_per_rank
    FROM checkpoint_tensors t JOIN models m USING (model_id) CROSS JOIN tps p
    GROUP BY ALL
),
scaled AS (
    SELECT r.*, c.hf_id, c.weights_dtype, c.listed, c.is_default, c.checkpoint_bytes,
           o.split_total, o.vocab_total, o.replicated_bytes, o.buffer_bytes, o.buffer_elements,
           -- measured bytes hold no buffers; what the rule cannot place is in the split groups
           CASE WHEN c.checkpoint_bytes IS NULL OR o.split_total = 0 THEN 1.0
                ELSE (c.checkpoint_bytes - o.vocab_total - (o.replicated_bytes - o.buffer_bytes)) / o.split_total
                END AS split_scale
    FROM per_rank r
    JOIN totals o USING (model_id, checkpoint_id)
    JOIN checkpoints c USING (model_id, checkpoint_id)
)
SELECT model_id, checkpoint_id, hf_id, weights_dtype, listed, is_default, tp,
       coalesce(vocab_bytes_per_rank, 0) + split_rule_per_rank * split_scale + replicated_bytes
           AS weights_bytes_per_rank,
       coalesce(vocab_bytes_per_rank, 0) AS vocab_bytes_per_rank,
       mla_absorbed_bytes_per_rank,
       split_rule_per_rank * split_scale AS sharded_bytes_per_rank,
       replicated_bytes, buffer_bytes, buffer_elements,
       split_total * split_scale AS sharded_bytes_total, vocab_total AS vocab_bytes_total,
       CASE WHEN checkpoint_bytes IS NULL THEN 'rule' ELSE 'measured' END AS basis
FROM scaled;

CREATE OR REPLACE VIEW model_weights_per_rank AS
SELECT * FROM model_weights_at((SELECT list(tp ORDER BY tp) FROM tp_sizes));

-- engine_buffer_bytes(buffer_bytes, buffer_elements, engine_bytes_per_element): the rotary cos/sin caches as an engine
-- release keeps them on a rank — the checkpoint's buffer bytes (the model dtype, vLLM rotary_embedding/base.py
-- 0.19.0:59-63) where the release states no dtype of its own (engine_accounting.rope_cache_bytes_per_element NULL),
-- else elements × its bytes per element (SGLang 0.5.x: fp32 on CUDA and HIP, layers/rotary_embedding/base.py
-- 0.5.23:115-120).  Bytes per rank.  Used by engine_memory_pools_at (205) and weights_rank_gap (038).
CREATE OR REPLACE MACRO engine_buffer_bytes(buffer_bytes, buffer_elements, engine_bytes_per_element) AS
    CASE WHEN engine_bytes_per_element IS NULL THEN buffer_bytes ELSE buffer_elements * engine_bytes_per_element END;

-- engine_mla_absorbed_bytes(mla_absorbed_bytes_per_rank, mla_absorbed_copy): the absorbed MLA weights an engine release
-- keeps on a rank beside the checkpoint's — model_weights_at's mla_absorbed_bytes_per_rank where the release's accounting
-- says it keeps the 16-bit copy (engine_accounting.mla_absorbed_copy: vLLM 0.8.4 v1/attention/backends/mla/common.py:660-709),
-- else 0.  Bytes per rank.  Used by observation_weights (036), engine_memory_pools_at (205) and weights_rank_gap (038).
CREATE OR REPLACE MACRO engine_mla_absorbed_bytes(mla_absorbed_bytes_per_rank, mla_absorbed_copy) AS
    CASE WHEN coalesce(mla_absorbed_copy, false) THEN coalesce(mla_absorbed_bytes_per_rank, 0) ELSE 0 END;
