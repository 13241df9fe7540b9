-- duplicate_hf_id: two model entries claim the same Hugging Face repository.
-- Grain: one row per entry after the first with that hf_id.  Inputs: models.
SELECT file, line, 'hf_id' AS key,
       format('hf_id ''{}'' is also used by {}', hf_id, first_value(model_id) OVER w) AS message,
       'one entry per checkpoint: merge the entries or correct the hf_id' AS hint
FROM models
WHERE hf_id IS NOT NULL
WINDOW w AS (PARTITION BY hf_id ORDER BY model_id)
QUALIFY row_number() OVER w > 1
