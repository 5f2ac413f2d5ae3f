-- Release the concurrency slots a dead pool still holds (SPEC §8.3, stale-lock script).
-- KEYS: two per job name: lock, lock_info.   ARGV[1] the dead pool's id.
-- For each name where the pool has a lock_info field: the lock is decremented by it and
-- the field deleted; a lock that went below zero is set to 0 and reported.
-- Returns the lock keys that went negative. (Run once — SPEC §15 item 1.)
local negative = {}
for i = 1, #KEYS, 2 do
  local held = tonumber(redis.call('HGET', KEYS[i + 1], ARGV[1]))
  if held then
    local lock = redis.call('DECRBY', KEYS[i], held)
    redis.call('HDEL', KEYS[i + 1], ARGV[1])
    if lock < 0 then
      redis.call('SET', KEYS[i], 0)
      negative[#negative + 1] = KEYS[i]
    end
  end
end
return negative
