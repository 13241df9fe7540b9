-- tp_sharding: whether tensor parallelism at each TP size can split a model's attention heads evenly.
-- Grain: one row per model × tp (models × tp_sizes).
-- Inputs: models (attention_heads), layer_groups (kv_heads of every layer kind that has them), tp_sizes.
-- The rule every tensor-parallel engine applies (vLLM QKVParallelLinear, model_executor/layers/linear.py
-- 0.19.0:1010-1017, via distributed/utils.py:53-64 `divide`, which asserts): the query heads are divided
-- evenly, num_heads = total_num_heads ÷ tp; the KV heads are divided when there are at least tp of them
-- (total_num_kv_heads ÷ tp) and otherwise replicated, num_kv_head_replicas = tp ÷ total_num_kv_heads —
-- each must be a whole number, or the engine stops at load.  (MLA's one latent and MQA's one KV head
-- replicate at any tp; recurrent and MLP-only layers have no KV heads here.)
-- Columns: shards (TRUE when both divide; TRUE when the entry states no head count), attention_heads, and
--   bad_kv_heads (the first KV head count that does not divide, NULL when all do).
CREATE OR REPLACE VIEW tp_sharding AS
WITH kv AS (
    SELECT g.model_id, t.tp,
           min(g.kv_heads) FILTER (WHERE CASE WHEN g.kv_heads >= t.tp THEN g.kv_heads % t.tp <> 0
                                              ELSE t.tp % g.kv_heads <> 0 END) AS bad_kv_heads
    FROM layer_groups g CROSS JOIN tp_sizes t
    WHERE g.kv_heads IS NOT NULL AND g.kv_heads > 0
    GROUP BY g.model_id, t.tp
)
SELECT m.model_id, t.tp, m.attention_heads, kv.bad_kv_heads,
       coalesce(m.attention_heads % t.tp = 0, TRUE) AND kv.bad_kv_heads IS NULL AS shards
FROM models m CROSS JOIN tp_sizes t
LEFT JOIN kv ON kv.model_id = m.model_id AND kv.tp = t.tp;
