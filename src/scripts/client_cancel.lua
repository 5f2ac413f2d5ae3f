-- Cancels one job (PROTOCOL §21), where the client just found it.
-- KEYS[1] where it was found: its queue, a pool's in-progress list, <p>retry or
--   <p>scheduled; KEYS[2] <p>dead; KEYS[3] <p>cwork:cancelled
-- ARGV[1] 'list' (a queue), 'zset' (retry, scheduled) or 'running' (in-progress)
-- ARGV[2] the job's bytes as found   ARGV[3] now (Unix seconds)
-- ARGV[4] list, zset: the dead record (the job with err "cancelled"); running: the id
-- ARGV[5] running: the pool's cancel channel <p>cwork:cancel:<pool>; list, zset: <p>
-- ARGV[6] list, zset: the TTL of a finished batch (PROTOCOL §23)
-- A waiting, scheduled or retry job leaves its place and enters dead at score now, in
-- one step; a job of a tracked batch counts there as dead, in the same step (its
-- batch's callback may fire). A running job stays where it is: it is marked in the cancelled hash (the
-- pool's commit, or a reaper's requeue, then sends it to dead) and its pool is told on
-- its channel; when no one listens there (a Go pool) nothing is written.
-- Returns 1 (moved to dead), 2 (running: marked, its pool told), 0 (not there any more:
-- it moved, look again), -1 (running in a pool that does not listen), or {-2, key} when
-- a key has another type (nothing written).
--[[include batch_lib.lua]]

local kind, raw = ARGV[1], ARGV[2]
local dead_type = redis.call('TYPE', KEYS[2]).ok
if dead_type ~= 'zset' and dead_type ~= 'none' then
  return {-2, KEYS[2]}
end
if kind == 'running' then
  local t = redis.call('TYPE', KEYS[1]).ok
  if t ~= 'list' then
    if t == 'none' then
      return 0
    end
    return {-2, KEYS[1]}
  end
  local mark_type = redis.call('TYPE', KEYS[3]).ok
  if mark_type ~= 'hash' and mark_type ~= 'none' then
    return {-2, KEYS[3]}
  end
  -- In-progress lists hold at most the pool's concurrency: read them whole.
  local found = false
  for _, entry in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    if entry == raw then
      found = true
      break
    end
  end
  if not found then
    return 0
  end
  if redis.call('PUBLISH', ARGV[5], ARGV[4]) == 0 then
    return -1
  end
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[3])
  redis.call('EXPIRE', KEYS[3], 86400)
  return 2
end
local removed
if kind == 'list' then
  removed = redis.call('LREM', KEYS[1], -1, raw)
else
  removed = redis.call('ZREM', KEYS[1], raw)
end
if removed == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
local ok, job = pcall(cjson.decode, raw)
if ok and type(job) == 'table' and type(job.cwork_batch) == 'string' and
   type(job.id) == 'string' and string.find(job.cwork_batch, '^%x+$') then
  -- (a damaged batch hash leaves the batch as it was: `cwork batch` names it)
  batch_count(ARGV[5] .. 'cwork:batch:' .. job.cwork_batch, job.id, 100, ARGV[5], ARGV[3],
              ARGV[6])
end
return 1
