-- checkpoint_bytes_implausible: a checkpoint's stated bytes (index total_size, a download size, a logged load) far from
-- what its model's parameters take at its quantization: the per-tensor rule (kvreg/sql/025_checkpoint_tensors.sql,
-- written once there: every tensor group's elements × bytes per element, quantized groups at weight_bits / 8 plus their
-- scales, the rest at the 16-bit dtype; precisions in kvreg/precisions, tensor groups in kvreg/weights.py).  The stated
-- bytes win over the rule in model_weights (030), so a slip here (1.606e9 for Llama 3.1 8B's 16.06e9) silently shrinks
-- the weights tenfold and `fit` admits 71 sequences on an H100 instead of 58.
-- Band: 0.5× to 2× the rule.  Below 0.5× the weights would be stored in under half the bits the quantization states;
-- above 2× in more than twice (fp32 under a bf16 label is exactly 2×).  Shipped measured checkpoints span 0.540×
-- (deepseek-v4-pro: routed experts in FP4 under an fp8 config, its note says so) to 1.087× (gpt-oss-120b: attention
-- and router unquantized beyond the rule's groups); tests/test_checkpoints.py holds the logged loads within 0.8 %.
-- Grain: one row per checkpoint with stated bytes outside the band.  Inputs: checkpoints, checkpoint_tensors.
-- Reads views: 025_checkpoint_tensors
WITH listed AS (
    -- the entry's checkpoints[] index: the table holds each model's listed checkpoints first, in file order
    -- (kvreg/tables.py all_checkpoints), and a base table's rowid keeps the order its rows were loaded in
    SELECT *, row_number() OVER (PARTITION BY model_id ORDER BY rowid) - 1 AS checkpoint_idx
    FROM checkpoints
),
rule AS (
    SELECT model_id, checkpoint_id, sum(bytes) AS rule_bytes
    FROM checkpoint_tensors WHERE tensor_group <> 'buffers' GROUP BY ALL
)
SELECT m.file, m.line, format('checkpoints.{}.bytes', c.checkpoint_idx) AS key,
       format('checkpoint {} states {:,} bytes ({:.1f} GB), {:.2f}× the {:.1f} GB its {:,} parameters take at {} '
              '(the per-tensor rule, kvreg/sql/025_checkpoint_tensors.sql)',
              coalesce(c.hf_id, c.checkpoint_id), c.checkpoint_bytes, c.checkpoint_bytes / 1e9,
              c.checkpoint_bytes / r.rule_bytes, r.rule_bytes / 1e9, m.params_total::BIGINT, c.weights_dtype) AS message,
       'a checkpoint holds 0.5× to 2× the rule''s bytes unless its weights are stored at under half or over twice the '
       || 'bits its quantization states: check the unit (GB vs MB, a digit dropped), params_total, weights_dtype and '
       || 'quantization; if the bytes are right, write the quantization the files really use' AS hint
FROM listed c
JOIN rule r USING (model_id, checkpoint_id)
JOIN models m USING (model_id)
WHERE c.listed AND c.checkpoint_bytes IS NOT NULL
  AND (c.checkpoint_bytes < 0.5 * r.rule_bytes OR c.checkpoint_bytes > 2 * r.rule_bytes)
ORDER BY m.file, c.checkpoint_idx
