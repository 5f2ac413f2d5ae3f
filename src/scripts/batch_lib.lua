-- Included by the scripts that count a tracked batch's jobs or complete it (PROTOCOL
-- §23): cycle.lua, when a commit counts a job (and brings the last count), requeue.lua,
-- when it sends a job to dead, and batch_seal.lua, when the last job was counted before
-- the seal. Defines batch_fire and batch_count; on its own it does nothing.
--
-- batch_fire(key, prefix, now, ttl): when the batch at key is sealed, its callback still
-- 'waiting' and every job counted (succeeded + dead = total), settles the callback once:
-- an on_success batch with a dead job gets 'skipped'; otherwise the callback job is
-- pushed to <prefix>jobs:<name> (known_jobs registered, wake-up published) and the
-- state becomes 'enqueued'. Both keys of the batch then expire after ttl seconds. The
-- callback's args: batch_dead, batch_id, batch_succeeded, batch_total, then the
-- caller's own (stored pre-encoded at open: cb_head, cb_rest). Returns nil, or the error
-- of a push that failed on a damaged key (the callback then stays 'waiting': sealing the
-- batch again tries again).
local function batch_fire(key, prefix, now, ttl)
  local b = redis.call('HMGET', key, 'sealed', 'total', 'succeeded', 'dead', 'callback',
                       'when', 'cb_name', 'cb_head', 'cb_rest', 'id')
  if b[1] ~= '1' or b[5] ~= 'waiting' then
    return
  end
  local total, succeeded, dead = b[2] or '0', b[3] or '0', b[4] or '0'
  if tonumber(succeeded) + tonumber(dead) < tonumber(total) then
    return
  end
  local state = 'enqueued'
  if b[6] == 'success' and dead ~= '0' then
    state = 'skipped'
  else
    local name = b[7]
    local job = b[8] .. now .. ',"args":{"batch_dead":' .. dead .. ',"batch_id":"' .. b[10] ..
      '","batch_succeeded":' .. succeeded .. ',"batch_total":' .. total .. b[9] .. '}}'
    local r = redis.pcall('LPUSH', prefix .. 'jobs:' .. name, job)
    if type(r) ~= 'number' then
      return 'callback ' .. prefix .. 'jobs:' .. name .. ': ' .. r.err
    end
    redis.pcall('SADD', prefix .. 'known_jobs', name) -- (a damaged set must not undo it)
    redis.pcall('PUBLISH', prefix .. 'cwork:wakeup', name)
  end
  redis.call('HSET', key, 'callback', state, 'completed_at', now)
  redis.call('EXPIRE', key, ttl)
  redis.call('EXPIRE', key .. ':jobs', ttl)
end

-- batch_jobs_expire(key, jobs): the first count of a job may have just made the :jobs
-- hash; it expires with its open batch (PROTOCOL §23.1). One PTTL per job counted.
local function batch_jobs_expire(key, jobs)
  if redis.call('PTTL', jobs) == -1 then
    local ms = redis.call('PTTL', key)
    if ms > 0 then
      redis.call('PEXPIRE', jobs, ms)
    end
  end
end

-- batch_count(key, jid, kind, prefix, now, ttl): counts job jid of the batch at key once:
-- kind is the byte 's' (succeeded), 'r' (sent to retry) or 'd' (dead or dropped).
-- <key>:jobs remembers each job counted retrying ('r') or final ('s', 'd'): a final job
-- never counts again, a retrying one moves to its final count once. Nothing happens
-- when the batch is gone (expired or deleted). Returns nil or the error of a write
-- refused by a damaged key (nothing counted then).
local function batch_count(key, jid, kind, prefix, now, ttl)
  local jobs = key .. ':jobs'
  local was = redis.pcall('HGET', jobs, jid)
  if type(was) == 'table' then
    return was.err
  end
  if was == 's' or was == 'd' or redis.call('EXISTS', key) == 0 then
    return
  end
  if kind == 114 then -- 'r': pending → retrying, once
    if was then
      return
    end
    local r = redis.pcall('HINCRBY', key, 'retrying', '1')
    if type(r) ~= 'number' then
      return r.err
    end
    redis.call('HSET', jobs, jid, 'r')
    batch_jobs_expire(key, jobs)
    return
  end
  local r = redis.pcall('HINCRBY', key, kind == 115 and 'succeeded' or 'dead', '1')
  if type(r) ~= 'number' then
    return r.err
  end
  redis.call('HSET', jobs, jid, kind == 115 and 's' or 'd')
  if not was then
    batch_jobs_expire(key, jobs)
  end
  if was == 'r' then
    redis.call('HINCRBY', key, 'retrying', '-1')
  end
  return batch_fire(key, prefix, now, ttl)
end
