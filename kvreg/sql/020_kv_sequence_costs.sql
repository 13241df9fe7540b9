-- kv_sequence_costs: the complete memory cost of one sequence at each context length of the axis.
-- Grain: one row per model × kv_dtype × tp × context_tokens (contexts axis table).
-- Inputs: contexts; table macro kv_sequence_costs_at (015), which holds the arithmetic, its columns
--   and units (bytes per sequence, per TP rank): this view is that macro applied to the axis, so a
--   context off the axis (kvreg fit --context 32K) and the view can never disagree.
-- Source: kv-cache-chapter.txt §2.2; kv-arithmetic-hybrid-attention.txt; kv-budget-lesson.txt.
CREATE OR REPLACE VIEW kv_sequence_costs AS
SELECT * FROM kv_sequence_costs_at((SELECT list(context_tokens ORDER BY context_tokens) FROM contexts))
