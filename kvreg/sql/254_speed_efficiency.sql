-- speed_efficiency: the efficiencies roofline and plans use, per hardware × engine family, fitted on every
-- throughput source (speed_efficiency_by_holdout at holdout ''), with an evidence line for people.
-- Grain: one row per hardware × engine family.  Inputs: speed_efficiency_by_holdout.
-- Columns as speed_efficiency_by_holdout (host_seq_step_s, host_seq_step_level, host_seq_step_n among them), plus evidence: e.g. "bandwidth 0.43 measured (n=38, hardware);
--   compute 0.47 measured (n=26, hardware)", or "... estimated (stated in the hardware entry)".
CREATE OR REPLACE VIEW speed_efficiency AS
SELECT hardware_id, engine_family, bandwidth_efficiency, bandwidth_basis, bandwidth_level, bandwidth_n,
       compute_efficiency, compute_basis, compute_level, compute_n,
       -- the host's seconds per sequence per decode step (252 speed_seq_step_fit), for decode_step_s (104)
       host_seq_step_s, host_seq_step_level, host_seq_step_n,
       concat_ws('; ',
           CASE WHEN bandwidth_efficiency IS NOT NULL THEN
               format('bandwidth {:.2f} {} ({})', bandwidth_efficiency, bandwidth_basis,
                      CASE WHEN bandwidth_level = 'stated' THEN 'stated in the hardware entry'
                           ELSE format('n={}, {}', bandwidth_n, bandwidth_level) END) END,
           CASE WHEN compute_efficiency IS NOT NULL THEN
               format('compute {:.2f} {} ({})', compute_efficiency, compute_basis,
                      CASE WHEN compute_level = 'stated' THEN 'stated in the hardware entry'
                           ELSE format('n={}, {}', compute_n, compute_level) END) END) AS evidence
FROM speed_efficiency_by_holdout
WHERE holdout = ''
