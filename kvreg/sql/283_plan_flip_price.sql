-- plan_flip_usd_per_device_hour(recommended_usd_per_hour, runner_up_devices): scalar macro, the runner-up's price per
-- device-hour at which it costs what the recommendation does: recommended $/hour ÷ runner-up devices.  At that price
-- or below the runner-up wins (the price-sensitivity line of issue 12).  The ONE definition: the report's
-- sensitivity (kvreg/report/queries/sensitivity.sql) and plan_levers (284) use it.
-- Grain: scalar.  Units: USD per hour, devices → USD per device-hour; NULL without a price.
CREATE OR REPLACE MACRO plan_flip_usd_per_device_hour(recommended_usd_per_hour, runner_up_devices) AS
    recommended_usd_per_hour / runner_up_devices
