-- observation_tp_split: an observation's tensor-parallel size does not split its model's attention heads, so no
-- engine could have started that way (vLLM's `divide` asserts at load; the rule is the tp_sharding view,
-- kvreg/sql/037_tp_sharding.sql, over tp_sizes plus every TP an observation states: kvreg/checks/__init__.py).
-- A log reporting such a TP is a corrupted or hand-edited line (trial11: tensor_parallel_size=3 for 16 heads).
-- Grain: one row per such observation.  Observations of a model not in the registry are not judged.
-- Inputs: observations, tp_sharding (models, layer_groups).
-- Reads views: 037_tp_sharding
SELECT o.file, o.line, 'settings.tp' AS key,
       format('tp {} does not split {}''s heads ({}): no engine starts so (vLLM divide() asserts at load), so the '
              'figures are not of a start at that TP',
              o.tp, o.model_id,
              CASE WHEN s.attention_heads % o.tp <> 0 THEN s.attention_heads || ' query heads'
                   ELSE s.bad_kv_heads || ' KV heads' END) AS message,
       'correct settings.tp to the tensor_parallel_size the engine ran with (a divisor of the head counts)' AS hint
FROM observations o
JOIN tp_sharding s ON s.model_id = o.model_id AND s.tp = o.tp
WHERE NOT s.shards
