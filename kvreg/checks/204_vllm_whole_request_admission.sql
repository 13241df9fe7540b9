-- vllm_whole_request_admission: a throughput entry says kv_admission: whole_request for a vLLM release.
-- vLLM's v1 scheduler has no whole-request policy: a waiting request is admitted with the blocks of its prompt
-- only (vllm/v1/core/sched/scheduler.py 0.19.0:665 num_new_tokens = request.num_tokens - num_computed_tokens;
-- :746 allocate_slots for those tokens), and a running one takes blocks step by step as it grows (:404-411,
-- :461-467 allocate_slots per step), preempting the lowest-priority request when none are free (:476-503).
-- So the pool holds sequences at their mean context (on_demand), never pool ÷ (input + output) requests.
-- Grain: one row per throughput entry.  Inputs: throughput_measurements, engines (engine = the family).
SELECT DISTINCT t.file, 1 AS line, 'kv_admission' AS key,
       format('kv_admission whole_request on {} ({} engine family): vLLM admits by KV blocks as sequences grow '
              '(vllm/v1/core/sched/scheduler.py 0.19.0:665, :746, :461-503), it reserves no whole request',
              t.engine_id, e.engine) AS message,
       'leave kv_admission out (on_demand); whole_request is TensorRT-LLM''s GUARANTEED_NO_EVICT capacity scheduler'
           AS hint
FROM throughput_measurements t
JOIN engines e USING (engine_id)
WHERE t.kv_admission = 'whole_request' AND e.engine = 'vllm'
