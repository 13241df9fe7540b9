-- kv_read_bytes(growing_token_bytes, bounded_groups, state_bytes, context_tokens): scalar macro,
-- the KV bytes one decode step reads for one sequence at a context (per TP rank, like its inputs).
-- Full and MLA layers read every token; sliding and chunked layers only min(s, window);
-- recurrent layers read their constant state.  Equals kv_sequence_costs.seq_bytes at the
-- ladder contexts: decode reads the whole cache it keeps.
-- Source: kv-cache-chapter.txt §2.4 (bytes per step = P·p + B·s·k); kv-arithmetic-hybrid-attention.txt
-- ("each token reads the weights plus the current cache").  Units: bytes.
CREATE OR REPLACE MACRO kv_read_bytes(growing_token_bytes, bounded_groups, state_bytes, context_tokens) AS
    growing_token_bytes * context_tokens
    + coalesce(list_sum(list_transform(bounded_groups,
                                       lambda g: g.token_bytes * least(context_tokens, g.window_tokens))), 0)
    + state_bytes
