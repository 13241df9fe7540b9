-- roofline: how fast a batch of sequences decodes, and how long a prompt takes to prefill,
-- when the only limits are memory bandwidth, peak FLOP/s and (TP > 1) the all-reduces.
-- Grain: one row per model × hardware × engine × weights_dtype × kv_dtype × tp × context_tokens × batch
--   (batch from the batch_sizes axis: 1, 2, 4, …, 1024 concurrent sequences per replica; the
--   scenario's capacity limit is the column max_seqs, and batch_fits says whether batch ≤ max_seqs).
-- Inputs: capacity_at (pool, max_seqs, per-rank weights), model_weights, decode_costs_at,
--   decode_coefficients, hardware_peaks, batch_sizes, precisions; macros params_read, tp_fits_interconnect (116).
-- CEILINGS: every column without the expected_ prefix assumes bandwidth and peak are reached
--   (efficiency 1.0) and is a ceiling on speed (a floor on time).  expected_* columns divide by
--   the efficiencies of speed_efficiency for this hardware × the engine's family (engines.engine):
--   fitted to published throughput measurements where there are any, else the hardware entry's
--   stated figure (NULL when neither; a missing compute efficiency counts as 1.0 there).
--   efficiency_evidence says which, with n (speed_efficiency.evidence).  The expected step is
--   decode_step_s (104): the dense GEMMs, the routed-expert GEMMs (with their activations) and the attention one
--   after the other, each at its own roofs and their efficiencies, the all-reduce serial with the GEMMs — the
--   model the efficiencies were fitted under (251_throughput_ceilings).  The ceiling columns keep one greatest()
--   over the step's totals (weights + KV): a looser ceiling, still a ceiling.
-- Tensor parallel: one replica is tp devices; bandwidth and FLOP/s are summed over ranks (ideal);
--   bytes are the per-rank bytes of the core views × tp (so KV heads replicated when tp > kv_heads
--   are read on every rank); FLOP are the whole model's.
-- Units: bytes, FLOP, seconds, tokens per second, FLOP/byte.
--   ridge_flop_per_byte          peak ÷ bandwidth of one device (chapter §2.4)
--   weights_read_bytes           weight bytes one decode step reads (all ranks): weights × params_read(B)/P_total
--                                (MoE: expected experts hit by B tokens, uniform routing ASSUMED; see params_read)
--   kv_read_bytes_per_seq        KV bytes one step reads per sequence (all ranks)
--   decode_bytes_per_step        weights_read_bytes + batch × kv_read_bytes_per_seq
--   decode_flop_per_step         batch × decode_flop_per_token
--   decode_intensity             decode_flop_per_step ÷ decode_bytes_per_step (FLOP/byte)
--   decode_memory_s, decode_compute_s  bytes ÷ (tp·bandwidth), FLOP ÷ (tp·peak)
--   allreduce_s                  Megatron-LM tensor parallel (Shoeybi et al. 2019, arXiv:1909.08053 §3):
--                                two all-reduces of the hidden state per layer; a ring all-reduce moves
--                                2·(tp−1)/tp of the data per device: 2·layers·2(tp−1)/tp·batch·d_model·2 bytes
--                                (bf16 activations) ÷ interconnect bandwidth.  0 at tp = 1; NULL when the
--                                interconnect is unknown or tp exceeds its domain (that bandwidth does not
--                                reach the group).  Added to the step: the next layer waits for it.
--   tp_fits_interconnect         TRUE when one link domain holds the tp group at the stated bandwidth
--                                (tp = 1, or tp ≤ interconnect_domain_size); FALSE when tp > 1 and there is no
--                                interconnect or tp exceeds its domain; NULL when the domain size is unknown.
--                                Rows with FALSE keep their ceilings (a floor on time) but no all-reduce;
--                                `plans` refuses them.
--   decode_step_s                greatest(memory, compute) + all-reduce (NULL parts ignored)
--   decode_tok_per_s             batch ÷ decode_step_s (aggregate ceiling); tok_per_s_per_seq = 1 ÷ step
--   bound                        'memory' | 'compute' (NULL when a roof is unknown)
--   batch_ceiling_tok_per_s      tp·bandwidth ÷ kv_read_bytes_per_seq: the B → ∞ limit (chapter §2.5)
--   crossover_batch              weights_bytes ÷ kv_read_bytes_per_seq: the batch where the cache read equals
--                                the weight read (MoE: all weights, every expert hit), where half the batch
--                                ceiling is reached (chapter §2.5, §4.2)
--   asymptotic_intensity         decode_flop_per_token ÷ kv_read_bytes_per_seq: intensity as B → ∞
--   compute_bound_context_tokens s*: the context below which enough batching reaches the ridge; solves
--                                f(s) = I*·kv(s) with f, kv linear beyond every window (exact for models without
--                                bounded layers); 0 when no context does; NULL when no roof, no growing layer, or
--                                attention FLOP grow at least as fast as bytes (compute-bound at any context)
--   prefill_flop, prefill_bytes  one prompt of context_tokens: FLOP; weights read once (experts hit by n tokens)
--                                plus its KV written once
--   prefill_intensity            prefill_flop ÷ prefill_bytes
--   prefill_floor_s              greatest(prefill_flop ÷ tp·peak, prefill_bytes ÷ tp·bandwidth) + its all-reduces:
--                                the TTFT floor with no queueing; NULL without a FLOP figure (prefill is
--                                compute-bound, a bandwidth-only floor would mislead)
-- Source: kv-cache-chapter.txt §2.4, §2.5, §4.2; kv-arithmetic-hybrid-attention.txt (decode on the Mac).
-- roofline_at(context_list, knobs…, only_models, only_hardware) is the same arithmetic over capacity_at at any
-- contexts and engine settings (245; NULL = each release's default), its pool side cut to the listed models and
-- hardware (NULL = all): the report reads it at its workload context for its lists only (scope_roofline.sql),
-- instead of the view over the whole registry's contexts axis.  The view is the macro over the contexts axis.
CREATE OR REPLACE MACRO roofline_at(context_list, gpu_memory_utilization := NULL, max_num_seqs := NULL,
                                    max_num_batched_tokens := NULL, enforce_eager := NULL,
                                    num_speculative_tokens := NULL, block_size := NULL, only_models := NULL,
                                    only_hardware := NULL) AS TABLE
WITH scen AS (
    SELECT c.model_id, c.hardware_id, c.engine_id, c.weights_dtype, c.kv_dtype, c.tp, c.context_tokens,
           c.context_label, c.within_native, c.max_seqs, c.fits,
           w.weights_bytes, d.kv_read_bytes_per_seq * c.tp AS kv_read_bytes_per_seq,
           d.decode_flop_per_token, d.attention_flop_per_token, d.prefill_flop,
           k.params_total, k.params_active, k.moe_experts, k.moe_experts_per_token, k.hidden_size, k.layers,
           k.moe_activation_bytes_per_token * c.tp AS moe_act_bytes,
           k.growing_token_bytes * c.tp AS growing_token_bytes,
           (coalesce(list_sum(list_transform(k.bounded_groups, lambda g: g.token_bytes * g.window_tokens)), 0)
               + k.state_bytes) * c.tp AS constant_bytes_beyond_windows,
           2 * k.params_active + k.state_flop_per_token
               + 4 * k.hidden_size * coalesce(list_sum(list_transform(k.bounded_groups,
                                                     lambda g: g.layers * g.window_tokens)), 0)
               AS constant_flop_beyond_windows,
           k.decode_attn_flop_per_context_token AS flop_per_context_token,
           h.compute_dtype, h.peak_flop_per_s, h.bandwidth_bytes_per_s, h.ridge_flop_per_byte,
           se.bandwidth_efficiency, se.compute_efficiency, se.evidence AS efficiency_evidence,
           se.host_seq_step_s,
           h.interconnect_bytes_per_s,
           -- seconds of all-reduce per token in flight (a decode sequence or a prompt token)
           tp_fits_interconnect(c.tp, h.interconnect_bytes_per_s, h.interconnect_domain_size) AS tp_fits_interconnect,
           allreduce_s_per_token(c.tp, k.layers, k.hidden_size, a.bytes_per_element, h.interconnect_bytes_per_s,
                                 h.interconnect_domain_size) AS allreduce_s_per_token
    FROM capacity_at(context_list, gpu_memory_utilization := gpu_memory_utilization, max_num_seqs := max_num_seqs,
                     max_num_batched_tokens := max_num_batched_tokens, enforce_eager := enforce_eager,
                     num_speculative_tokens := num_speculative_tokens, block_size := block_size,
                     only_models := only_models, only_hardware := only_hardware) c
    JOIN model_weights w ON w.model_id = c.model_id AND w.weights_dtype = c.weights_dtype
    JOIN decode_costs_at(context_list) d ON d.model_id = c.model_id AND d.kv_dtype = c.kv_dtype AND d.tp = c.tp
                       AND d.context_tokens = c.context_tokens
    JOIN decode_coefficients k ON k.model_id = c.model_id AND k.kv_dtype = c.kv_dtype AND k.tp = c.tp
    JOIN hardware_peaks h ON h.hardware_id = c.hardware_id AND h.weights_dtype = c.weights_dtype
    JOIN engines en ON en.engine_id = c.engine_id
    LEFT JOIN speed_efficiency se ON se.hardware_id = c.hardware_id AND se.engine_family = en.engine
    CROSS JOIN (SELECT bytes_per_element FROM precisions WHERE dtype = 'bf16') a
),
step AS (
    SELECT s.*, b.batch, b.batch <= s.max_seqs AS batch_fits,
           s.weights_bytes * params_read(s.params_total, s.params_active, s.moe_experts, s.moe_experts_per_token,
                                         b.batch) / s.params_total AS weights_read_bytes,
           s.weights_bytes * params_read(s.params_total, s.params_active, s.moe_experts, s.moe_experts_per_token,
                                         s.context_tokens) / s.params_total AS prefill_weights_read_bytes,
           b.batch * s.decode_flop_per_token AS decode_flop_per_step,
           b.batch * s.allreduce_s_per_token AS allreduce_s
    FROM scen s CROSS JOIN batch_sizes b
),
timed AS (
    SELECT t.*,
           t.weights_read_bytes + t.batch * t.kv_read_bytes_per_seq AS decode_bytes_per_step,
           (t.weights_read_bytes + t.batch * t.kv_read_bytes_per_seq) / (t.tp * t.bandwidth_bytes_per_s)
               AS decode_memory_s,
           t.decode_flop_per_step / (t.tp * t.peak_flop_per_s) AS decode_compute_s,
           t.prefill_weights_read_bytes + t.kv_read_bytes_per_seq AS prefill_bytes,
           -- the step by kernel class at the efficiencies (decode_step_s, 104: the model the efficiencies were fitted
           -- under); the ceiling columns keep one greatest() over the totals, a looser ceiling, still a ceiling
           decode_step_s(t.weights_bytes, t.params_total, t.params_active, t.moe_experts, t.moe_experts_per_token,
                         t.batch, t.kv_read_bytes_per_seq, t.decode_flop_per_token,
                         t.tp * t.bandwidth_bytes_per_s, t.tp * t.peak_flop_per_s, t.allreduce_s_per_token,
                         t.bandwidth_efficiency, t.compute_efficiency, t.moe_act_bytes,
                         host_s_per_seq := t.host_seq_step_s) AS expected_decode_s
    FROM step t
)
SELECT model_id, hardware_id, engine_id, weights_dtype, kv_dtype, tp, context_tokens, context_label, within_native,
       batch, max_seqs, batch_fits, tp_fits_interconnect, compute_dtype,
       tp * bandwidth_bytes_per_s AS bandwidth_bytes_per_s,
       tp * peak_flop_per_s AS peak_flop_per_s,
       ridge_flop_per_byte,
       weights_bytes, weights_read_bytes, kv_read_bytes_per_seq,
       decode_flop_per_token, attention_flop_per_token, decode_flop_per_step, decode_bytes_per_step,
       decode_flop_per_step / decode_bytes_per_step AS decode_intensity,
       decode_memory_s, decode_compute_s, allreduce_s,
       greatest(decode_memory_s, decode_compute_s) + coalesce(allreduce_s, 0) AS decode_step_s,
       batch / (greatest(decode_memory_s, decode_compute_s) + coalesce(allreduce_s, 0)) AS decode_tok_per_s,
       1 / (greatest(decode_memory_s, decode_compute_s) + coalesce(allreduce_s, 0)) AS tok_per_s_per_seq,
       CASE WHEN decode_compute_s IS NULL OR decode_memory_s IS NULL THEN NULL
            WHEN decode_compute_s > decode_memory_s THEN 'compute' ELSE 'memory' END AS bound,
       tp * bandwidth_bytes_per_s / kv_read_bytes_per_seq AS batch_ceiling_tok_per_s,
       weights_bytes / kv_read_bytes_per_seq AS crossover_batch,
       decode_flop_per_token / kv_read_bytes_per_seq AS asymptotic_intensity,
       CASE WHEN ridge_flop_per_byte * growing_token_bytes > flop_per_context_token
            THEN greatest(0, (constant_flop_beyond_windows - ridge_flop_per_byte * constant_bytes_beyond_windows)
                             / (ridge_flop_per_byte * growing_token_bytes - flop_per_context_token)) END
           AS compute_bound_context_tokens,
       prefill_flop, prefill_bytes,
       prefill_flop / prefill_bytes AS prefill_intensity,
       -- the one TTFT-floor formula (105), as plans' TTFT check uses it: the prompt's FLOP and bytes at tp devices
       prefill_floor_s(context_tokens, prefill_flop / context_tokens, prefill_bytes, 0, tp * peak_flop_per_s,
                       tp * bandwidth_bytes_per_s, allreduce_s_per_token) AS prefill_floor_s,
       bandwidth_efficiency, compute_efficiency, efficiency_evidence,
       CASE WHEN bandwidth_efficiency IS NOT NULL THEN expected_decode_s END AS expected_decode_step_s,
       CASE WHEN bandwidth_efficiency IS NOT NULL THEN batch / expected_decode_s END AS expected_decode_tok_per_s,
       CASE WHEN bandwidth_efficiency IS NOT NULL THEN 1 / expected_decode_s END AS expected_tok_per_s_per_seq
FROM timed;

CREATE OR REPLACE VIEW roofline AS
SELECT * FROM roofline_at((SELECT list(context_tokens ORDER BY context_tokens) FROM contexts))
