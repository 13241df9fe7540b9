"""Prices on a stated basis: rental quotes, purchase + TDP, and the TCO arithmetic (115_hardware_rates.sql)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.registry_factory import SOURCE, con_for, hardware_entry


def _hw(hid, price):
    return hardware_entry(hid, price=price, sources=SOURCE + [{"id": "p", "title": "price list"}])


@pytest.fixture(scope="module")
def con():
    return con_for(models={"m": {"layers": 2, "groups": [{"kind": "full", "count": 2, "kv_heads": 8, "head_dim": 128}]}},
                   hardware={
                       "two-quotes": _hw("two-quotes", {"rental": [
                           {"usd_per_hour": {"value": 3.0, "source": "p"}, "provider": "A", "date": dt.date(2026, 5, 1)},
                           {"usd_per_hour": {"value": 2.5, "source": "p"}, "provider": "B", "date": dt.date(2026, 4, 1)}],
                           "purchase": {"usd": {"value": 35040, "source": "p"}, "kind": "MSRP", "date": "2026"},
                           "tdp_w": {"value": 1000, "source": "p"}}),
                       "one-quote-form": _hw("one-quote-form", {"usd_per_hour": {"value": 1.25, "source": "p"},
                                                                "provider": "C", "date": dt.date(2026, 5, 7)}),
                       "purchase-no-tdp": _hw("purchase-no-tdp", {"purchase": {"usd": {"value": 4000, "source": "p"},
                                                                               "kind": "list price"}}),
                       # P's June quote replaces its January one; Q's 2019 quote is more than 365 days older than
                       # the newest (2026-06-01); R stays current
                       "stale-and-superseded": _hw("stale-and-superseded", {"rental": [
                           {"usd_per_hour": {"value": 1.0, "source": "p"}, "provider": "P", "date": dt.date(2026, 1, 1)},
                           {"usd_per_hour": {"value": 2.0, "source": "p"}, "provider": "P", "date": dt.date(2026, 6, 1)},
                           {"usd_per_hour": {"value": 0.1, "source": "p"}, "provider": "Q", "date": dt.date(2019, 1, 1)},
                           {"usd_per_hour": {"value": 2.5, "source": "p"}, "provider": "R", "date": dt.date(2026, 5, 1)}]}),
                       "unpriced": hardware_entry("unpriced"),
                   })


def _rates(con, sql):
    return {r[0]: r[1:] for r in con.execute(sql).fetchall()}


def test_rental_basis_is_the_lowest_quote_with_its_provider_and_the_spread(con):
    got = _rates(con, "SELECT hardware_id, usd_per_hour, price_provider, price_date, rental_quotes, "
                      "rental_high_usd_per_hour FROM hardware_rates")
    assert got["two-quotes"] == (2.5, "B", "2026-04-01", 2, 3.0)
    assert got["one-quote-form"] == (1.25, "C", "2026-05-07", 1, 1.25)   # the older one-quote form still reads
    assert got["purchase-no-tdp"][0] is None and got["purchase-no-tdp"][3] == 0
    assert got["unpriced"][0] is None


def test_a_quote_replaced_by_its_provider_or_out_of_the_window_is_not_the_price(con):
    got = _rates(con, "SELECT hardware_id, usd_per_hour, price_provider, price_date, rental_quotes, "
                      "rental_high_usd_per_hour, rental_superseded_quotes FROM hardware_rates")
    # current: P 2.0 (2026-06-01) and R 2.5; left out: P's 1.0 (replaced) and Q's 0.1 (2019, outside 365 days)
    assert got["stale-and-superseded"] == (2.0, "P", "2026-06-01", 2, 2.5, 2)
    assert got["two-quotes"][-1] == 0
    # a wider window brings Q's 2019 quote back; P's January price stays replaced by its June one
    (low, n) = con.execute("SELECT usd_per_hour, rental_quotes FROM hardware_rates_at('rental', quote_window_days :="
                           " 3000) WHERE hardware_id = 'stale-and-superseded'").fetchone()
    assert (low, n) == (0.1, 3)


def test_a_quote_dated_in_the_future_is_a_located_problem(tmp_path):
    from kvreg.problems import KvregError
    from kvreg.registry import load_registry
    from tests.registry_factory import write_project

    write_project(tmp_path, hardware={"h": _hw("h", {"rental": [
        {"usd_per_hour": {"value": 0.2, "source": "p"}, "provider": "Future Cloud", "date": dt.date(2999, 1, 1)}]})})
    with pytest.raises(KvregError) as e:
        load_registry(tmp_path)
    (p,) = [p for p in e.value.problems if p.code == "price-date-future"]
    assert p.file.endswith("hardware/h.yaml") and p.key == "price.rental.0.date"
    assert "dated 2999-01-01, after today" in p.message and "YYYY-MM-DD" in p.hint


def test_tco_is_purchase_over_years_plus_power_at_pue(con):
    # 35,040 USD over 4 years = 35,040 / 35,040 h = 1.00 USD/h; 1,000 W × PUE 1.5 × 0.10 USD/kWh = 0.15 USD/h
    got = _rates(con, "SELECT hardware_id, usd_per_hour, capex_usd_per_hour, power_usd_per_hour, price_provider "
                      "FROM hardware_rates_at('tco', tco_years := 4, tco_usd_per_kwh := 0.10, tco_pue := 1.5)")
    assert got["two-quotes"][0] == pytest.approx(1.15)
    assert got["two-quotes"][1:] == (pytest.approx(1.0), pytest.approx(0.15), "MSRP")
    # no TDP, no rental-only fallback: a device without both terms has no TCO price (never a partial one)
    assert got["purchase-no-tdp"][0] is None
    assert got["one-quote-form"][0] is None


def test_plans_price_on_the_rental_basis(con):
    (usd,) = con.execute("SELECT DISTINCT price_usd_per_hour FROM hardware_peaks WHERE hardware_id = 'two-quotes'"
                         ).fetchone()
    assert usd == 2.5


def test_a_half_written_quote_is_a_problem_with_a_hint(tmp_path):
    from kvreg.problems import KvregError
    from kvreg.registry import load_registry
    from tests.registry_factory import write_project

    write_project(tmp_path, hardware={"h": _hw("h", {"usd_per_hour": {"value": 1.0, "source": "p"}})})
    with pytest.raises(KvregError) as e:
        load_registry(tmp_path)
    (p,) = [p for p in e.value.problems if "price" in p.key]
    assert "usd_per_hour, provider and date" in p.message and "rental" in p.hint
