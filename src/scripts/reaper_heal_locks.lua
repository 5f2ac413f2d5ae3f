-- Make every lock counter true again (PROTOCOL §9.5, the fork's dangling-lock pass, widened).
-- KEYS: two per job name: lock, lock_info.
--
-- What is true: a pool's lock_info field counts the jobs of this name it holds, which
-- are exactly the entries of its in-progress list <p>jobs:<name>:<pool>:inprogress —
-- every fetch (Go's and cwork's) moves a job there and increments both counters in one
-- script, every commit removes it and decrements both in one MULTI or script, and so
-- does a reaper's requeue. Between two scripts field == LLEN holds for a sound pool.
-- It breaks when a pool commits jobs a reaper had already taken back: a Go pool frozen
-- past the dead time and then resumed decrements for jobs no longer in its list (its
-- field and the lock go negative, lock == sum of fields, and then more jobs run than the
-- type's max concurrency allows). Someone may also have written to the keys.
-- So, name by name:
--   * a field that differs from its pool's in-progress count (negative, not an
--     integer, or just wrong) is set to that count;
--   * the lock is set to the sum of the fields (if it differs, is not an integer, or is
--     missing while jobs are held); a lock that is missing while nothing is held stays
--     missing.
-- After this pass, a fetch sees the jobs actually running, and max concurrency holds.
-- Damage that cannot be repaired without destroying data (a lock_info or lock of
-- another type) is reported and that name's lock left as is; the other names go on.
-- A damaged in-progress list cannot be counted: its field is kept if it is a
-- non-negative integer, else set to 0, and reported.
--
-- Returns {lock keys that were changed, "what: old -> new" for every value changed,
-- "key: error" for every key that could not be repaired}.
local adjusted, healed, errors = {}, {}, {}
local function integer(s)
  if #s <= 18 and (s == '0' or string.find(s, '^%-?[1-9]%d*$')) then
    return tonumber(s)
  end
  return nil
end
for i = 1, #KEYS, 2 do
  local lock_key, info_key = KEYS[i], KEYS[i + 1]
  local base = string.sub(lock_key, 1, -6) -- <p>jobs:<name>, without ':lock'
  local info = redis.pcall('HGETALL', info_key)
  if info.err then
    errors[#errors + 1] = info_key .. ': ' .. info.err .. ' (lock not recounted)'
  else
    local sum = 0
    for j = 1, #info, 2 do
      local pool, raw = info[j], info[j + 1]
      local value = integer(raw)
      local held = redis.pcall('LLEN', base .. ':' .. pool .. ':inprogress')
      if type(held) ~= 'number' then
        errors[#errors + 1] = base .. ':' .. pool .. ':inprogress: ' .. held.err
        held = (value and value >= 0) and value or 0
      end
      if value ~= held then
        redis.call('HSET', info_key, pool, held)
        healed[#healed + 1] = info_key .. ' ' .. pool .. ': ' .. raw .. ' -> ' .. held
      end
      sum = sum + held
    end
    local lock = redis.pcall('GET', lock_key)
    if type(lock) == 'table' then
      errors[#errors + 1] = lock_key .. ': ' .. lock.err .. ' (left as is)'
    elseif (lock or sum > 0) and (not lock or integer(lock) ~= sum) then
      redis.call('SET', lock_key, sum)
      adjusted[#adjusted + 1] = lock_key
      healed[#healed + 1] = lock_key .. ': ' .. (lock or '(none)') .. ' -> ' .. sum
    end
  end
end
return {adjusted, healed, errors}
