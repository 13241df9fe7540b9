-- engine_approximate_gcd(vals, lower_bound): scalar macro, vLLM's _approximate_gcd — the chunk size d that rounds a
-- list of layer counts up to multiples of d with the least total padding — the ONE definition (DeepSeek-V4's
-- layouts: engine_compressed_buckets_at's layer tuples, engine_packed_buckets_at's pattern repeats).
-- Grain: one value per call.  Inputs: vals (a LIST of positive counts), lower_bound (the smallest d tried; NULL = 1).
-- Units: layers (or pattern repeats) per group.
-- Rule (v1/core/kv_cache_utils.py 0.22.0:1458-1490; the same function in v1/core/kv_cache_planning.py 0.33.0:879-911):
--   d from max(1, lower_bound) to max(vals); pad(d) = Σ (d − x mod d) mod d; the least pad, ties to the larger d;
--   lower_bound above max(vals): lower_bound.
CREATE OR REPLACE MACRO engine_approximate_gcd(vals, lower_bound) AS coalesce(
    (SELECT arg_min(r.d, [list_sum(list_transform(vals, lambda x: (r.d - x % r.d) % r.d)), -r.d])
     FROM (SELECT unnest(range(greatest(1, coalesce(lower_bound, 1))::BIGINT, list_max(vals)::BIGINT + 1)) AS d) r),
    greatest(1, coalesce(lower_bound, 1))::BIGINT)
