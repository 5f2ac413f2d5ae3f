-- Move due jobs from the scheduled or retry zset into their queues (SPEC §7), up to
-- ARGV[3] jobs per call, each exactly as one call of the fork's script would.
-- KEYS[1] the source zset, KEYS[2] <p>dead, KEYS[3..] the queue of every job name this
--   pool treats as known: its own and those in known_jobs (so that a shared namespace
--   never sends another team's due jobs to dead, SPEC §15 item 16).
-- ARGV[1] <p>jobs:   ARGV[2] now   ARGV[3] the most jobs to move in this call
-- Per job: the lowest-scored due member is removed; an expired periodic instance
-- (now > d) is discarded; the queue's oldest entry is dropped if it is an expired
-- periodic instance (now >= d); the job gets t = now and goes to the queue's left end.
-- A job of an unknown name goes to dead (err "unknown job when requeueing").
-- Where Go would block the zset forever (a member that is not JSON) or lose a job
-- silently (no name, a non-numeric d), the member goes to dead with an explanation and
-- its bytes kept in args.raw_job, so that nothing is lost and later jobs still move.
-- Returns {moved to queues, sent to dead, discarded as expired}.
local now = tonumber(ARGV[2])
local known = {}
for i = 3, #KEYS do
  known[KEYS[i]] = true
end

local function to_dead(job)
  job.failed_at = now
  redis.call('ZADD', KEYS[2], now, cjson.encode(job))
end

local function broken(raw, why)
  return {name = '', id = '', t = now, args = {raw_job = raw}, fails = 1,
          err = 'cwork: cannot requeue this job (' .. why .. '); its bytes are in args.raw_job'}
end

local moved, dead, expired = 0, 0, 0
for _ = 1, tonumber(ARGV[3]) do
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, 1)
  if #due == 0 then
    break
  end
  local raw = due[1]
  redis.call('ZREM', KEYS[1], raw)
  local ok, job = pcall(cjson.decode, raw)
  if not ok or type(job) ~= 'table' then
    to_dead(broken(raw, 'not a JSON object'))
    dead = dead + 1
  elseif type(job.name) ~= 'string' and type(job.name) ~= 'number' then
    to_dead(broken(raw, 'no job name'))
    dead = dead + 1
  elseif job.d ~= nil and type(job.d) ~= 'number' then
    to_dead(broken(raw, 'd is not a number'))
    dead = dead + 1
  else
    local queue = ARGV[1] .. job.name
    if not known[queue] then
      job.err = 'unknown job when requeueing'
      to_dead(job)
      dead = dead + 1
    elseif job.d ~= nil and now > job.d then
      expired = expired + 1
    else
      local oldest = redis.call('RPOP', queue)
      if oldest then
        local tok, tail = pcall(cjson.decode, oldest)
        local stale = tok and type(tail) == 'table' and type(tail.d) == 'number' and now >= tail.d
        if not stale then
          redis.call('RPUSH', queue, oldest)
        end
      end
      job.t = now
      redis.call('LPUSH', queue, cjson.encode(job))
      moved = moved + 1
    end
  end
end
return {moved, dead, expired}
