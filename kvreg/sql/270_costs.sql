-- costs: what a roofline scenario costs to rent, per hour, per million output tokens and per
-- concurrent sequence per month.
-- Grain: one row per roofline row (model × hardware × engine × weights_dtype × kv_dtype × tp ×
--   context_tokens × batch); batch_fits says whether the batch fits the KV pool.
-- Inputs: roofline, hardware_peaks (price per device per hour, with provider and date).
-- Units: USD.
--   gpus                                    devices in one replica (= tp)
--   usd_per_hour                            price per device-hour × gpus
--   usd_per_million_output_tokens           usd_per_hour ÷ (decode_tok_per_s × 3,600) × 10^6, at the CEILING
--   expected_usd_per_million_output_tokens  the same at expected_decode_tok_per_s (stated efficiency)
--   usd_per_concurrent_seq_month            usd_per_hour × 730 h/month ÷ batch (730 = 8,760 h/year ÷ 12)
-- A missing price or throughput leaves these NULL, never 0.  Output tokens only: the prompt's
-- prefill time is not charged here.
CREATE OR REPLACE VIEW costs AS
SELECT r.model_id, r.hardware_id, r.engine_id, r.weights_dtype, r.kv_dtype, r.tp, r.context_tokens, r.batch,
       r.max_seqs, r.batch_fits,
       r.tp AS gpus,
       h.price_usd_per_hour, h.price_provider, h.price_date,
       h.price_usd_per_hour * r.tp AS usd_per_hour,
       r.decode_tok_per_s, r.expected_decode_tok_per_s,
       h.price_usd_per_hour * r.tp / (r.decode_tok_per_s * 3600) * 1e6 AS usd_per_million_output_tokens,
       h.price_usd_per_hour * r.tp / (r.expected_decode_tok_per_s * 3600) * 1e6
           AS expected_usd_per_million_output_tokens,
       h.price_usd_per_hour * r.tp * 730 / r.batch AS usd_per_concurrent_seq_month
FROM roofline r
JOIN hardware_peaks h ON h.hardware_id = r.hardware_id AND h.weights_dtype = r.weights_dtype
