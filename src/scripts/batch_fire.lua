-- Included by the scripts that can complete a tracked batch (PROTOCOL §23): cycle.lua,
-- when a commit brings the last count, and batch_seal.lua, when the last job was counted
-- before the seal. Defines batch_fire; on its own it does nothing.
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
