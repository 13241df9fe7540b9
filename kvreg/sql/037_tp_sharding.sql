-- tp_sharding: whether tensor parallelism at each TP size can split a model's attention heads evenly.
-- Grain: one row per model × tp (models × tp_sizes).
-- Inputs: models (attention_heads), layer_groups (kv_heads of every layer kind that has them), tp_sizes.
-- The rule every tensor-parallel engine applies (vLLM QKVParallelLinear, model_executor/layers/linear.py
-- 0.19.0:1010-1017, via distributed/utils.py:53-64 `divide`, which asserts): the query heads are divided
-- evenly, num_heads = total_num_heads ÷ tp; the KV heads are divided when there are at least tp of them
-- (total_num_kv_heads ÷ tp) and otherwise replicated, num_kv_head_replicas = tp ÷ total_num_kv_heads —
-- each must be a whole number, or the engine stops at load.  (MLA's one latent and MQA's one KV head
-- replicate at any tp; recurrent and MLP-only layers have no KV heads here.)
-- SGLang applies the same rule with the same code: python/sglang/srt/layers/linear.py (commit 98b3b24) is adapted from
-- vLLM v0.6.4.post1's and builds QKVParallelLinear with the same `divide` (sglang/srt/distributed); vLLM also stops
-- before loading on the query heads alone (config ModelConfig.verify_with_parallel_config, "Total number of attention
-- heads (…) must be divisible by tensor parallel size (…)", read at commit 18ec662).  No engine kvreg sizes differs,
-- so the rule is one predicate here, not engine data (docs/engine.md "TP sizes whose heads do not split").
-- Columns: shards (TRUE when both divide; TRUE when the entry states no head count), attention_heads, and
--   bad_kv_heads (the first KV head count that does not divide, NULL when all do).
-- Read by: engine_capacity_at (220, through served_tp_sharding: the engine refuses at load), plans (275), plan_scope
--   (118), kvreg fit.
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


-- served_tp_sharding: tp_sharding for what an engine serves, a model alone or a target with its draft (served_models):
-- the engine loads both, so the set splits at a TP only when every member does.
-- Grain: one row per served_id × tp: every served set, and every model alone under its own id (a draft head too).
-- Inputs: served_models, models, tp_sharding (the one predicate, above).
-- Columns: served_id, tp, shards (every member shards), and the first member that does not (by model id): its
--   model_id as refused_model_id, attention_heads, bad_kv_heads (NULL when the set shards).
CREATE OR REPLACE VIEW served_tp_sharding AS
SELECT s.served_id, ts.tp, bool_and(ts.shards) AS shards,
       arg_min(ts.model_id, struct_pack(ok := ts.shards, m := ts.model_id)) FILTER (WHERE NOT ts.shards)
           AS refused_model_id,
       arg_min(ts.attention_heads, struct_pack(ok := ts.shards, m := ts.model_id)) FILTER (WHERE NOT ts.shards)
           AS attention_heads,
       arg_min(ts.bad_kv_heads, struct_pack(ok := ts.shards, m := ts.model_id)) FILTER (WHERE NOT ts.shards)
           AS bad_kv_heads
FROM (SELECT served_id, model_id FROM served_models UNION SELECT model_id, model_id FROM models) s
JOIN tp_sharding ts ON ts.model_id = s.model_id
GROUP BY s.served_id, ts.tp;

-- tp_sharding_reason(attention_heads, bad_kv_heads): scalar macro, why a TP size does not split a model's heads,
-- in words without the TP (plans, 275, groups one device's TPs that fail alike; kvreg fit adds the TP).  The KV heads
-- first: an engine divides them when there are at least tp of them, else replicates them, and either must be whole.
CREATE OR REPLACE MACRO tp_sharding_reason(attention_heads, bad_kv_heads) AS
    CASE WHEN bad_kv_heads IS NOT NULL
         THEN format('tensor parallelism cannot split its {} KV heads evenly at this TP (the engine'
                     ' divides or replicates them whole)', bad_kv_heads)
         ELSE format('tensor parallelism cannot split its {} attention heads evenly at this TP', attention_heads) END;
