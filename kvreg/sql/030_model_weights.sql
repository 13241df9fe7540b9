-- model_weights: bytes of a model's weights at each weight precision.
-- Grain: one row per model × weights_dtype (precisions with for_weights).
-- Inputs: models, checkpoints, precisions.
-- Units: weights_bytes = bytes of the whole model (all TP ranks together).
--   A checkpoint size from the entry wins (weights_basis = 'checkpoint'); otherwise
--   params_total × bytes per element (weights_basis = 'derived').  MoE models are sized
--   from total parameters: every expert is resident even though few are active.
CREATE OR REPLACE VIEW model_weights AS
SELECT m.model_id, p.dtype AS weights_dtype,
       coalesce(c.checkpoint_bytes::DOUBLE, m.params_total * p.bytes_per_element) AS weights_bytes,
       CASE WHEN c.checkpoint_bytes IS NULL THEN 'derived' ELSE 'checkpoint' END AS weights_basis
FROM models m
CROSS JOIN (SELECT * FROM precisions WHERE for_weights) p
LEFT JOIN checkpoints c ON c.model_id = m.model_id AND c.weights_dtype = p.dtype
