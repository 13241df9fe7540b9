-- window_exceeds_context: sliding windows and attention chunks longer than the model's
-- native context.  Such a layer would never be bounded, which is almost always a unit
-- slip (8K written for 8Ki) or a window copied from another model.
-- Grain: one row per offending layer group.  Inputs: layer_groups, models.
SELECT g.file, g.line,
       'layer_groups.' || g.group_idx || CASE WHEN g.kind = 'sliding' THEN '.window' ELSE '.chunk' END AS key,
       format('{} of {:d} tokens exceeds the native context of {:d} tokens',
              CASE WHEN g.kind = 'sliding' THEN 'window' ELSE 'chunk' END,
              coalesce(g.window_tokens, g.chunk_tokens), m.native_context_tokens) AS message,
       'a window longer than the context never bounds anything: check the number (Ki vs K) '
       || 'or write the layers as kind: full' AS hint
FROM layer_groups g JOIN models m USING (model_id)
WHERE coalesce(g.window_tokens, g.chunk_tokens) > m.native_context_tokens
