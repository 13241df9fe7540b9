-- allreduce_s_per_token(tp, layers, hidden_size, bytes_per_element, interconnect_bytes_per_s,
--                       interconnect_domain_size): scalar macro, the seconds of tensor-parallel all-reduce ONE token in
-- flight costs (a decode sequence's token or a prompt token), on the link at full speed:
--   2 · layers · 2(tp − 1)/tp · hidden_size · bytes_per_element ÷ interconnect_bytes_per_s
-- two all-reduces per layer (after attention's output projection and after the MLP's down projection: Megatron-LM's
-- row-parallel linears), each a ring moving 2(tp − 1)/tp of the d_model activations of the token.
-- 0.0 at tp 1; NULL when tp exceeds the interconnect domain or the link bandwidth is unknown (callers then leave the
-- term out or refuse the row: tp_fits_interconnect, 116).  The one definition: throughput_ceilings (251), roofline
-- (260) and plans (275) call it with bf16's bytes per element (activations are exchanged in bf16).
-- Units: tokens → seconds; hidden_size elements; bytes_per_element bytes; interconnect_bytes_per_s bytes/s.
-- Source: Megatron-LM (Shoeybi et al. 2019, §3: two all-reduces per layer in the forward pass); ring all-reduce
-- volume 2(n − 1)/n of the buffer (NCCL's documented algorithm bandwidth factor).
CREATE OR REPLACE MACRO allreduce_s_per_token(tp, layers, hidden_size, bytes_per_element, interconnect_bytes_per_s,
                                              interconnect_domain_size) AS
    CASE WHEN tp = 1 THEN 0.0
         WHEN interconnect_bytes_per_s IS NULL OR tp > interconnect_domain_size THEN NULL
         ELSE 2 * layers * 2.0 * (tp - 1) / tp * hidden_size * bytes_per_element / interconnect_bytes_per_s END;
