"""Property tests over the registry: block rounding and padding never create capacity.

Given the same available KV memory, an engine release never admits more sequences than
first-principles arithmetic (rows whose recurrent state the release keeps outside the KV
pool are excluded: there the same-pool comparison does not apply); and the logged
concurrency never increases with max_model_len for a fixed pool.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

GIB = 2**30
LENS = [1024, 4096, 8192, 20000, 32768, 40960, 131072, 262144]


@settings(max_examples=12, deadline=None)
@given(avail_gib=st.floats(min_value=0.5, max_value=250), L=st.sampled_from(LENS),
       T=st.sampled_from([2048, 8192, 16384]))
def test_engine_never_admits_more_than_first_principles(con, avail_gib, L, T):
    bad = con.execute(
        "SELECT c.engine_id, c.model_id, c.kv_dtype, c.tp, c.admitted_seqs, c.first_principles_seqs"
        " FROM engine_capacity_for_memory(?, ?, ?) c JOIN engine_kv_layout k USING (engine_id, model_id, kv_dtype, tp)"
        # (a TP whose heads do not split logs no concurrency, NULL, which least() would skip: refusal 'tp_heads')
        " WHERE NOT k.recurrent_outside_pool AND c.refusal IS DISTINCT FROM 'tp_heads'"
        " AND least(floor(c.logged_max_concurrency), 1e9) > c.first_principles_seqs",
        [avail_gib * GIB, L, T]).fetchall()
    assert bad == []


@settings(max_examples=8, deadline=None)
@given(avail_gib=st.floats(min_value=0.5, max_value=250), T=st.sampled_from([2048, 8192]))
def test_concurrency_never_increases_with_max_model_len(con, avail_gib, T):
    rows = {}
    for L in LENS:
        for eid, mid, kv, tp, conc in con.execute(
                # a TP whose heads do not split logs no concurrency at all (refusal 'tp_heads', kvreg/sql/037)
                "SELECT engine_id, model_id, kv_dtype, tp, logged_max_concurrency FROM engine_capacity_for_memory(?, ?, ?)"
                " WHERE refusal IS DISTINCT FROM 'tp_heads'",
                [avail_gib * GIB, L, T]).fetchall():
            rows.setdefault((eid, mid, kv, tp), []).append(conc)
    for key, concs in rows.items():
        assert all(a >= b for a, b in zip(concs, concs[1:])), key
