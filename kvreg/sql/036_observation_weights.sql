-- observation_weights: each observation's checkpoint weights per rank beside what the engine logged.
-- Grain: one row per observation with a model (observations): the checkpoint the log served — the model
--   entry's checkpoint whose hf_id is the observation's model_hf_id (case-insensitive), else the default
--   checkpoint at the logged weights_dtype (the model's dtype when the log names none) — at the observation's tp.
-- Inputs: observations, models, engine_accounting; table macro model_weights_at and engine_mla_absorbed_bytes (035).
-- Units: bytes per rank.
--   weights_bytes_per_rank   model_weights_at at the observation's tp (pipeline stages hold layers ÷ pp:
--                            divided by pp, as calibration divides the weights), plus the absorbed MLA copy the
--                            observation's engine release keeps (engine_mla_absorbed_bytes, 035)
--   mla_absorbed_bytes       that copy alone (per rank, ÷ pp)
--   logged_bytes             the log's "Model loading took" (model_loading_bytes), NULL when not logged
--   residual_bytes           weights_bytes_per_rank − logged_bytes
-- Source: docs/import-hf.md "Checkpoints and the weights rule".
CREATE OR REPLACE VIEW observation_weights AS
SELECT o.observation_id, o.model_id, coalesce(o.weights_dtype, m.dtype) AS weights_dtype, o.tp, o.pp,
       w.checkpoint_id, w.hf_id, w.basis,
       (w.weights_bytes_per_rank + engine_mla_absorbed_bytes(w.mla_absorbed_bytes_per_rank, a.mla_absorbed_copy)) / o.pp
           AS weights_bytes_per_rank,
       engine_mla_absorbed_bytes(w.mla_absorbed_bytes_per_rank, a.mla_absorbed_copy) / o.pp AS mla_absorbed_bytes,
       o.model_loading_bytes AS logged_bytes,
       (w.weights_bytes_per_rank + engine_mla_absorbed_bytes(w.mla_absorbed_bytes_per_rank, a.mla_absorbed_copy)) / o.pp
           - o.model_loading_bytes AS residual_bytes
FROM observations o
JOIN models m ON m.model_id = o.model_id
LEFT JOIN engine_accounting a ON a.engine_id = o.engine_id
JOIN model_weights_at((SELECT list(DISTINCT tp) FROM observations)) w
  ON w.model_id = o.model_id AND w.tp = o.tp
 AND (lower(w.hf_id) = lower(o.model_hf_id)
      OR (w.weights_dtype = coalesce(o.weights_dtype, m.dtype) AND w.is_default))
QUALIFY row_number() OVER (PARTITION BY o.observation_id
                           ORDER BY coalesce(lower(w.hf_id) = lower(o.model_hf_id), false) DESC) = 1
