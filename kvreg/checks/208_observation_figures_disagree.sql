-- observation_figures_disagree: two figures one startup log printed that vLLM's own arithmetic cannot both have
-- produced (an edited or corrupted line, or an observation filed under the wrong release), so calibration would
-- compare kvreg with a figure no engine printed.
-- Grain: one row per observation × disagreeing pair (key: the entry path of the first figure; the message names the
--   other one, both with their entry line and, where the excerpt numbers it, their log line).
-- Pairs, each with the release's rule (engine_accounting.md §3, §4; the macros 211 engine_concurrency and 212
-- engine_logged_tokens, never a second copy of them; 229 observation_engine for the rules and the layout):
--   length     "Maximum concurrency for L tokens" vs settings.max_model_len: vLLM prints the model config's
--              max_model_len there (kv_cache_utils.py 0.19.0:1324), so L = max_model_len.
--   tokens ~ concurrency (both printed by the same worker, so exact up to the %.2f of the concurrency):
--     concurrency_x_len (≥0.21)  tokens = int(conc × L): tokens ∈ [tokens at conc − 0.005, tokens at conc + 0.005];
--     tokens_over_len (V0, ≤0.8) conc = NB × bs / L = tokens / L: |tokens / L − conc| ≤ 0.005;
--     other rules, layout known: conc = NB / request blocks, so NB ∈ [(conc − 0.005), (conc + 0.005)] × request
--                                blocks, and tokens lies between the tokens of those two block counts.
--   tokens ~ num_gpu_blocks, concurrency ~ num_gpu_blocks (layout known): the figures the release prints for the
--              logged blocks.  num_gpu_blocks (v1/metrics/loggers.py) is the min over the workers (§3
--              get_kv_cache_configs); 0.9–0.15 print tokens and concurrency per worker before that min (§4), so with
--              tp × pp > 1 the printed figures may only exceed those of the logged blocks.
--   available ~ blocks (layout known, so the block bytes are known): num_blocks = available // block bytes (§3) at
--              the printed available memory ∓ half its last decimal (229 available_blocks_low/high); the blocks are
--              the logged num_gpu_blocks, else those the tokens imply (229 tokens_implied_blocks).  One rank prints
--              the memory and the blocks are the min over ranks, so with tp × pp > 1 they may only be fewer.
-- A concurrency is printed with %.2f: it stands for [c − 0.005, c + 0.005] (1e-9 slack for the binary value).
-- An entry whose figures_disagree says why a person kept the log anyway (ingest-log --force) is not reported.
-- Inputs: observation_engine (229: observations with engine_accounting's rules, engine_kv_layout,
--   engine_request_blocks), observations' *_line / *_log_line columns (kvreg/engine_tables.py).
-- Reads views: 010_kv_layer_costs, 200_engine_approximate_gcd, 200_engine_compressed_pages, 200_engine_layer_specs, 201_engine_compressed_bucket_rows, 201_engine_compressed_buckets, 201_engine_compressed_packed, 201_engine_kv_buckets, 202_engine_kv_layout, 203_engine_budget, 210_engine_group_blocks, 211_engine_concurrency, 212_engine_logged_tokens, 215_engine_request_blocks, 229_observation_engine
WITH e AS (
    SELECT e.*, coalesce(e.max_concurrency_tokens, e.max_model_len) AS Lc, e.tp * e.pp > 1 AS multi_rank,
           replace(e.engine_id, '_', '-') AS rel,
           -- a concurrency whose pool (conc × L) is beyond 2^53 tokens is no engine's (and would overflow BIGINT)
           coalesce(e.max_concurrency * coalesce(e.max_concurrency_tokens, e.max_model_len, 1), 0) < 2^53 AS conc_ok
    FROM observation_engine e
    WHERE e.figures_disagree IS NULL
),
figs AS (  -- "VALUE (entry line N, log line M)" of each figure
    SELECT e.*,
           format('{:,} (entry line {}{})', kv_cache_tokens, kv_cache_tokens_line,
                  coalesce(', log line ' || kv_cache_tokens_log_line, '')) AS tokens_at,
           format('{:,} (entry line {}{})', num_gpu_blocks, num_gpu_blocks_line,
                  coalesce(', log line ' || num_gpu_blocks_log_line, '')) AS blocks_at,
           format('{}x (entry line {}{})', max_concurrency, max_concurrency_line,
                  coalesce(', log line ' || max_concurrency_log_line, '')) AS conc_at,
           format('{} GiB (entry line {}{})', round(available_kv_bytes / 2^30, 2), available_kv_line,
                  coalesce(', log line ' || available_kv_log_line, '')) AS avail_at
    FROM e
),
pairs AS (
    -- length: the concurrency line's L is the engine's max_model_len
    SELECT file, line, 'logged.max_concurrency_tokens' AS key,
           format('logged.max_concurrency_tokens {} (entry line {}{}) but settings.max_model_len {} (entry line {}): '
                  'vLLM prints "Maximum concurrency for L tokens per request" with L = the max_model_len it runs',
                  max_concurrency_tokens, max_concurrency_tokens_line,
                  coalesce(', log line ' || max_concurrency_tokens_log_line, ''), max_model_len, max_model_len_line)
               AS message
    FROM figs WHERE max_concurrency_tokens <> max_model_len
    UNION ALL
    -- tokens ~ concurrency, concurrency_x_len: tokens = int(conc × L), monotone in conc
    SELECT file, line, 'logged.kv_cache_tokens',
           format('logged.kv_cache_tokens {} disagrees with logged.max_concurrency {} at {:,} tokens: {} prints '
                  'tokens = int(concurrency × max_model_len), {:,}–{:,} for a concurrency printed as {:.2f}',
                  tokens_at, conc_at, Lc, rel, lo, hi, max_concurrency)
    FROM (SELECT *, engine_logged_tokens(NULL, NULL, NULL, max_concurrency - 0.005 - 1e-9, Lc, logged_tokens_rule) AS lo,
                    engine_logged_tokens(NULL, NULL, NULL, max_concurrency + 0.005 + 1e-9, Lc, logged_tokens_rule) AS hi
          FROM figs WHERE logged_tokens_rule = 'concurrency_x_len' AND conc_ok)
    WHERE kv_cache_tokens NOT BETWEEN lo AND hi
    UNION ALL
    -- a concurrency no pool of at most 2^53 tokens gives, beside any other pool figure
    SELECT file, line, 'logged.max_concurrency',
           format('logged.max_concurrency {} times {:,} tokens is beyond 2^53 tokens: no pool prints it beside '
                  'logged.kv_cache_tokens {}, logged.num_gpu_blocks {}', conc_at, coalesce(Lc, 1),
                  coalesce(tokens_at, 'not logged'), coalesce(blocks_at, 'not logged'))
    FROM figs WHERE NOT conc_ok AND (kv_cache_tokens IS NOT NULL OR num_gpu_blocks IS NOT NULL)
    UNION ALL
    -- tokens ~ concurrency, tokens_over_len with tokens = NB × bs: conc = NB × bs / L is the macro at (tokens, bs 1)
    SELECT file, line, 'logged.kv_cache_tokens',
           format('logged.kv_cache_tokens {} disagrees with logged.max_concurrency {}: {} prints concurrency = '
                  'tokens / max_model_len = {:,} / {:,} = {:.4f}, not {:.2f}', tokens_at, conc_at, rel, kv_cache_tokens,
                  Lc, x, max_concurrency)
    FROM (SELECT *, engine_concurrency(kv_cache_tokens, NULL, 1, Lc, concurrency_rule) AS x
          FROM figs WHERE concurrency_rule = 'tokens_over_len' AND logged_tokens_rule = 'blocks_x_block_size')
    WHERE abs(x - max_concurrency) > 0.005 + 1e-9
    UNION ALL
    -- tokens ~ concurrency, other rules (layout known): the blocks the concurrency allows, then their tokens
    SELECT file, line, 'logged.kv_cache_tokens',
           format('logged.kv_cache_tokens {} disagrees with logged.max_concurrency {}: in {} the concurrency is '
                  'blocks / {:,} blocks per request, so {:,}–{:,} blocks, which print {:,}–{:,} tokens', tokens_at, conc_at, rel,
                  concurrency_blocks_per_request, nb_lo, nb_hi, lo, hi)
    FROM (SELECT *, engine_logged_tokens(nb_lo, num_groups, block_size_tokens, NULL, Lc, logged_tokens_rule) AS lo,
                    engine_logged_tokens(nb_hi, num_groups, block_size_tokens, NULL, Lc, logged_tokens_rule) AS hi
          FROM (SELECT *, ceil((max_concurrency - 0.005 - 1e-9) * concurrency_blocks_per_request)::BIGINT AS nb_lo,
                          floor((max_concurrency + 0.005 + 1e-9) * concurrency_blocks_per_request)::BIGINT AS nb_hi
                FROM figs WHERE concurrency_rule = 'blocks_over_request_blocks' AND conc_ok
                          AND logged_tokens_rule <> 'concurrency_x_len' AND concurrency_blocks_per_request > 0))
    WHERE kv_cache_tokens NOT BETWEEN lo AND hi
    UNION ALL
    -- tokens ~ num_gpu_blocks
    SELECT file, line, 'logged.kv_cache_tokens',
           format('logged.kv_cache_tokens {} disagrees with logged.num_gpu_blocks {}: {} prints {:,} tokens for {:,} '
                  'blocks ({} rule{})', tokens_at, blocks_at, rel, x, num_gpu_blocks, logged_tokens_rule,
                  CASE WHEN multi_rank THEN '; the blocks are the min over the ranks, the tokens at least theirs' ELSE '' END)
    FROM (SELECT *, engine_logged_tokens(num_gpu_blocks, num_groups, block_size_tokens,
                                         engine_concurrency(num_gpu_blocks, concurrency_blocks_per_request,
                                                            block_size_tokens, Lc, concurrency_rule),
                                         Lc, logged_tokens_rule) AS x
          FROM figs WHERE num_gpu_blocks IS NOT NULL AND block_size_tokens IS NOT NULL)
    WHERE kv_cache_tokens < x OR (NOT multi_rank AND kv_cache_tokens <> x)
    UNION ALL
    -- concurrency ~ num_gpu_blocks
    SELECT file, line, 'logged.max_concurrency',
           format('logged.max_concurrency {} disagrees with logged.num_gpu_blocks {}: {} prints {:.4f}x for {:,} blocks '
                  '({} rule{})', conc_at, blocks_at, rel, x, num_gpu_blocks, concurrency_rule,
                  CASE WHEN multi_rank THEN '; the blocks are the min over the ranks, the concurrency at least theirs' ELSE '' END)
    FROM (SELECT *, engine_concurrency(num_gpu_blocks, concurrency_blocks_per_request, block_size_tokens, Lc,
                                       concurrency_rule) AS x
          FROM figs WHERE num_gpu_blocks IS NOT NULL AND block_size_tokens IS NOT NULL)
    WHERE max_concurrency < x - 0.005 - 1e-9 OR (NOT multi_rank AND max_concurrency > x + 0.005 + 1e-9)
    UNION ALL
    -- available ~ blocks (logged, else implied by the tokens)
    SELECT file, line, CASE WHEN num_gpu_blocks IS NOT NULL THEN 'logged.num_gpu_blocks' ELSE 'logged.kv_cache_tokens' END,
           format('{} disagrees with logged.available_kv_cache_memory_gib {}: at {:,} bytes a block, that memory holds '
                  '{:,}–{:,} blocks{}',
                  CASE WHEN num_gpu_blocks IS NOT NULL THEN 'logged.num_gpu_blocks ' || blocks_at
                       ELSE format('logged.kv_cache_tokens {} ({:,} blocks)', tokens_at, nb) END,
                  avail_at, block_bytes::BIGINT, CASE WHEN multi_rank THEN 0 ELSE available_blocks_low END,
                  available_blocks_high,
                  CASE WHEN multi_rank THEN ' (one rank''s memory; the blocks are the min over the ranks)' ELSE '' END)
    FROM (SELECT *, coalesce(num_gpu_blocks, tokens_implied_blocks) AS nb FROM figs
          WHERE available_kv_bytes IS NOT NULL AND block_bytes > 0)
    WHERE nb > available_blocks_high OR (NOT multi_rank AND nb < available_blocks_low)
)
SELECT file, line, key, message,
       'a startup log prints these figures from one computation: if the log was edited or cut, ingest the original; '
       'if engine names the wrong release, correct it (its token rule decides the figures); if the log is '
       'unedited, kvreg''s accounting of this model is wrong here (kvreg calibrate shows it): report it, and keep '
       'the entry with figures_disagree: <why> (kvreg ingest-log --force writes it)' AS hint
FROM pairs
ORDER BY file, key
