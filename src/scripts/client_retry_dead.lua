-- Retries dead jobs (PROTOCOL §11.2), one job or one batch of all of them.
-- KEYS[1] <p>dead, KEYS[2..] the queue <p>jobs:<name> of every name that may be requeued
-- ARGV[1] <p>jobs:   ARGV[2] now
-- ARGV[3] 'one': ARGV[4], ARGV[6] the ZRANGEBYSCORE bounds of the listed died_at (see
--         cw_score_range), ARGV[5] the job id — the members with that score and id
--         (retry-single-dead);
--         'all': ARGV[4] batch size, ARGV[5] offset, ARGV[6] (optional) only jobs of this
--         name — at most a batch of the members with score <= now, from that rank among
--         them (retry-all-dead; the caller adds the skipped ones to its offset and stops
--         when fewer than a batch were looked at).
-- A job whose queue is among KEYS gets t = now, loses fails, failed_at and err — and
-- also d, so that the requeuer's stale-tail check does not drop a retried periodic
-- instance (PROTOCOL §16.13) — and is LPUSHed in cjson's form, as Go's script does.
-- A job of another name goes back to dead with err "unknown job when requeueing",
-- failed_at = now and score now + 5, as in Go (so it also leaves the due range and a
-- retry-all loop ends). Members cjson cannot decode or without a string name stay dead
-- as they are (Go's script fails on them, which stopped every later retry).
-- A damaged queue key loses no job (cycle.lua's rule): the job is pushed first and
-- leaves dead only when the push worked; otherwise it stays dead as it was, counts as
-- skipped, and the error follows the counts.
-- Returns {requeued, unknown, skipped, members looked at, error text…}.
local now = tonumber(ARGV[2])
local known = {}
for i = 2, #KEYS do
  known[KEYS[i]] = true
end
local one = ARGV[3] == 'one'
local members
if one then
  members = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[4], ARGV[6])
else
  members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', ARGV[5], ARGV[4])
end
local requeued, unknown, skipped = 0, 0, 0
local errors = {}
for _, raw in ipairs(members) do
  local ok, job = pcall(cjson.decode, raw)
  local match = ok and type(job) == 'table'
  if one then
    match = match and job.id == ARGV[5]
  elseif ARGV[6] ~= nil then
    match = match and job.name == ARGV[6]
  end
  if match and type(job.name) == 'string' then
    local queue = ARGV[1] .. job.name
    if known[queue] then
      job.t = now
      job.fails = nil
      job.failed_at = nil
      job.err = nil
      job.d = nil
      local r = redis.pcall('LPUSH', queue, cjson.encode(job))
      if type(r) == 'number' then
        redis.call('ZREM', KEYS[1], raw)
        requeued = requeued + 1
      else
        errors[#errors + 1] = r.err .. ' (' .. queue .. ')'
        skipped = skipped + 1
      end
    else
      redis.call('ZREM', KEYS[1], raw)
      job.err = 'unknown job when requeueing'
      job.failed_at = now
      redis.call('ZADD', KEYS[1], now + 5, cjson.encode(job))
      unknown = unknown + 1
    end
  elseif match or not one then
    skipped = skipped + 1
  end
end
local out = {requeued, unknown, skipped, #members}
for i = 1, #errors do
  out[4 + i] = errors[i]
end
return out
