-- Make every lock equal to the sum of its lock_info fields (SPEC §8.5).
-- KEYS: two per job name: lock, lock_info.
-- Returns the lock keys that were adjusted.
local adjusted = {}
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local lock = tonumber(redis.call('GET', KEYS[i]))
    local sum = 0
    for _, v in ipairs(redis.call('HVALS', KEYS[i + 1])) do
      sum = sum + tonumber(v)
    end
    local diff = lock - sum
    if diff ~= 0 then
      redis.call('DECRBY', KEYS[i], diff)
      adjusted[#adjusted + 1] = KEYS[i]
    end
  end
end
return adjusted
