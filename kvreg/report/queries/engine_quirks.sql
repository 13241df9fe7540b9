-- engine_quirks: for each listed model and engine release, the release's quirk sentences whose trigger
-- is true in engine_capacity for some listed configuration (hardware × weights × KV × TP) at a listed
-- context, with the default max_num_batched_tokens; the sentences name why the engine admits fewer
-- sequences than first principles (the same lookup as `kvreg fit --engine`, kvreg/engine_fit.py).
-- Grain: one row per model × engine × quirk; n_flagged of n_listed configurations, the first flagged one (at_*:
-- hardware, precisions, TP, max_model_len, and the engine's blocks per request and pool blocks there).
-- Inputs: report_engine_capacity (scope_engine_capacity.sql: engine_capacity for the report; quirk flag columns, default_batched, max_model_len), engine_quirks, report_items.
-- The trigger `padding_layers` is read from the column padding_layers_wasted (engine_fit._TRIGGER).
-- One row is not the release's data: `tp_heads` (engine_capacity refusal 'tp_heads': the heads do not split at the
-- TP, so every engine stops at load, kvreg/sql/037_tp_sharding.sql), with text NULL and quirk_idx after the
-- release's quirks; kvreg.engine_fit.tp_heads_quirk says it from the model's heads, the TP and the TP sizes that split
-- (the sentence `kvreg fit` prints, kvreg.fit.tp_refusal).
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
flags AS (
    -- each trigger with where it holds: how many of the listed configurations (hardware × weights × KV × TP ×
    -- context) and the first of them in the report's order — one with a KV pool first, so the example is the quirk's
    -- own case, not weights that leave no pool — with the engine's own block figures there, so the sentence is
    -- said of this model's numbers (issue 12: no generic sentence), not only of the release
    SELECT model_id, engine_id, trigger, bool_or(flag) AS flag,
           count(*) FILTER (WHERE flag) AS n_flagged, count(*) AS n_listed,
           arg_min({'hardware_id': hardware_id, 'weights_dtype': weights_dtype, 'kv_dtype': kv_dtype, 'tp': tp,
                    'max_model_len': max_model_len, 'blocks_per_request': blocks_per_request,
                    'num_blocks': num_blocks},
                   [(num_blocks <= 0)::INT, hw_idx, w_idx, k_idx, tp, max_model_len]) FILTER (WHERE flag) AS first_flagged
    FROM (
        UNPIVOT (
            SELECT c.model_id, c.engine_id, c.hardware_id, c.weights_dtype, c.kv_dtype, c.tp, c.max_model_len,
                   c.blocks_per_request, c.num_blocks, ph.item_idx AS hw_idx, pw.weights_idx AS w_idx,
                   pk.item_idx AS k_idx,
                   c.sliding_stored_as_full, c.chunked_stored_as_full,
                   c.grouped_min_block_report, c.padding_layers_wasted AS padding_layers, c.recurrent_page_alignment,
                   c.recurrent_outside_pool, c.k_eq_v_stored_twice, c.mla_block_size, c.swa_pool_ratio,
                   c.does_not_start, c.request_len_capped, c.sliding_prefill_reserve,
                   coalesce(c.refusal = 'tp_heads', FALSE) AS tp_heads
            FROM report_engine_capacity c
            JOIN pick pm ON pm.item_kind = 'model' AND pm.item_id = c.model_id
            JOIN pick ph ON ph.item_kind = 'hardware' AND ph.item_id = c.hardware_id
            JOIN pick pe ON pe.item_kind = 'engine' AND pe.item_id = c.engine_id
            JOIN report_weights pw ON pw.report_id = $report AND pw.model_id = c.model_id
                                 AND pw.weights_dtype = c.weights_dtype
            JOIN pick pk ON pk.item_kind = 'kv_dtype' AND pk.item_id = c.kv_dtype
            JOIN pick pt ON pt.item_kind = 'tp' AND pt.item_value = c.tp
            JOIN pick pc ON pc.item_kind = 'context' AND pc.item_value = c.max_model_len
            WHERE c.default_batched
        ) ON COLUMNS(* EXCLUDE (model_id, engine_id, hardware_id, weights_dtype, kv_dtype, tp, max_model_len,
                                blocks_per_request, num_blocks, hw_idx, w_idx, k_idx))
          INTO NAME trigger VALUE flag
    )
    GROUP BY model_id, engine_id, trigger
)
SELECT f.model_id, f.engine_id, coalesce(q.quirk_idx, (SELECT max(quirk_idx) + 1 FROM engine_quirks)) AS quirk_idx,
       coalesce(q.quirk_id, 'tp-heads') AS quirk_id, f.trigger, q.text, f.n_flagged, f.n_listed,
       f.first_flagged.hardware_id AS at_hardware_id, f.first_flagged.weights_dtype AS at_weights_dtype,
       f.first_flagged.kv_dtype AS at_kv_dtype, f.first_flagged.tp AS at_tp,
       f.first_flagged.max_model_len AS at_max_model_len, f.first_flagged.blocks_per_request AS at_blocks_per_request,
       f.first_flagged.num_blocks AS at_num_blocks
FROM flags f
LEFT JOIN engine_quirks q ON q.engine_id = f.engine_id AND q.trigger = f.trigger
JOIN pick pe ON pe.item_kind = 'engine' AND pe.item_id = f.engine_id
WHERE f.flag AND (q.trigger IS NOT NULL OR f.trigger = 'tp_heads')
ORDER BY f.model_id, pe.item_idx, quirk_idx
