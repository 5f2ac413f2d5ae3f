-- Commit finished jobs of one pool (SPEC §4.8, batched).
-- KEYS: four per job: the in-progress list it was fetched into, the lock and lock_info
--   of the queue it was fetched from, and the zset to forward it to (the dead set when
--   it is not forwarded: never an empty key name, for Redis Cluster).
-- ARGV[1] pool id; then four per job: raw bytes as fetched, forward flag ('1' or '0'),
--   score, the re-encoded job.
-- A job is only released and forwarded if LREM removed it: otherwise a reaper already
-- took it back, and a retry of this script after an ambiguous failure is harmless.
-- Returns the number of jobs removed.
local pool = ARGV[1]
local removed = 0
for i = 0, #KEYS / 4 - 1 do
  local k, a = i * 4, 1 + i * 4
  if redis.call('LREM', KEYS[k + 1], 1, ARGV[a + 1]) == 1 then
    redis.call('DECR', KEYS[k + 2])
    redis.call('HINCRBY', KEYS[k + 3], pool, -1)
    if ARGV[a + 2] == '1' then
      redis.call('ZADD', KEYS[k + 4], ARGV[a + 3], ARGV[a + 4])
    end
    removed = removed + 1
  end
end
return removed
