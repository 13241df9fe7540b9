-- price_implausible: a rental quote or a purchase price no device is rented or sold at (a dropped decimal point, cents
-- written as dollars, a monthly rate or a whole node's price given per device-hour).  The rental basis takes a device's
-- lowest current quote (kvreg/sql/115_hardware_rates.sql), so one $0.0001 quote prices every plan of the device at
-- nothing, and one $2,990 quote, left the device's only one, makes it never chosen.
-- Bands, each the shipped registry's span (2026-12-03) with a margin of 19× or more on both sides:
--   rental, USD per device-hour   0.01 .. 200           shipped 0.39 (rtx-3090) .. 10.57 (b200, RunPod)
--   purchase, USD per device      100 .. 1,000,000      shipped 1,200 (rtx-4080) .. 53,000 (b300)
-- Grain: one row per out-of-band price.  Inputs: hardware_prices.
SELECT file, line, format('price.rental.{}.usd_per_hour', price_idx) AS key,
       format('rental quote {} of {} ({}) is {:.4g} USD per device-hour, outside 0.01 .. 200 (shipped quotes: '
              '0.39 .. 10.57)', price_idx, hardware_id, provider, usd) AS message,
       'write the on-demand price of one device for one hour in USD (a monthly rate ÷ 730, a node''s ÷ its '
       || 'devices); if it is right, widen the band in kvreg/checks/061_price_implausible.sql citing the quote' AS hint
FROM hardware_prices
WHERE price_kind = 'rental' AND NOT usd BETWEEN 0.01 AND 200
UNION ALL
SELECT file, line, 'price.purchase.usd',
       format('purchase price of {} ({}) is {:,.6g} USD per device, outside 100 .. 1,000,000 (shipped: 1,200 .. '
              '53,000)', hardware_id, provider, usd),
       'write the price of one device in USD (a whole server''s ÷ its devices); if it is right, widen the band in '
       || 'kvreg/checks/061_price_implausible.sql citing the source'
FROM hardware_prices
WHERE price_kind = 'purchase' AND NOT usd BETWEEN 100 AND 1e6
ORDER BY file, line, key
