-- Give a dead pool's in-progress jobs back to their queues (PROTOCOL §9.3), all at once.
-- KEYS: four per job name: the dead pool's in-progress list, the queue, the lock, the
--   lock_info hash; then <p>dead, <p>cwork:cancelled and <p>cwork:superseded.
--   ARGV[1] the dead pool's id; ARGV[2] the TTL of a finished batch (PROTOCOL §23);
--   ARGV[3] now (Unix seconds, for the superseded record).
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
-- A superseded entry (PROTOCOL §9.3: it carries upstream's unique_key, and the guard of
-- that key names another job, or the guard is gone and the dead pool had released every
-- slot of the name: upstream's worker ran the guard's job in its place and committed
-- that job's bytes, leaving this placeholder behind) is not requeued: it is dropped,
-- recorded at the head of <p>cwork:superseded (capped at 1000 entries) and answered, so
-- that it never runs again. Only entries whose bytes hold "unique_key" are decoded.
-- Returns {number of jobs moved (cancelled and superseded ones included), {the 1-based
-- index of every name whose jobs could not move}, {"key: error" for every step that
-- failed}, {unique_key, job id, ... of every superseded entry dropped}}.
--[[include batch_lib.lua]]

local moved, stuck, errors, dropped = 0, {}, {}, {}
local nkeys = #KEYS - 3
local dead, cancelled, superseded_key = KEYS[nkeys + 1], KEYS[nkeys + 2], KEYS[nkeys + 3]
local marks = redis.call('TYPE', cancelled).ok == 'hash'
local guard_prefix = string.sub(dead, 1, #dead - 4) .. 'unique:' -- '<p>dead' without 'dead'
local superseded_cap = 1000

-- For the oldest entry of an in-progress list: its unique_key and decoded job when it
-- is superseded (see above), else nil. released: the dead pool holds no slot of the
-- name (its lock_info field reads 0), so none of its entries was still running.
local function superseded(list, released)
  local raw = redis.pcall('LINDEX', list, -1)
  if type(raw) ~= 'string' or not string.find(raw, '"unique_key"', 1, true) then
    return nil
  end
  local ok, job = pcall(cjson.decode, raw)
  if not (ok and type(job) == 'table' and type(job.unique_key) == 'string') then
    return nil
  end
  local key = job.unique_key
  if string.sub(key, 1, #guard_prefix) ~= guard_prefix then
    return nil
  end
  local value = redis.pcall('GET', key)
  if type(value) == 'string' then
    if value == '1' then
      return nil -- a plain unique guard: no job replaces another
    end
    local ok2, current = pcall(cjson.decode, value)
    if ok2 and type(current) == 'table' and current.id ~= nil and current.id ~= job.id then
      return key, job, raw
    end
    return nil
  end
  if value == false and released then
    return key, job, raw
  end
  return nil
end

-- Drops the superseded oldest entry of list and records it; nil, or the error when the
-- record cannot be written (then the entry stays where it is).
local function drop_superseded(list, key, job, raw)
  -- written field by field, so that the order is fixed: at, pool, key, id, job
  local id = type(job.id) == 'string' and job.id or ''
  local record = '{"at":' .. string.format('%d', tonumber(ARGV[3]) or 0) .. ',"pool":' ..
                 cjson.encode(ARGV[1]) .. ',"key":' .. cjson.encode(key) .. ',"id":' ..
                 cjson.encode(id) .. ',"job":' .. cjson.encode(raw) .. '}'
  local r = redis.pcall('LPUSH', superseded_key, record)
  if type(r) ~= 'number' then
    return superseded_key .. ': ' .. r.err
  end
  -- pcall: a user without +ltrim keeps a longer record rather than a stuck reaper (the
  -- record is written; an error here would leave it written and the entry in place)
  redis.pcall('LTRIM', superseded_key, 0, superseded_cap - 1)
  redis.call('RPOP', list)
  dropped[#dropped + 1] = key
  dropped[#dropped + 1] = id
  return nil
end

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
  local held = redis.pcall('HGET', KEYS[i + 3], ARGV[1])
  local released = type(held) == 'string' and tonumber(held) == 0
  while true do
    local job
    local gone, err = false, nil
    if marks then
      gone, err = send_cancelled(KEYS[i])
    end
    local skey, sjob, sraw
    if not gone and not err then
      skey, sjob, sraw = superseded(KEYS[i], released)
    end
    if skey then
      local derr = drop_superseded(KEYS[i], skey, sjob, sraw)
      job = derr and {err = derr} or true
      gone = nil
    elseif gone then
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
return {moved, stuck, errors, dropped}
