-- Delete-all of a set (`cwork retry|scheduled|dead delete --all`, the web UI's "Delete
-- all"), one batch: looks at the members of ranks ARGV[1]..ARGV[2] and removes every one
-- of them, or with ARGV[4] only the jobs of that name (members cjson cannot decode then
-- stay: they may be of any name).
-- KEYS[1] the zset (<p>retry, <p>scheduled or <p>dead)
-- ARGV[1] first rank   ARGV[2] last rank   ARGV[3] '1': return the bytes of removed
-- unique jobs (the scheduled set: the caller deletes their guards, which a script cannot
-- build: they need Go's JSON of the args)   ARGV[4] (optional) the job name
-- A key of another type is left as it is: {-1, its type}. Nothing else is written.
-- Returns {removed, members looked at, members before, the bytes of each removed unique
-- job…}; the caller's next first rank is this one plus the members that stayed.
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then
  return {0, 0, 0}
elseif kind ~= 'zset' then
  return {-1, kind}
end
local members = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2])
local want_unique = ARGV[3] == '1'
local name = ARGV[4]
local reply = {0, #members, redis.call('ZCARD', KEYS[1])}
local gone = {}
for _, raw in ipairs(members) do
  local job = nil
  -- Only members that may be unique, or that must match a name, are decoded.
  if name ~= nil or (want_unique and string.find(raw, 'unique', 1, true)) then
    local ok, decoded = pcall(cjson.decode, raw)
    if ok and type(decoded) == 'table' then
      job = decoded
    end
  end
  if name == nil or (job ~= nil and job.name == name) then
    gone[#gone + 1] = raw
    if want_unique and job ~= nil and job.unique == true then
      reply[#reply + 1] = raw
    end
  end
end
-- ZREM in slices: unpack has a limit on the number of values.
for i = 1, #gone, 500 do
  redis.call('ZREM', KEYS[1], unpack(gone, i, math.min(i + 499, #gone)))
end
reply[1] = #gone
return reply
