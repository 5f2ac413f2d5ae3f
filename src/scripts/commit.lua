-- Commit finished jobs of one pool (SPEC §4.8, batched).
-- KEYS: four per job: the in-progress list it was fetched into, the lock and lock_info
--   of the queue it was fetched from, and the zset to forward it to (the dead set when
--   it is not forwarded: never an empty key name, for Redis Cluster).
-- ARGV[1] pool id; then four per job: raw bytes as fetched, forward flag ('1' or '0'),
--   score, the re-encoded job.
-- A job is only released and forwarded if LREM removed it: otherwise a reaper already
-- took it back, and a retry of this script after an ambiguous failure is harmless.
-- The lock counters are released once per queue (DECRBY/HINCRBY by the count): the same
-- end state as Go's DECR and HINCRBY -1 per job, at a fraction of the cost.
-- Returns the number of jobs removed.
local pool = ARGV[1]
local removed = 0
local released, first = {}, {}
for i = 0, #KEYS / 4 - 1 do
  local k, a = i * 4, 1 + i * 4
  if redis.call('LREM', KEYS[k + 1], 1, ARGV[a + 1]) == 1 then
    local lock = KEYS[k + 2]
    if released[lock] == nil then
      released[lock] = 0
      first[#first + 1] = k
    end
    released[lock] = released[lock] + 1
    if ARGV[a + 2] == '1' then
      redis.call('ZADD', KEYS[k + 4], ARGV[a + 3], ARGV[a + 4])
    end
    removed = removed + 1
  end
end
for _, k in ipairs(first) do
  local n = released[KEYS[k + 2]]
  redis.call('DECRBY', KEYS[k + 2], n)
  redis.call('HINCRBY', KEYS[k + 3], pool, -n)
end
return removed
