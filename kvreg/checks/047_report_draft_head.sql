-- report_draft_head: a report definition lists a speculative-decoding draft head (models.draft_for set) as a model.
-- A draft (an EAGLE head, an MTP head) runs inside its target's engine and KV pool, never alone; sized alone its one
-- layer gives thousands of sequences per device.  `kvreg plan` and `kvreg fit` refuse it by name (kvreg/fit.py
-- check_servable); a report refuses it here, at the list item, before anything is sized.
-- Grain: one row per report model item that is a draft head.  Inputs: report_items, models (draft_for).
SELECT i.file, i.line, i.key,
       format('report lists model ''{}'', a speculative-decoding draft head for ''{}'' (draft_for): it runs inside'
              || ' its target''s engine and KV pool, never alone', i.item_id, m.draft_for) AS message,
       format('list the target ''{}'' instead (engine_settings.num_speculative_tokens sets the speculation); kvreg'
              || ' does not add the draft''s layers and weights to the target yet', m.draft_for) AS hint
FROM report_items i
JOIN models m ON m.model_id = i.item_id
WHERE i.item_kind = 'model' AND m.draft_for IS NOT NULL
ORDER BY i.file, i.line
