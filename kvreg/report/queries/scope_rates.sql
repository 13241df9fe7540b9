-- scope_rates: what one device costs per hour on the report's cost basis (temp table report_rates, read
-- by plan_options, options, hardware and warnings).
-- Grain: one row per hardware.  Inputs: hardware_rates_at macro (kvreg/sql/115_hardware_rates.sql);
--   parameters $cost_basis ('rental' | 'tco'), $tco_years, $tco_usd_per_kwh, $tco_pue (the report's
--   cost_basis block; NULL on the rental basis).
-- Units: USD per device-hour (usd_per_hour), as hardware_rates_at.
SELECT * FROM hardware_rates_at($cost_basis, tco_years := $tco_years, tco_usd_per_kwh := $tco_usd_per_kwh,
                                tco_pue := $tco_pue)
