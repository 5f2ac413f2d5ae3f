-- Enqueue a job together with its known_jobs registration (PROTOCOL §4.1, §4.2, §4.7): both are
-- written or neither is. Used when the enqueuer's known_jobs cache lacks the name (a
-- warm cache needs one LPUSH or ZADD, atomic on its own); a script instead of MULTI/EXEC
-- so that a refused MULTI (an ACL without it) cannot leave the commands behind it to
-- run on their own, and a damaged key is found before anything is written.
-- KEYS[1] the queue <p>jobs:<name>, or <p>scheduled for a delayed job
-- KEYS[2] <p>known_jobs
-- ARGV[1] the job JSON
-- ARGV[2] run-at (Unix seconds) for a delayed job, '' to push onto the queue
-- ARGV[3] the job name
-- ARGV[4] the namespace's wake-up channel (published for an immediate job so that idle
--         cwork pools fetch at once)
-- Returns '' or, when the wake-up was refused (the job is written all the same), the
-- refusal's text. A key of the wrong type is an error reply and nothing is written; so
-- is running out of memory (Redis refuses a script's first write, not later ones), and
-- so is a write the Redis user may not run (asked of the ACL first: acl_lib.lua).
--[[include acl_lib.lua]]
local want = ARGV[2] == '' and 'list' or 'zset'
for i, t in ipairs({want, 'set'}) do
  local have = redis.call('TYPE', KEYS[i]).ok
  if have ~= t and have ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' is a ' .. have .. ', not a ' .. t ..
      ': nothing written')
  end
end
local refused = acl_refusal({{'SADD', KEYS[2], ARGV[3]}, ARGV[2] == '' and
  {'LPUSH', KEYS[1], ARGV[1]} or {'ZADD', KEYS[1], ARGV[2], ARGV[1]}})
if refused then
  return refused
end
redis.call('SADD', KEYS[2], ARGV[3])
if ARGV[2] == '' then
  redis.call('LPUSH', KEYS[1], ARGV[1])
  local r = redis.pcall('PUBLISH', ARGV[4], ARGV[3])
  if type(r) == 'table' and r.err then
    return r.err
  end
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
return ''
