-- plan_scope: which scenarios `kvreg plan` refuses before any workload is known, as the planner decides it.
-- Grain: one row per model (registry models and served sets: served_models.served_id) × hardware × tp (tp_sizes).
-- Inputs: models (draft_for), served_models, hardware (interconnect), served_tp_sharding (037), tp_sizes;
--   macro tp_planned (117).
-- Columns:
--   draft_head   TRUE for a speculative-decoding draft head alone (models.draft_for set): plan and fit refuse it
--                (kvreg/fit.py check_servable), as a report does (checks/047_report_draft_head.sql); a served set
--                (target + draft) is not one
--   tp_planned   tp_planned(tp, served_tp_sharding.shards, interconnect): FALSE where plans (275) refuses the TP size
--                whatever the workload (heads that do not split; TP > 1 without an interconnect figure or its
--                domain size, or wider than the domain)
-- Read by `kvreg diff`'s focus (kvreg/diff/focus.py), which leaves these rows out of the moves it shows and
-- counts them.  Units: tp devices.
CREATE OR REPLACE VIEW plan_scope AS
WITH ids AS (
    SELECT model_id, draft_for IS NOT NULL AS draft_head FROM models
    UNION
    SELECT DISTINCT s.served_id, FALSE FROM served_models s WHERE s.served_id NOT IN (SELECT model_id FROM models)
)
SELECT i.model_id, h.hardware_id, t.tp, i.draft_head,
       tp_planned(t.tp, ts.shards, h.interconnect_bytes_per_s, h.interconnect_domain_size) AS tp_planned
FROM ids i CROSS JOIN hardware h CROSS JOIN tp_sizes t
LEFT JOIN served_tp_sharding ts ON ts.served_id = i.model_id AND ts.tp = t.tp;
