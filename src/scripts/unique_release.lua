-- Release the unique guards of fetched jobs before their handlers run (PROTOCOL §5.5 item 2,
-- upstream's getAndDeleteUniqueJob): each guard is read and deleted in one step, so a
-- ByKey duplicate enqueued at the same moment either is read here or finds no guard
-- and queues a job of its own; it is never lost between a GET and a DEL.
-- KEYS the guard keys of the fetched unique jobs (a job may have two: both escape
--      spellings of its args)
-- Returns their values in KEYS order: '1' (a plain guard), a job's JSON (upstream's
-- ByKey: the job to run instead of the queued placeholder), or nil when absent. A key
-- that is no string (someone else's data) reads as absent and is left alone.
local values = {}
for i = 1, #KEYS do
  local v = redis.pcall('GET', KEYS[i])
  if type(v) == 'string' then
    redis.call('DEL', KEYS[i])
    values[i] = v
  else
    values[i] = false
  end
end
return values
