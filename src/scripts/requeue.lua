-- Move due jobs from the scheduled or retry zset into their queues (PROTOCOL §8), up to
-- ARGV[3] jobs per call, each exactly as one call of the fork's script would.
-- KEYS[1] the source zset, KEYS[2] <p>dead, KEYS[3..] the queue of every job name this
--   pool treats as known: its own and those in known_jobs (so that a shared namespace
--   never sends another team's due jobs to dead, PROTOCOL §16.10).
-- ARGV[1] <p>jobs:   ARGV[2] now   ARGV[3] the most jobs to move in this call
-- ARGV[4] how many due members to step over (left in place by earlier calls)
-- ARGV[5] a random seed for the ids of records made for members without one
-- ARGV[6] '1' for the fork's deadline rules, '0' for upstream's script, which has none
-- Per job: the lowest-scored due member is removed; with the deadline rules an expired
-- periodic instance (now > d) is discarded and the queue's oldest entry is dropped if it
-- is an expired periodic instance (now >= d); the job gets t = now and goes to the
-- queue's left end.
-- A job of an unknown name goes to dead (err "unknown job when requeueing").
-- Where Go would block the zset forever (a member that is not JSON) or lose a job
-- silently (no name, a non-numeric d), the member goes to dead with an explanation and
-- its bytes kept in args.raw_job (readable) and args.raw_job_base64 (exact), so that
-- nothing is lost and later jobs still move.
-- A damaged key never loses a job (cycle.lua's rule): a member leaves the zset only
-- after it was written elsewhere. A job whose queue is not a list goes to dead with the
-- error; one that cannot be written anywhere (dead damaged too, or out of memory) stays
-- where it is, is stepped over, and its error is reported.
-- A job of a tracked batch (its cwork_batch field) sent to dead counts as dead in its
-- batch, in this call (PROTOCOL §23; ARGV[7]: the TTL of a finished batch).
-- Returns {moved to queues, sent to dead, discarded as expired, left in place,
--          {reason, count, …} of the jobs sent to dead, {error, …} of those left,
--          moved although past their d (without the deadline rules)}.
local now = tonumber(ARGV[2])
local deadlines = ARGV[6] == '1'
local known = {}
for i = 3, #KEYS do
  known[KEYS[i]] = true
end

--[[include batch_lib.lua]]

local b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = string.byte(s, i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local q = {math.floor(n / 262144), math.floor(n / 4096) % 64, math.floor(n / 64) % 64, n % 64}
    for k = 1, 4 do
      q[k] = string.sub(b64, q[k] + 1, q[k] + 1)
    end
    if not b then
      q[3] = '='
    end
    if not c then
      q[4] = '='
    end
    out[#out + 1] = table.concat(q)
  end
  return table.concat(out)
end

local reasons, nreasons, errors = {}, {}, {}
local made = 0
local function broken(raw, job, why)
  made = made + 1
  local id = type(job) == 'table' and type(job.id) == 'string' and job.id ~= '' and job.id or
    string.sub(redis.sha1hex(ARGV[5] .. ':' .. made), 1, 24)
  return {name = '', id = id, t = now, args = {raw_job = raw, raw_job_base64 = base64(raw)},
          fails = 1, err = 'cwork: cannot requeue this job (' .. why ..
            '); its bytes are in args.raw_job and, exactly, args.raw_job_base64'}
end

-- Writes job to dead, then removes raw from the zset; false (and raw stays) when dead
-- cannot take it.
local function to_dead(raw, job, reason)
  job.failed_at = now
  local r = redis.pcall('ZADD', KEYS[2], now, cjson.encode(job))
  if type(r) ~= 'number' then
    errors[#errors + 1] = 'cannot move a job to dead (' .. reason .. '): ' .. r.err
    return false
  end
  redis.call('ZREM', KEYS[1], raw)
  if type(job.cwork_batch) == 'string' and type(job.id) == 'string' and ARGV[7] and
     string.find(job.cwork_batch, '^%x+$') then
    local prefix = string.sub(ARGV[1], 1, #ARGV[1] - 5) -- '<p>jobs:' without 'jobs:'
    local err = batch_count(prefix .. 'cwork:batch:' .. job.cwork_batch, job.id, 100, prefix,
                            ARGV[2], ARGV[7])
    if err then
      errors[#errors + 1] = 'batch ' .. job.cwork_batch .. ': ' .. err
    end
  end
  if not nreasons[reason] then
    reasons[#reasons + 1] = reason
    nreasons[reason] = 0
  end
  nreasons[reason] = nreasons[reason] + 1
  return true
end

local moved, dead, expired, left, late = 0, 0, 0, 0, 0
local skip = tonumber(ARGV[4])
for _ = 1, tonumber(ARGV[3]) do
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', skip, 1)
  if #due == 0 then
    break
  end
  local raw = due[1]
  local ok, job = pcall(cjson.decode, raw)
  local sent
  if not ok or type(job) ~= 'table' then
    sent = to_dead(raw, broken(raw, nil, 'not a JSON object'), 'not a JSON object')
  elseif type(job.name) ~= 'string' and type(job.name) ~= 'number' then
    sent = to_dead(raw, broken(raw, job, 'no job name'), 'no job name')
  elseif job.d ~= nil and type(job.d) ~= 'number' then
    sent = to_dead(raw, broken(raw, job, 'd is not a number'), 'd is not a number')
  else
    local queue = ARGV[1] .. job.name
    if not known[queue] then
      job.err = 'unknown job when requeueing'
      sent = to_dead(raw, job, job.err)
    elseif deadlines and job.d ~= nil and now > job.d then
      redis.call('ZREM', KEYS[1], raw)
      expired = expired + 1
    else
      local oldest = redis.pcall('RPOP', queue)
      local pushed
      if type(oldest) == 'table' and oldest.err then
        -- The queue is damaged: the job cannot go there, dead keeps it with the reason.
        job.err = 'cwork: cannot requeue: ' .. oldest.err .. ' (' .. queue .. ' is not a list)'
        sent = to_dead(raw, job, 'the queue is not a list: ' .. oldest.err)
      else
        if oldest then
          local tok, tail = pcall(cjson.decode, oldest)
          local stale = deadlines and tok and type(tail) == 'table' and type(tail.d) == 'number' and
            now >= tail.d
          if not stale then
            redis.call('RPUSH', queue, oldest)
          end
        end
        job.t = now
        pushed = redis.pcall('LPUSH', queue, cjson.encode(job))
        if type(pushed) == 'number' then
          redis.call('ZREM', KEYS[1], raw)
          moved = moved + 1
          if job.d ~= nil and now > job.d then
            late = late + 1
          end
        else
          errors[#errors + 1] = 'cannot push a job to ' .. queue .. ': ' .. pushed.err
          sent = false
        end
      end
    end
  end
  if sent == true then
    dead = dead + 1
  elseif sent == false then
    left = left + 1
    skip = skip + 1
  end
end
local counted = {}
for i = 1, #reasons do
  counted[2 * i - 1] = reasons[i]
  counted[2 * i] = nreasons[reasons[i]]
end
return {moved, dead, expired, left, counted, errors, late}
