-- Delete-all-dead of one name, one batch: looks at the members of ranks ARGV[2]..ARGV[3]
-- and removes those whose job name is ARGV[1]. Members cjson cannot decode stay.
-- KEYS[1] the zset (<p>dead)
-- ARGV[1] the job name   ARGV[2] first rank   ARGV[3] last rank
-- Returns {removed, members looked at}; the caller's next first rank is this one plus
-- the members that stayed.
local members = redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[3])
local removed = 0
for _, raw in ipairs(members) do
  local ok, job = pcall(cjson.decode, raw)
  if ok and type(job) == 'table' and job.name == ARGV[1] then
    redis.call('ZREM', KEYS[1], raw)
    removed = removed + 1
  end
end
return {removed, #members}
