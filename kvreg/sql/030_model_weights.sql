-- model_weights: bytes of a model's weights at each weight precision (the precision's default checkpoint).
-- Grain: one row per model × weights_dtype (precisions with for_weights).
-- Inputs: models, checkpoints, checkpoint_tensors, weight_tensors, precisions.
-- Units: weights_bytes = bytes of the whole model (all TP ranks together), as stored.
--   A checkpoint the entry lists wins (weights_basis = 'checkpoint'): its measured bytes
--   (checkpoint_basis = 'measured': index metadata.total_size or a logged load) or, without them,
--   the per-tensor rule summed over checkpoint_tensors (checkpoint_basis = 'rule'; rotary buffers
--   are not checkpoint bytes and are left out here).  A precision the entry lists no checkpoint
--   for is (params_total + towers) × bytes per element (weights_basis = 'derived', the first-principles
--   figure the seeds use).  MoE models are sized from total parameters: every expert is resident.
--   Per TP rank, with what is sharded and what is replicated: model_weights_per_rank (035).
--   published: a checkpoint of this precision exists: one the entry lists (checkpoints:, schema Checkpoint "one
--   published checkpoint of the model"), or the model's own dtype (the precision its config ships, e.g.
--   gpt-oss-120b mxfp4, deepseek-v3 fp8) even where its bytes are derived.  FALSE: a precision nobody
--   published, sized as if it were (the report marks such rows "derived weights", kvreg/report/queries).
CREATE OR REPLACE VIEW model_weights AS
WITH rule AS (
    SELECT model_id, checkpoint_id, sum(bytes) AS rule_bytes
    FROM checkpoint_tensors WHERE tensor_group <> 'buffers' GROUP BY ALL
),
towers AS (
    SELECT model_id, sum(elements) AS tower_params FROM weight_tensors WHERE tensor_group = 'towers' GROUP BY ALL
)
SELECT m.model_id, p.dtype AS weights_dtype,
       CASE WHEN c.listed THEN coalesce(c.checkpoint_bytes::DOUBLE, r.rule_bytes)
            ELSE (m.params_total + coalesce(tw.tower_params, 0)) * p.bytes_per_element END AS weights_bytes,
       CASE WHEN c.listed THEN 'checkpoint' ELSE 'derived' END AS weights_basis,
       CASE WHEN NOT c.listed THEN NULL WHEN c.checkpoint_bytes IS NOT NULL THEN 'measured' ELSE 'rule' END
           AS checkpoint_basis,
       c.checkpoint_id, c.hf_id,
       c.listed OR p.dtype = m.dtype AS published
FROM models m
CROSS JOIN (SELECT * FROM precisions WHERE for_weights) p
JOIN checkpoints c ON c.model_id = m.model_id AND c.weights_dtype = p.dtype AND c.is_default
LEFT JOIN towers tw ON tw.model_id = m.model_id
LEFT JOIN rule r ON r.model_id = c.model_id AND r.checkpoint_id = c.checkpoint_id
