-- Clears a queue (`cwork queue clear`): deletes every job waiting in it, in one step,
-- so that exactly the jobs waiting at that moment go and no job enqueued or fetched
-- meanwhile is touched. Jobs in progress, retry, scheduled and dead are not in it.
-- KEYS[1] the queue <p>jobs:<name>
-- ARGV[1] how many entries to read per LRANGE (bounds the script's memory)
-- Returns {jobs deleted, the bytes of every unique job among them...}: the caller
-- deletes their unique guards, which a script cannot build (they need Go's JSON of
-- the args). A key of another type is left as it is: {-1, its type}.
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then
  return {0}
elseif kind ~= 'list' then
  return {-1, kind}
end
local reply = {0}
local step = tonumber(ARGV[1])
local from = 0
while true do
  local part = redis.call('LRANGE', KEYS[1], from, from + step - 1)
  for _, raw in ipairs(part) do
    -- Only members that mention "unique" are decoded: most jobs are not unique.
    if string.find(raw, 'unique', 1, true) then
      local ok, job = pcall(cjson.decode, raw)
      if ok and type(job) == 'table' and job.unique == true then
        reply[#reply + 1] = raw
      end
    end
  end
  if #part < step then
    break
  end
  from = from + step
end
reply[1] = redis.call('LLEN', KEYS[1])
redis.call('DEL', KEYS[1])
return reply
