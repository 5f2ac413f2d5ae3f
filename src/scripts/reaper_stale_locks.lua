-- Release the concurrency slots a dead pool still holds (PROTOCOL §9.3, stale-lock script).
-- KEYS: two per job name: lock, lock_info.   ARGV[1] the dead pool's id.
-- For each name where the pool has a lock_info field: the lock is decremented by it and
-- the field deleted; a lock that went below zero is set to 0 and reported. (Run once —
-- PROTOCOL §16.11.)
-- Damage, name by name: a field that is not an integer is deleted all the same (the
-- pool is dead; the lock is recounted by the lock-healing pass); a lock that cannot be
-- decremented is left to that pass; a lock_info of another type is reported.
-- Returns {lock keys that went negative, "key: error" for every step that failed}.
local negative, errors = {}, {}
local function failed(r, key)
  if type(r) == 'table' and r.err then
    errors[#errors + 1] = key .. ': ' .. r.err
    return true
  end
  return false
end
for i = 1, #KEYS, 2 do
  local raw = redis.pcall('HGET', KEYS[i + 1], ARGV[1])
  if raw and not failed(raw, KEYS[i + 1]) then
    local held = string.find(raw, '^%-?%d+$') and #raw <= 18 and tonumber(raw)
    if held then
      local lock = redis.pcall('DECRBY', KEYS[i], held)
      if not failed(lock, KEYS[i]) and lock < 0 then
        redis.call('SET', KEYS[i], 0)
        negative[#negative + 1] = KEYS[i]
      end
    else
      errors[#errors + 1] = KEYS[i + 1] .. ': field ' .. ARGV[1] .. ' is not an integer (' ..
        raw .. '), deleted'
    end
    redis.call('HDEL', KEYS[i + 1], ARGV[1])
  end
end
return {negative, errors}
