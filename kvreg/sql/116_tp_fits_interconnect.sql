-- tp_fits_interconnect(tp, interconnect_bytes_per_s, interconnect_domain_size): scalar macro, whether a tensor-
-- parallel group of tp devices sits inside one interconnect domain at the stated link bandwidth.
-- TRUE at tp = 1 or tp ≤ interconnect_domain_size; FALSE when tp > 1 and there is no interconnect figure, or tp
-- exceeds its domain; NULL when the domain size is not stated.  The one definition: roofline (260) carries it as a
-- column, plans (275) refuses a FALSE / NULL row, and `kvreg diff`'s focus (kvreg/diff/focus.py, through
-- tp_planned, 117) leaves those rows out.
-- Units: tp and interconnect_domain_size devices; interconnect_bytes_per_s bytes/s (only tested for NULL).
-- Source: hardware entries' interconnect.domain_size (an HGX node's NVSwitch links 8; an NVLink bridge 2).
CREATE OR REPLACE MACRO tp_fits_interconnect(tp, interconnect_bytes_per_s, interconnect_domain_size) AS
    CASE WHEN tp = 1 THEN TRUE
         WHEN interconnect_bytes_per_s IS NULL THEN FALSE
         ELSE tp <= interconnect_domain_size END;
