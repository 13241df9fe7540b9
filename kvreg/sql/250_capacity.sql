-- capacity: how many sequences of each context on the axis fit in the pool, naive vs first principles.
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp × context_tokens
--   (contexts axis table).
-- Inputs: contexts; table macro capacity_at (245), which holds the arithmetic, its columns and
--   units (sequences, tokens, bytes per device): this view is that macro applied to the axis, so
--   kvreg fit at a context off the axis and the view can never disagree.
-- Source: kv-budget-lesson.txt (36 vs 48 sequences), kv-arithmetic-hybrid-attention.txt.
CREATE OR REPLACE VIEW capacity AS
SELECT * FROM capacity_at((SELECT list(context_tokens ORDER BY context_tokens) FROM contexts))
