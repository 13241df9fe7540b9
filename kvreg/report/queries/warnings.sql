-- warnings: what the reader must not miss, most serious first.
-- Grain: one row per warning.  Inputs: report_grid, report_engine_admission (via report_grid),
--   report_items, provenance, hardware, hardware_precisions, models, report_rates.
-- Columns: severity (1 = the option is unusable, 2 = the number is uncertain, 3 = information),
--   kind (stable code), subject, detail (text), amount_bytes (bytes to print with a unit, or NULL).
-- Unusable combinations are grouped per model × hardware, listing the configurations affected.
WITH pick AS (SELECT item_kind, item_id, item_value, item_idx FROM report_items WHERE report_id = $report),
g AS (SELECT * FROM report_grid)
SELECT * FROM (
    SELECT 1 AS severity, 'weights-do-not-fit' AS kind, format('{} on {}', model_id, hardware_id) AS subject,
           'the weights, reserve and residents exceed the device memory with '
               || string_agg(format('{} weights at TP {}', weights_dtype, tp), ', ' ORDER BY weights_idx, tp_idx)
               AS detail,
           NULL::DOUBLE AS amount_bytes, model_idx, hardware_idx, 0 AS sub_idx
    FROM (SELECT DISTINCT model_id, hardware_id, weights_dtype, tp, model_idx, hardware_idx, weights_idx, tp_idx
          FROM g WHERE NOT weights_fit)
    GROUP BY model_id, hardware_id, model_idx, hardware_idx
    UNION ALL
    -- per engine: each engine id has its own pool, so one configuration can fail under one and not another
    -- (grouped across engines, the same configuration was listed once per engine, indistinguishably)
    SELECT 1, 'no-sequence-fits', format('{} on {} under {}', model_id, hardware_id, engine_id),
           'one sequence needs more than the KV pool left after the weights, with '
               || string_agg(format('{} weights / {} KV, TP {} at {}', weights_dtype, kv_dtype, tp, context_label),
                             ', ' ORDER BY weights_idx, kv_idx, tp_idx, context_idx),
           NULL, model_idx, hardware_idx, 1
    FROM g WHERE weights_fit AND max_seqs = 0
    GROUP BY model_id, hardware_id, engine_id, model_idx, hardware_idx, engine_idx
    UNION ALL
    SELECT 1, 'engine-refuses-to-start', format('{} on {} under {}', model_id, hardware_id, engine_id),
           'first principles fit a sequence, but the engine would refuse to start (one request of this length '
               || 'does not fit its KV cache) with '
               || string_agg(format('{} weights / {} KV, TP {} at {}', weights_dtype, kv_dtype, tp, context_label),
                             ', ' ORDER BY weights_idx, kv_idx, tp_idx, context_idx),
           NULL, model_idx, hardware_idx, 2 + engine_idx
    FROM g WHERE engine_starts = false AND weights_fit AND max_seqs > 0
    GROUP BY model_id, hardware_id, engine_id, model_idx, hardware_idx, engine_idx
    UNION ALL
    -- a release whose rule is to cap the request length (accounting.long_request cap_request_len: SGLang,
    -- TensorRT-LLM) starts, but serves no request of this length
    SELECT 1, 'engine-caps-request-length', format('{} on {} under {}', model_id, hardware_id, engine_id),
           'first principles fit a sequence, but the engine starts with a request length capped below this context '
               || '(one request of it does not fit its KV cache), so it serves none of this length, with '
               || string_agg(format('{} weights / {} KV, TP {} at {}', weights_dtype, kv_dtype, tp, context_label),
                             ', ' ORDER BY weights_idx, kv_idx, tp_idx, context_idx),
           NULL, model_idx, hardware_idx, 2 + engine_idx
    FROM g WHERE engine_request_len_capped AND weights_fit AND max_seqs > 0
    GROUP BY model_id, hardware_id, engine_id, model_idx, hardware_idx, engine_idx
    UNION ALL
    SELECT DISTINCT 2, 'beyond-native-context', format('{} at {}', model_id, context_label),
           'the context is longer than the model''s native context; quality there is not established', NULL,
           model_idx, 0, context_idx
    FROM g WHERE NOT within_native
    UNION ALL
    SELECT DISTINCT 2, 'precision-not-native', format('{} on {}', g.weights_dtype, g.hardware_id),
           'the hardware has no native support for this weights precision: it is stored but computed after conversion',
           NULL, 0, g.hardware_idx, g.weights_idx
    FROM g
    WHERE g.hardware_id IN (SELECT hardware_id FROM hardware_precisions)
      AND (g.hardware_id, g.weights_dtype) NOT IN (SELECT hardware_id, dtype FROM hardware_precisions)
    UNION ALL
    SELECT DISTINCT 2, 'kv-precision-not-native', format('{} KV cache on {}', g.kv_dtype, g.hardware_id),
           'the hardware has no native support for this KV cache precision; engines may refuse or convert it',
           NULL, 0, g.hardware_idx, g.kv_idx
    FROM g
    WHERE g.hardware_id IN (SELECT hardware_id FROM hardware_precisions)
      AND (g.hardware_id, g.kv_dtype) NOT IN (SELECT hardware_id, dtype FROM hardware_precisions)
    UNION ALL
    SELECT 2, 'estimated-number', format('{} {}: {}', p.kind, p.entry_id, p.field),
           coalesce('estimated, not measured or read: ' || p.note, 'estimated, not measured or read'), NULL,
           0, 0, 0
    FROM provenance p
    JOIN pick i ON i.item_kind = p.kind AND i.item_id = p.entry_id
    WHERE p.confidence = 'estimated'
    UNION ALL
    SELECT DISTINCT 2, 'tp-without-interconnect', format('{} at TP {}', g.hardware_id, g.tp),
           'the registry gives this hardware no interconnect: a TP group of several devices is assumed to exist',
           NULL, 0, g.hardware_idx, g.tp_idx
    FROM g JOIN hardware h USING (hardware_id)
    WHERE g.tp > 1 AND h.interconnect_name IS NULL
    UNION ALL
    SELECT DISTINCT 2, 'tp-beyond-interconnect-domain', format('{} at TP {}', g.hardware_id, g.tp),
           format('the interconnect ({}) links {} devices at its stated bandwidth: a TP group of {} spans '
                  'slower links, so plans do not size it', h.interconnect_name, h.interconnect_domain_size, g.tp),
           NULL, 0, g.hardware_idx, g.tp_idx
    FROM g JOIN hardware h USING (hardware_id)
    WHERE g.tp > h.interconnect_domain_size
    UNION ALL
    SELECT 3, 'price-unknown', rt.hardware_id,
           format('no price on this report''s basis ({}) in the registry: options on it are ranked by device'
                  ' count only', rt.basis_label), NULL,
           0, i.item_idx, 0
    FROM report_rates rt JOIN pick i ON i.item_kind = 'hardware' AND i.item_id = rt.hardware_id
    WHERE rt.usd_per_hour IS NULL
)
ORDER BY severity, model_idx, hardware_idx, sub_idx, kind, subject
