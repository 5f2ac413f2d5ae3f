-- Commit finished jobs of one pool (SPEC §4.8, batched).
-- KEYS: for each queue g = 1..G the jobs came from: its in-progress list (this pool's),
--   lock and lock_info; then KEYS[3G+1] <p>retry and KEYS[3G+2] <p>dead.
-- ARGV[1] pool id; ARGV[2] G; then for each g: the number of succeeded jobs and of
--   failed jobs; then the raw bytes (as fetched) of every succeeded job, queue by queue;
--   then for every failed job, queue by queue: raw bytes, target ('r' retry, 'd' dead,
--   '-' dropped), score, the re-encoded job.
-- (One argument per succeeded job: each argument costs Redis about as much as a call.)
-- A job is only released and forwarded if LREM removed it: otherwise a reaper already
-- took it back, and a retry of this script after an ambiguous failure is harmless.
-- Locks are released once per queue (DECRBY/HINCRBY by the count): the same end state
-- as Go's DECR and HINCRBY -1 per job.
-- Returns the number of jobs removed.
local pool, G = ARGV[1], tonumber(ARGV[2])
local a = 3 + 2 * G
local released = {}
for g = 1, G do
  local inprogress, n = KEYS[3 * g - 2], 0
  for _ = 1, tonumber(ARGV[1 + 2 * g]) do
    n = n + redis.call('LREM', inprogress, 1, ARGV[a])
    a = a + 1
  end
  released[g] = n
end
local removed = 0
for g = 1, G do
  local inprogress, n = KEYS[3 * g - 2], released[g]
  for _ = 1, tonumber(ARGV[2 + 2 * g]) do
    if redis.call('LREM', inprogress, 1, ARGV[a]) == 1 then
      n = n + 1
      local target = ARGV[a + 1]
      if target == 'r' then
        redis.call('ZADD', KEYS[3 * G + 1], ARGV[a + 2], ARGV[a + 3])
      elseif target == 'd' then
        redis.call('ZADD', KEYS[3 * G + 2], ARGV[a + 2], ARGV[a + 3])
      end
    end
    a = a + 4
  end
  if n > 0 then
    redis.call('DECRBY', KEYS[3 * g - 1], n)
    redis.call('HINCRBY', KEYS[3 * g], pool, -n)
  end
  removed = removed + n
end
return removed
