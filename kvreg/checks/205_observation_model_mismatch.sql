-- observation_model_mismatch: an observation's model_hf_id is the Hugging Face repository of a different
-- registry model than its `model:` (that model's own hf_id or a checkpoint its entry lists), so calibration
-- would compare the start of one model with the prediction for another, silently.
-- Grain: one row per such observation (the owning models listed together).  HF ids compare
-- case-insensitively, a trailing '/' dropped, as kvreg/ingest.py match_model does.  An observation whose
-- model is one of the owners (a checkpoint two entries list) is not reported.
-- Inputs: observations, models, checkpoints.  The message's {hf:MODEL:HF_ID} becomes the file:line of that
-- entry's hf_id (kvreg/checks/__init__.py).
WITH owners AS (
    SELECT lower(hf_id) AS hf, model_id FROM models WHERE hf_id IS NOT NULL
    UNION
    SELECT lower(hf_id), model_id FROM checkpoints WHERE listed AND hf_id IS NOT NULL
),
mismatched AS (
    SELECT o.file, o.line, o.observation_id, o.model_id, o.model_hf_id,
           string_agg(w.model_id, ', ' ORDER BY w.model_id) AS owner_ids,
           string_agg('{hf:' || w.model_id || ':' || o.model_hf_id || '}', ', ' ORDER BY w.model_id) AS owner_at,
           min(w.model_id) AS first_owner
    FROM observations o
    JOIN owners w ON w.hf = lower(rtrim(o.model_hf_id, '/'))
    WHERE o.model_hf_id IS NOT NULL
    GROUP BY ALL
    HAVING NOT bool_or(w.model_id IS NOT DISTINCT FROM o.model_id)
)
SELECT file, line, 'model' AS key,
       format('model ''{}'' but model_hf_id ''{}'' is the checkpoint of {} ({}): the start would be compared '
              'with the prediction for another model', coalesce(model_id, '(none)'), model_hf_id, owner_ids,
              owner_at) AS message,
       format('set model: {} (the entry that lists the checkpoint), or correct model_hf_id to the checkpoint '
              'the log loaded', first_owner) AS hint
FROM mismatched
