-- Retry-single-dead (SPEC §11): moves the dead jobs with exactly the given score and id
-- back to their queues.
-- KEYS[1] <p>dead, KEYS[2..] the queue <p>jobs:<name> of every name in known_jobs
-- ARGV[1] <p>jobs:   ARGV[2] now   ARGV[3] died_at   ARGV[4] the job id
-- A job whose queue is among KEYS gets t = now, loses fails, failed_at and err — and
-- also d, so that the requeuer's stale-tail check does not drop a retried periodic
-- instance (SPEC §15 item 19) — and is LPUSHed in cjson's form, as Go's script does.
-- A job of another name goes back to dead with err "unknown job when requeueing",
-- failed_at = now and score now + 5, as in Go. A job without a string name (Go's
-- script fails on it) is left as it is.
-- Returns {requeued, matched but not requeued}.
local now = tonumber(ARGV[2])
local known = {}
for i = 2, #KEYS do
  known[KEYS[i]] = true
end
local requeued, other = 0, 0
for _, raw in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[3], ARGV[3])) do
  local ok, job = pcall(cjson.decode, raw)
  if ok and type(job) == 'table' and job.id == ARGV[4] then
    if type(job.name) ~= 'string' then
      other = other + 1
    else
      redis.call('ZREM', KEYS[1], raw)
      local queue = ARGV[1] .. job.name
      if known[queue] then
        job.t = now
        job.fails = nil
        job.failed_at = nil
        job.err = nil
        job.d = nil
        redis.call('LPUSH', queue, cjson.encode(job))
        requeued = requeued + 1
      else
        job.err = 'unknown job when requeueing'
        job.failed_at = now
        redis.call('ZADD', KEYS[1], now + 5, cjson.encode(job))
        other = other + 1
      end
    end
  end
end
return {requeued, other}
