-- engine_support: whether an engine release runs on a device at a weights and a KV precision, and why not.
-- Grain: one row per engine × hardware × weights_dtype × kv_dtype (engines × hardware × precisions for weights
--   × precisions for KV).
-- Inputs: engine_platforms, engine_precision_rules (an engine entry's support: block, kvreg/schema/support.py),
--   engines, hardware, hardware_capabilities (compute_capability), precisions.
-- Rule (kvreg/schema/support.py, in order): the device's platform is the release's first platform whose
--   vendors / architectures hold the device's; the platform's min_capability must be met; the precision must be
--   one the platform runs (weights_dtypes, kv_dtypes); where precision rules for that platform name the
--   precision, one must hold (compute capability ≥ min_capability — vLLM's QuantizationConfig.get_min_capability()
--   against DeviceCapability.to_int(), config/vllm.py 0.33.0:930 — and the architecture listed when the rule
--   lists some).  A platform with sized = FALSE runs the configuration, but its memory is not the GPU memory
--   model kvreg sizes an engine release on (vLLM's CPU backend, TPU through tpu-inference).
-- Columns:
--   checked         FALSE where nothing is judged: the release records no support (first-principles is not
--                   an engine) or the device states no architecture (generic-80gb); such rows run
--   platform_id, platform_label  the platform the device takes (NULL: none)
--   compute_capability  the device's (NULL off CUDA)
--   supported       the release runs this configuration on this device
--   sized           its memory is the one the engine model plans (FALSE on a sized: false platform)
--   runs            supported AND sized: what plans (275) require
--   reason          why not, from the data (engine id, hardware id, the rule's condition and its file:line), NULL
--                   when it runs; on an unsized platform its note, whatever the precision
--   cite            the file:line the verdict rests on (the failing or the first holding rule; NULL unchecked)
CREATE OR REPLACE VIEW engine_support AS
WITH dev AS (
    SELECT h.hardware_id, h.hardware_id AS hardware_name, h.vendor, h.architecture,
           hc.compute_capability AS cc
    FROM hardware h LEFT JOIN hardware_capabilities hc ON hc.hardware_id = h.hardware_id
),
platforms AS (
    SELECT p.*, string_agg(p.label, ', ' ORDER BY p.platform_idx) OVER (PARTITION BY p.engine_id) AS all_labels
    FROM engine_platforms p
),
matched AS (
    -- the first platform of each release that takes the device
    SELECT p.*, d.hardware_id,
           row_number() OVER (PARTITION BY p.engine_id, d.hardware_id ORDER BY p.platform_idx) AS rn
    FROM platforms p JOIN dev d
      ON (p.vendors IS NULL OR list_contains(string_split(p.vendors, ','), d.vendor))
     AND (p.architectures IS NULL OR list_contains(string_split(p.architectures, ','), d.architecture))
),
rules AS (
    -- one row per rule × precision it names × kind
    SELECT r.*, 'weights' AS kind, unnest(string_split(r.weights, ',')) AS dtype
    FROM engine_precision_rules r WHERE r.weights IS NOT NULL
    UNION ALL BY NAME
    SELECT r.*, 'KV' AS kind, unnest(string_split(r.kv, ',')) AS dtype
    FROM engine_precision_rules r WHERE r.kv IS NOT NULL
),
judged_rules AS (
    -- per release × platform × device × kind × precision: does one rule hold; the first failing rule's words
    SELECT r.engine_id, r.platform_id, d.hardware_id, r.kind, r.dtype,
           bool_or(coalesce((r.min_capability IS NULL OR d.cc >= r.min_capability - 1e-9)
                            AND (r.architectures IS NULL
                                 OR list_contains(string_split(r.architectures, ','), d.architecture)), FALSE))
               AS held,
           arg_min(r.cite, r.rule_idx) AS first_cite,
           arg_min(concat_ws(' ', CASE WHEN r.min_capability IS NOT NULL
                                       THEN format('compute capability ≥ {}', round(r.min_capability, 1)) END,
                             CASE WHEN r.architectures IS NOT NULL
                                  THEN format('one of {}', replace(r.architectures, ',', ', ')) END),
                   r.rule_idx) AS needs,
           arg_min(r.method, r.rule_idx) AS method,
           arg_min(r.cite, r.rule_idx) FILTER (WHERE coalesce((r.min_capability IS NULL
                                                               OR d.cc >= r.min_capability - 1e-9)
                                                              AND (r.architectures IS NULL
                                                                   OR list_contains(string_split(r.architectures, ','),
                                                                                    d.architecture)), FALSE))
               AS held_cite
    FROM rules r CROSS JOIN dev d
    GROUP BY ALL
),
grid AS (
    SELECT e.engine_id, d.*, w.dtype AS weights_dtype, k.dtype AS kv_dtype,
           EXISTS (SELECT 1 FROM engine_platforms p WHERE p.engine_id = e.engine_id) AS recorded
    FROM engines e CROSS JOIN dev d
    CROSS JOIN (SELECT dtype FROM precisions WHERE for_weights) w
    CROSS JOIN (SELECT dtype FROM precisions WHERE for_kv) k
),
looked AS (
    SELECT g.*, g.recorded AND g.architecture IS NOT NULL AS checked,
           m.platform_id, m.label AS platform_label, m.min_capability AS platform_min_capability,
           m.weights_dtypes, m.kv_dtypes, m.sized AS platform_sized, m.cite AS platform_cite, m.note AS platform_note,
           pl.all_labels, pl.platforms_cite,
           jw.held AS w_held, jw.needs AS w_needs, jw.method AS w_method, jw.first_cite AS w_cite,
           jw.held_cite AS w_held_cite,
           jk.held AS k_held, jk.needs AS k_needs, jk.method AS k_method, jk.first_cite AS k_cite,
           jk.held_cite AS k_held_cite
    FROM grid g
    LEFT JOIN matched m ON m.engine_id = g.engine_id AND m.hardware_id = g.hardware_id AND m.rn = 1
    LEFT JOIN (SELECT DISTINCT engine_id, all_labels, platforms_cite FROM platforms) pl ON pl.engine_id = g.engine_id
    LEFT JOIN judged_rules jw ON jw.engine_id = g.engine_id AND jw.platform_id = m.platform_id
         AND jw.hardware_id = g.hardware_id AND jw.kind = 'weights' AND jw.dtype = g.weights_dtype
    LEFT JOIN judged_rules jk ON jk.engine_id = g.engine_id AND jk.platform_id = m.platform_id
         AND jk.hardware_id = g.hardware_id AND jk.kind = 'KV' AND jk.dtype = g.kv_dtype
),
verdict AS (
    SELECT l.*,
           CASE WHEN NOT l.checked THEN NULL
                WHEN l.platform_id IS NULL
                    THEN format('{} has no platform for {} ({} {}): it runs on {} only ({})', l.engine_id,
                                l.hardware_name, l.vendor, l.architecture, l.all_labels, l.platforms_cite)
                WHEN l.platform_min_capability IS NOT NULL AND coalesce(l.cc < l.platform_min_capability - 1e-9, TRUE)
                    THEN format('{} on {} needs compute capability ≥ {} ({}): {} is {}', l.engine_id,
                                l.platform_label, round(l.platform_min_capability, 1), l.platform_cite,
                                l.hardware_name, coalesce(round(l.cc, 1)::VARCHAR, 'not stated'))
                WHEN NOT list_contains(string_split(l.weights_dtypes, ','), l.weights_dtype)
                    THEN format('{} on {} runs its {}, with weights in {} only ({}): not {}', l.engine_id,
                                l.hardware_name, l.platform_label, replace(l.weights_dtypes, ',', ', '),
                                l.platform_cite, l.weights_dtype)
                WHEN NOT list_contains(string_split(l.kv_dtypes, ','), l.kv_dtype)
                    THEN format('{} on {} runs its {}, with a KV cache in {} only ({}): not {}', l.engine_id,
                                l.hardware_name, l.platform_label, replace(l.kv_dtypes, ',', ', '), l.platform_cite,
                                l.kv_dtype)
                WHEN NOT coalesce(l.w_held, TRUE)
                    THEN format('{} weights need {} in {} on {} ({}{}): {} is {}', l.weights_dtype, l.w_needs,
                                l.engine_id, l.platform_label, coalesce(l.w_method || ': ', ''), l.w_cite,
                                l.hardware_name, coalesce(round(l.cc, 1)::VARCHAR, l.architecture))
                WHEN NOT coalesce(l.k_held, TRUE)
                    THEN format('a {} KV cache needs {} in {} on {} ({}{}): {} is {}', l.kv_dtype, l.k_needs,
                                l.engine_id, l.platform_label, coalesce(l.k_method || ': ', ''), l.k_cite,
                                l.hardware_name, coalesce(round(l.cc, 1)::VARCHAR, l.architecture))
           END AS unsupported_reason
    FROM looked l
)
SELECT v.engine_id, v.hardware_id, v.weights_dtype, v.kv_dtype, v.checked, v.platform_id, v.platform_label,
       v.cc AS compute_capability,
       v.unsupported_reason IS NULL AS supported,
       NOT v.checked OR coalesce(v.platform_sized, TRUE) AS sized,
       v.unsupported_reason IS NULL AND (NOT v.checked OR coalesce(v.platform_sized, TRUE)) AS runs,
       -- on a platform the memory model does not size, that is the reason whatever the precision (one sentence
       -- per device, which names the precisions the platform takes)
       CASE WHEN v.checked AND v.platform_id IS NOT NULL AND NOT v.platform_sized
            THEN format('{} runs {} only on its {} ({}): {}', v.engine_id, v.hardware_name, v.platform_label,
                        v.platform_cite, v.platform_note)
            ELSE v.unsupported_reason END AS reason,
       CASE WHEN NOT v.checked THEN NULL
            WHEN v.unsupported_reason IS NOT NULL AND v.platform_id IS NULL THEN v.platforms_cite
            WHEN v.unsupported_reason IS NOT NULL AND NOT coalesce(v.w_held, TRUE) THEN v.w_cite
            WHEN v.unsupported_reason IS NOT NULL AND NOT coalesce(v.k_held, TRUE) THEN v.k_cite
            ELSE coalesce(v.w_held_cite, v.k_held_cite, v.platform_cite) END AS cite
FROM verdict v;
