-- Enqueue a unique job (PROTOCOL §4.4, §4.5) together with its known_jobs registration, so
-- that the two either both happen or neither does.
-- KEYS[1] the queue <p>jobs:<name>, or <p>scheduled for a delayed job
-- KEYS[2] the guard <p>unique:<name>:<args (or ByKey key) JSON>\n
-- KEYS[3] <p>known_jobs
-- KEYS[4] the guard in the other escape spelling of U+0008/U+000C (\u0008, \u000c as a Go
--         older than 1.22 writes them, or \b, \f when KEYS[2] is that one: the namespace's
--         Go JSON spelling, PROTOCOL §16.1), or KEYS[2] again when the JSON has neither:
--         a job waiting under either spelling is a duplicate
-- ARGV[1] the job JSON
-- ARGV[2] run-at (Unix seconds) for a delayed job, '' to push onto the queue
-- ARGV[3] the job name to record in known_jobs, '' when the enqueuer's cache has it
-- ARGV[4] the guard's value: '1', or '' for the job JSON itself (upstream's ByKey: the
--         job that runs when the waiting entry is picked up)
-- ARGV[5] '1' when a duplicate hands the existing guard that value and 24 h again
--         (upstream, and every ByKey enqueue), '' when it leaves it alone (the fork)
-- ARGV[6] the namespace's wake-up channel, ARGV[7] the job name (published for an
--         immediate job so that idle cwork pools fetch at once); optional
-- Returns the bulk string 'ok', or 'dup' when a guard exists (nothing else changes
-- then besides known_jobs, which Go also writes before its script, and the guard as
-- ARGV[5] says).
-- A queue, scheduled set or known_jobs of the wrong type is an error reply with nothing
-- written (checked first: a guard set for a job that could not be pushed would refuse
-- the job's next enqueues for 24 h); so is a write the Redis user may not run (asked of
-- the ACL before the first write, acl_lib.lua; enqueue_batch.lua defines acl_refusal
-- before it puts this script in, so the include below stays a comment there).
--[[include acl_lib.lua]]
for i, t in ipairs({ARGV[2] == '' and 'list' or 'zset', 'set'}) do
  local key = KEYS[i == 1 and 1 or 3]
  local have = redis.call('TYPE', key).ok
  if have ~= t and have ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. have .. ', not a ' .. t ..
      ': nothing written')
  end
end
local calls = {{'SET', KEYS[2], ARGV[1]}, ARGV[2] == '' and {'LPUSH', KEYS[1], ARGV[1]} or
  {'ZADD', KEYS[1], ARGV[2], ARGV[1]}}
if ARGV[3] ~= '' then
  calls[#calls + 1] = {'SADD', KEYS[3], ARGV[3]}
end
if KEYS[4] ~= KEYS[2] then
  calls[#calls + 1] = {'EXISTS', KEYS[4]}
  calls[#calls + 1] = {'SET', KEYS[4], ARGV[1]}
end
local refused = acl_refusal(calls)
if refused then
  return refused
end
if ARGV[3] ~= '' then
  redis.call('SADD', KEYS[3], ARGV[3])
end
local value = ARGV[4] ~= '' and ARGV[4] or ARGV[1]
local other = KEYS[4] ~= KEYS[2] and redis.call('EXISTS', KEYS[4]) == 1
if other or not redis.call('SET', KEYS[2], value, 'NX', 'EX', 86400) then
  if ARGV[5] == '1' then
    -- Only a guard that is a string is re-armed: one of another type (someone else's
    -- data) counts as present but is left as it is (PROTOCOL §16.15).
    if other and redis.call('TYPE', KEYS[4]).ok == 'string' then
      redis.call('SET', KEYS[4], value, 'EX', 86400)
    end
    if redis.call('TYPE', KEYS[2]).ok == 'string' then
      redis.call('SET', KEYS[2], value, 'EX', 86400)
    end
  end
  return 'dup'
end
if ARGV[2] == '' then
  redis.call('LPUSH', KEYS[1], ARGV[1])
  if ARGV[6] then
    -- pcall: a refused wake-up (an ACL without PUBLISH) must not fail a written job.
    redis.pcall('PUBLISH', ARGV[6], ARGV[7])
  end
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
return 'ok'
