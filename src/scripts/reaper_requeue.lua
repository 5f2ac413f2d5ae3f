-- Give a dead pool's in-progress jobs back to their queues (PROTOCOL §9.3), all at once.
-- KEYS: four per job name: the dead pool's in-progress list, the queue, the lock, the
--   lock_info hash; then <p>dead and <p>cwork:cancelled.   ARGV[1] the dead pool's id;
--   ARGV[2] the TTL of a finished batch (PROTOCOL §23).
-- The same end state as Go's script called until it returns nil: every entry moves
-- unchanged from the in-progress list's right end to the queue's left end (behind the
-- waiting jobs), and per job the lock is decremented and the pool's lock_info field too
-- (here once per name, by the count).
-- A damaged key (a list of another type, a counter that is not an integer) stops
-- nothing but its own step: RPOPLPUSH checks both lists before it moves anything, so a
-- job stays where it is (and its name is reported, so that the caller keeps the pool's
-- slot for it and a later cycle tries again); a counter that cannot move is left to the
-- lock-healing pass.
-- A job an operator cancelled while it ran (its id in <p>cwork:cancelled, PROTOCOL §21)
-- goes to dead instead, with err "cancelled" (cjson's form of the job), and its mark
-- goes; it releases its lock like a requeued job, and a job of a tracked batch counts
-- there as dead (its batch's callback may fire). When dead cannot take it, it stays in
-- progress and its name is reported as stuck. Only a namespace with marks pays for
-- this: one TYPE per call, then a look at each job before it moves.
-- Returns {number of jobs moved (cancelled ones included), {the 1-based index of every name whose jobs could not
-- move}, {"key: error" for every step that failed}}.
--[[include batch_lib.lua]]

local moved, stuck, errors = 0, {}, {}
local nkeys = #KEYS - 2
local dead, cancelled = KEYS[nkeys + 1], KEYS[nkeys + 2]
local marks = redis.call('TYPE', cancelled).ok == 'hash'

-- For the oldest entry of an in-progress list: true when it was cancelled and has gone to
-- dead (then the caller pops it), false when it was not, or nil and an error when dead
-- cannot take it.
local function send_cancelled(list)
  local raw = redis.pcall('LINDEX', list, -1)
  if type(raw) ~= 'string' then
    return false
  end
  local ok, job = pcall(cjson.decode, raw)
  if not (ok and type(job) == 'table' and type(job.id) == 'string') then
    return false
  end
  local at = redis.pcall('HGET', cancelled, job.id)
  if type(at) ~= 'string' then
    return false
  end
  job.fails = (tonumber(job.fails) or 0) + 1
  job.err = 'cancelled'
  job.failed_at = tonumber(at)
  local z = redis.pcall('ZADD', dead, at, cjson.encode(job))
  if type(z) ~= 'number' then
    return nil, dead .. ': ' .. z.err
  end
  redis.call('HDEL', cancelled, job.id)
  if type(job.cwork_batch) == 'string' and ARGV[2] and string.find(job.cwork_batch, '^%x+$') then
    local prefix = string.sub(dead, 1, #dead - 4) -- '<p>dead' without 'dead'
    local berr = batch_count(prefix .. 'cwork:batch:' .. job.cwork_batch, job.id, 100, prefix,
                             at, ARGV[2])
    if berr then
      errors[#errors + 1] = 'batch ' .. job.cwork_batch .. ': ' .. berr
    end
  end
  return true
end

for i = 1, nkeys, 4 do
  local n = 0
  while true do
    local job
    local gone, err = false, nil
    if marks then
      gone, err = send_cancelled(KEYS[i])
    end
    if gone then
      job = redis.call('RPOP', KEYS[i])
    elseif err then
      job = {err = err}
    else
      job = redis.pcall('RPOPLPUSH', KEYS[i], KEYS[i + 1])
    end
    if type(job) == 'table' and job.err then
      errors[#errors + 1] = (gone == nil and '' or KEYS[i] .. ' -> ' .. KEYS[i + 1] .. ': ') .. job.err
      stuck[#stuck + 1] = (i + 3) / 4
      break
    end
    if not job then
      break
    end
    n = n + 1
  end
  if n > 0 then
    local r = redis.pcall('DECRBY', KEYS[i + 2], n)
    if type(r) == 'table' and r.err then
      errors[#errors + 1] = KEYS[i + 2] .. ': ' .. r.err
    end
    r = redis.pcall('HINCRBY', KEYS[i + 3], ARGV[1], -n)
    if type(r) == 'table' and r.err then
      errors[#errors + 1] = KEYS[i + 3] .. ': ' .. r.err
    end
    moved = moved + n
  end
end
return {moved, stuck, errors}
