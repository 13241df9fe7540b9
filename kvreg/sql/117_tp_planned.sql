-- tp_planned(tp, tp_shards, interconnect_bytes_per_s, interconnect_domain_size): scalar macro, whether `plans`
-- (275) plans a model at this TP size on this hardware as far as the TP itself goes: the heads split evenly
-- (tp_shards, tp_sharding 037: NULL, as for a served set, counts as TRUE) and the group fits one interconnect
-- domain (tp_fits_interconnect, 116: NULL counts as FALSE, as plans refuses a TP > 1 without a domain size).
-- FALSE is a TP size the planner refuses whatever the workload ("tensor parallelism cannot split …", "tp > 1
-- needs …", "the interconnect links N devices …"): plans gives such a row no max_context_tokens, and `kvreg diff`'s
-- focus (kvreg/diff/focus.py) leaves its rows out of the largest moves.
-- Units: tp and interconnect_domain_size devices; interconnect_bytes_per_s bytes/s.
CREATE OR REPLACE MACRO tp_planned(tp, tp_shards, interconnect_bytes_per_s, interconnect_domain_size) AS
    coalesce(tp_shards, TRUE) AND coalesce(tp_fits_interconnect(tp, interconnect_bytes_per_s,
                                                                interconnect_domain_size), FALSE);
