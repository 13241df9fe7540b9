-- report_weights: the weight precisions each report sizes each of its models at (issue 12): the definition's
-- weights_dtypes list and, unless it sets own_checkpoints: false, the precision of the model's own checkpoint (the
-- dtype its publisher ships it in, models.dtype: gpt-oss-120b mxfp4, deepseek-v3 fp8), a per-model addition:
-- gpt-oss-120b is sized at mxfp4 beside bf16 and fp8, no other model of the Q4 2026 report at mxfp4.  Without it
-- that report sized gpt-oss-120b only at 110 GiB of derived bf16/fp8 weights, though its one checkpoint holds
-- 65.97 GiB (vLLM's logged load).
-- The other checkpoints an entry lists are third parties' quantisations (Llama 3.1 8B's RedHatAI int4/int8, Gemma 4
-- 31B's 8-bit MLX bundle) and the registry does not record which engine loads them (vLLM cannot load an MLX
-- bundle): they are not added; a report that wants them lists their precision in weights_dtypes.  They do count as
-- published (no derived-weights mark) wherever a listed precision meets them.
-- Grain: one row per report × listed model × weights_dtype.
-- Inputs: report_items (kinds model, weights_dtype), report_workloads (own_checkpoints), models (dtype),
--   model_weights (published, 030).
-- Columns: report_id, model_id, weights_dtype;
--   weights_idx  the order to show them in: the list's own order (its item_idx), then the model's own precision
--                when the list lacks it (after every listed one)
--   listed       the definition's weights_dtypes names it
--   published    a checkpoint of this precision exists (model_weights.published: listed in the entry, or the
--                model's own dtype); FALSE rows rest on derived weights, which the report marks
CREATE OR REPLACE VIEW report_weights AS
WITH models_of AS (
    SELECT report_id, item_id AS model_id FROM report_items WHERE item_kind = 'model'
),
listed AS (
    SELECT report_id, item_id AS weights_dtype, item_idx FROM report_items WHERE item_kind = 'weights_dtype'
),
candidates AS (
    SELECT m.report_id, m.model_id, w.weights_dtype, l.item_idx, w.published
    FROM models_of m
    LEFT JOIN report_workloads r ON r.report_id = m.report_id   -- a report without a workload row: the default
    JOIN models mo ON mo.model_id = m.model_id
    JOIN model_weights w ON w.model_id = m.model_id
    LEFT JOIN listed l ON l.report_id = m.report_id AND l.weights_dtype = w.weights_dtype
    WHERE l.item_idx IS NOT NULL OR (coalesce(r.own_checkpoints, TRUE) AND w.weights_dtype = mo.dtype)
)
SELECT report_id, model_id, weights_dtype,
       coalesce(item_idx, (SELECT max(l.item_idx) FROM listed l WHERE l.report_id = c.report_id)
                          + row_number() OVER (PARTITION BY report_id, model_id, item_idx IS NULL
                                               ORDER BY weights_dtype)) AS weights_idx,
       item_idx IS NOT NULL AS listed, published
FROM candidates c
