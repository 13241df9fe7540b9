-- hardware_rates_at(cost_basis, tco_years, tco_usd_per_kwh, tco_pue, quote_window_days := 365): table macro, what one device costs
-- per hour on one stated basis; the view hardware_rates is the rental basis.
-- Grain: one row per hardware (every entry; usd_per_hour NULL where the basis has no price).
-- Inputs: hardware (tdp_watts), hardware_prices (rental quotes and purchase prices as read).
-- Bases:
--   'rental'  the lowest CURRENT on-demand rental quote of the device (USD per device-hour), with its provider
--             and date.  A quote is current unless (a) the same provider label (one offer: "Lambda (1x A10)")
--             lists a later quote for the device — a price list replaces its old price, it does not add to it —
--             or (b) it is dated more than quote_window_days (default 365) before the device's newest quote:
--             an offer not seen again within a year is not a price one can rent at (GPU rental prices moved by
--             2-4× a year over 2024-26).  Quotes dated after today are refused by validation (checks/
--             060_price_date_future.sql).  rental_quotes and rental_high_usd_per_hour show the current spread;
--             rental_superseded_quotes counts those left out by (a) or (b)
--   'tco'     total cost of ownership per device-hour: purchase ÷ (tco_years × 8,760 h) + tdp_watts ÷ 1,000
--             × tco_pue × tco_usd_per_kwh (energy at full board power, facility overhead by PUE).  Hosting,
--             networking, staff and financing are not counted; NULL without both a purchase price and a TDP
-- Units: USD per device-hour; purchase_usd per device; tdp_watts W; years; USD per kWh.
--   usd_per_hour        the rate on the basis (NULL when the device has no price on it: never 0)
--   price_provider      rental: the provider of the lowest current quote; tco: what the purchase price is ('MSRP', …)
--   price_date          when that price was seen (text: a purchase may be dated to the year or month)
--   capex_usd_per_hour, power_usd_per_hour  the two TCO terms (NULL on the rental basis)
--   basis_label         the basis in words, with its parameters, for reports
-- Source: 8,760 h = 365 × 24; TCO as purchase amortised straight-line plus energy (the report definition
--   states years, $/kWh and PUE).
CREATE OR REPLACE MACRO hardware_rates_at(cost_basis, tco_years := NULL, tco_usd_per_kwh := NULL, tco_pue := NULL,
                                          quote_window_days := 365)
AS TABLE
WITH quotes AS (
    SELECT hardware_id, price_idx, usd, provider, date,
           -- (a) a later quote of the same provider label replaces this one (ties: the later-listed entry)
           row_number() OVER (PARTITION BY hardware_id, provider ORDER BY date::DATE DESC, price_idx DESC) = 1
           -- (b) seen within the window before the device's newest quote
           AND date::DATE >= max(date::DATE) OVER (PARTITION BY hardware_id) - quote_window_days::INTEGER AS current
    FROM hardware_prices WHERE price_kind = 'rental'
),
rental AS (
    SELECT hardware_id, min(usd) FILTER (WHERE current) AS low, max(usd) FILTER (WHERE current) AS high,
           count(*) FILTER (WHERE current) AS quotes, count(*) FILTER (WHERE NOT current) AS superseded,
           arg_min(provider, (usd, price_idx)) FILTER (WHERE current) AS provider,
           arg_min(date, (usd, price_idx)) FILTER (WHERE current) AS date
    FROM quotes GROUP BY hardware_id
),
purchase AS (
    SELECT hardware_id, usd, provider AS kind, date FROM hardware_prices WHERE price_kind = 'purchase'
),
tco AS (
    SELECT h.hardware_id, p.usd AS purchase_usd, p.kind, p.date, h.tdp_watts,
           p.usd / (tco_years * 8760.0) AS capex,
           h.tdp_watts / 1000.0 * tco_pue * tco_usd_per_kwh AS power
    FROM hardware h JOIN purchase p USING (hardware_id)
)
SELECT h.hardware_id, cost_basis AS cost_basis,
       CASE cost_basis WHEN 'rental' THEN r.low WHEN 'tco' THEN t.capex + t.power END AS usd_per_hour,
       CASE cost_basis WHEN 'rental' THEN r.provider WHEN 'tco' THEN t.kind END AS price_provider,
       CASE cost_basis WHEN 'rental' THEN r.date WHEN 'tco' THEN t.date END AS price_date,
       coalesce(r.quotes, 0) AS rental_quotes, r.high AS rental_high_usd_per_hour,
       coalesce(r.superseded, 0) AS rental_superseded_quotes,
       t.purchase_usd, h.tdp_watts,
       CASE WHEN cost_basis = 'tco' THEN t.capex END AS capex_usd_per_hour,
       CASE WHEN cost_basis = 'tco' THEN t.power END AS power_usd_per_hour,
       CASE cost_basis
            WHEN 'rental' THEN format('on-demand rental, lowest current quote per device-hour: each provider''s'
                                      ' latest, seen within {} days of the device''s newest', quote_window_days)
            WHEN 'tco' THEN format('total cost of ownership: purchase over {} years + power at ${}/kWh, PUE {}',
                                   tco_years, tco_usd_per_kwh, tco_pue)
       END AS basis_label
FROM hardware h
LEFT JOIN rental r USING (hardware_id)
LEFT JOIN tco t USING (hardware_id);

CREATE OR REPLACE VIEW hardware_rates AS SELECT * FROM hardware_rates_at('rental');
