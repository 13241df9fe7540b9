-- price_date_future: a rental quote dated after today.  A quote records what a provider listed on a day already
-- seen; a future date is a typo (2031 for 2021, a month and day swapped) that would make the quote the device's
-- newest and push its other quotes out of the rental basis' window (115_hardware_rates.sql).
-- Grain: one row per such quote.  Inputs: hardware_prices.
SELECT file, line, format('price.rental.{}.date', price_idx) AS key,
       format('rental quote {} of {} is dated {}, after today ({})', price_idx, hardware_id, date, current_date)
           AS message,
       'write the day the price list was read (YYYY-MM-DD); a quote cannot be dated in the future' AS hint
FROM hardware_prices
WHERE price_kind = 'rental' AND date::DATE > current_date
