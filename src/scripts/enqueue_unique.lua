-- Enqueue a unique job (SPEC §3.4) together with its known_jobs registration, so that
-- the two either both happen or neither does.
-- KEYS[1] the queue <p>jobs:<name>, or <p>scheduled for a delayed job
-- KEYS[2] the guard <p>unique:<name>:<args JSON>\n
-- KEYS[3] <p>known_jobs
-- ARGV[1] the job JSON
-- ARGV[2] run-at (Unix seconds) for a delayed job, '' to push onto the queue
-- ARGV[3] the job name to record in known_jobs, '' when the enqueuer's cache has it
-- ARGV[4] the namespace's wake-up channel, ARGV[5] the job name (published for an
--         immediate job so that idle cwork pools fetch at once)
-- Returns the bulk string 'ok', or 'dup' when the guard exists (nothing else changes
-- then besides known_jobs, which Go also writes before its script).
if ARGV[3] ~= '' then
  redis.call('SADD', KEYS[3], ARGV[3])
end
if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', 86400) then
  return 'dup'
end
if ARGV[2] == '' then
  redis.call('LPUSH', KEYS[1], ARGV[1])
  if ARGV[4] then
    -- pcall: a refused wake-up (an ACL without PUBLISH) must not fail a written job.
    redis.pcall('PUBLISH', ARGV[4], ARGV[5])
  end
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
return 'ok'
