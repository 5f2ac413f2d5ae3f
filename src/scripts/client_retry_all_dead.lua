-- Retry-all-dead (SPEC §11), one batch: the dead members with score <= now, from rank
-- ARGV[4] among them, at most ARGV[3] of them, each treated as client_retry_dead.lua
-- treats a matching job (requeued, or back to dead with score now + 5 when its name is
-- unknown, so that it leaves the due range and the caller's loop ends).
-- KEYS[1] <p>dead, KEYS[2..] the queues of the names that may be requeued
-- ARGV[1] <p>jobs:   ARGV[2] now   ARGV[3] batch size   ARGV[4] offset
-- ARGV[5] (optional) only jobs of this name; others are skipped
-- Members cjson cannot decode or without a string name are skipped: they stay dead
-- (Go's script fails on them, which stopped every later retry).
-- Returns {requeued, unknown, skipped, members looked at}; the caller adds the skipped
-- ones to its offset and stops when fewer than a batch were looked at.
local now = tonumber(ARGV[2])
local known = {}
for i = 2, #KEYS do
  known[KEYS[i]] = true
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', ARGV[4], ARGV[3])
local requeued, unknown, skipped = 0, 0, 0
for _, raw in ipairs(due) do
  local ok, job = pcall(cjson.decode, raw)
  if not ok or type(job) ~= 'table' or type(job.name) ~= 'string'
      or (ARGV[5] ~= nil and job.name ~= ARGV[5]) then
    skipped = skipped + 1
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
      unknown = unknown + 1
    end
  end
end
return {requeued, unknown, skipped, #due}
