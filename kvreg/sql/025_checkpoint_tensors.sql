-- checkpoint_tensors: every checkpoint's weight tensors by group, with bytes per element.
-- Grain: one row per model × checkpoint × tensor part (weight_tensors: one part per group, per
--   attention layer group for q/o and k/v).
-- Inputs: checkpoints, checkpoint_quantized, weight_tensors, models, precisions.
-- Units: elements (whole model); bytes per element; bytes (whole model, all TP ranks together).
--   quantized          the checkpoint's quantization config quantizes this group (checkpoint_quantized;
--                      for a generic checkpoint QUANTIZED_DEFAULT: attention, recurrent, mlp)
--   bytes_per_element  quantized: quantized_bytes_per_element (macro below); otherwise the 16-bit
--                      dtype the checkpoint keeps unquantized tensors in (the model dtype, bf16 when
--                      the model dtype is narrower); a checkpoint with no quantization config stores
--                      every weight at its precision (bf16, fp16, fp32 …); buffers (rotary caches) at
--                      their own dtype (rope_caches[].dtype), else the 16-bit dtype
--   bytes              elements × bytes_per_element
-- Source: kvreg/weights.py (tensor groups, vLLM 0.19.0 file:line references); the quantization
--   formats of schema/model.py Quantization.
-- quantized_bytes_per_element: weight bits / 8 + (one scale + optional zero point) per group of
-- group_size values; group_size NULL = one scale per output channel, i.e. per `per_channel_inputs`
-- values (the hidden size: every linear reads or writes it).  NVFP4: 0.5 + 1/16 = 0.5625 B;
-- MXFP4: 0.5 + 1/32 = 0.53125 B; GPTQ int4 g128 fp16: 0.5 + 2/128 = 0.515625 B.
CREATE OR REPLACE MACRO quantized_bytes_per_element(weight_bits, group_size, scale_bytes, zero_points,
                                                    per_channel_inputs) AS
    weight_bits / 8.0
    + (scale_bytes + CASE WHEN zero_points THEN weight_bits / 8.0 ELSE 0 END)
      / coalesce(group_size, per_channel_inputs)::DOUBLE;

CREATE OR REPLACE VIEW checkpoint_tensors AS
WITH ck AS (
    SELECT c.*, p.bytes_per_element AS precision_bytes, s.bytes_per_element AS scale_bytes,
           CASE WHEN mp.bytes_per_element >= 2 THEN mp.bytes_per_element ELSE 2.0 END AS unquantized_bytes,
           m.hidden_size
    FROM checkpoints c
    JOIN models m USING (model_id)
    JOIN precisions p ON p.dtype = c.weights_dtype
    JOIN precisions mp ON mp.dtype = m.dtype
    LEFT JOIN precisions s ON s.dtype = c.scale_dtype
),
priced AS (
    SELECT ck.model_id, ck.checkpoint_id, ck.weights_dtype, t.tensor_group, t.part, t.elements, t.shard,
           t.shard_parts, q.tensor_group IS NOT NULL AS quantized,
           CASE WHEN q.tensor_group IS NOT NULL
                     THEN quantized_bytes_per_element(ck.weight_bits, ck.group_size, ck.scale_bytes, ck.zero_points,
                                                      ck.hidden_size)
                WHEN t.tensor_group = 'buffers' THEN coalesce(bp.bytes_per_element, ck.unquantized_bytes)
                WHEN ck.weight_bits IS NOT NULL THEN ck.unquantized_bytes
                ELSE ck.precision_bytes END AS bytes_per_element
    FROM ck
    JOIN weight_tensors t ON t.model_id = ck.model_id
    LEFT JOIN precisions bp ON bp.dtype = t.dtype
    LEFT JOIN checkpoint_quantized q
           ON q.model_id = ck.model_id AND q.checkpoint_id = ck.checkpoint_id AND q.tensor_group = t.tensor_group
)
SELECT *, elements * bytes_per_element AS bytes FROM priced
