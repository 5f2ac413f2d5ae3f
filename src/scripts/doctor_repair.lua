-- The namespace doctor's checks that must see several keys at one moment, and its
-- repairs, one finding per call (PROTOCOL §25). Every kind checks again, inside the
-- call, that what the doctor found is still so; when it is not, it answers 0 and writes
-- nothing. No kind deletes a job: jobs move.
-- ARGV[1] the kind:
--   'rename'    KEYS[1] a key of the wrong type, KEYS[2] its quarantine key
--               <p>cwork:quarantine:key:<rest>; ARGV[2] the type found; ARGV[3] (for
--               a unique guard's key, else absent) the value of a grow's forwarding
--               marker (PROTOCOL §27.5). RENAMEs it (never over an existing key) and
--               removes its TTL — but never a marker, a hash whose one field `cwork`
--               holds ARGV[3]: it is a guard that expires with the grow's window.
--   'requeue'   KEYS[1] an in-progress list, KEYS[2] its queue, KEYS[3] the lock,
--               KEYS[4] lock_info, KEYS[5] the pool's heartbeat hash; ARGV[2] the pool id.
--               When the pool still has no heartbeat, moves every entry, oldest first,
--               to the left of the queue (as the reaper does, §9.3), takes the pool's
--               lock_info field off the lock and deletes the field.
--   'locks'     KEYS[1] the lock, KEYS[2] lock_info, KEYS[3..] the in-progress lists of
--               the pools ARGV[3..]; ARGV[2] 'check' or 'repair'. What each pool holds
--               is the length of its list: lock_info fields are set to it (0: HDEL)
--               and the lock to their sum. Answers 0 when they agree, -1 when
--               lock_info names a pool that is not among ARGV[3..] (read again), else
--               the text of the disagreement (after repairing it with 'repair').
--   'zmove'     KEYS[1] a zset, KEYS[2] its quarantine zset; ARGV[2] a member. Moves it
--               with its score.
--   'hmove'     KEYS[1] a hash, KEYS[2] its quarantine hash; ARGV[2] a field, ARGV[3]
--               the value found. Moves the field while it holds that value.
--   'unguard'   KEYS[1] a unique guard; ARGV[2] the value found ('1'). DEL while it
--               holds that value (a guard is no job).
--   'sadd'      KEYS[1] known_jobs; ARGV[2] a name. SADD.
--   'beat'      KEYS[1] a heartbeat hash; ARGV[2] the heartbeat_at found, ARGV[3] now.
--               Sets heartbeat_at to now while it holds the value found.
--   'batch'     KEYS[1] a batch hash, KEYS[2] its :jobs hash; ARGV[2] 'check' or
--               'repair'. The counts succeeded, dead and retrying are the tallies of
--               s, d and r in :jobs, and total is at least their sum. Answers 0 when
--               they agree, else the text (after repairing it with 'repair').
--   'file'      KEYS[1] <p>cwork:superseded, KEYS[2] <p>cwork:quarantine:superseded;
--               ARGV[2] the newest record found. While the newest record is still that
--               one, moves every record, oldest first, to the head of KEYS[2] (newest
--               first there too): the records are kept, no longer reported.
-- Every kind answers 1 when it repaired, 0 when there was nothing to do, or {-2, key}
-- when a key it would write has another type (nothing written).

local kind = ARGV[1]

local function key_type(k)
  return redis.call('TYPE', k).ok
end

local function want(k, t)
  local kt = key_type(k)
  return kt == t or kt == 'none'
end

local function int_text(s)
  if s and string.match(s, '^%-?%d+$') then
    return tonumber(s)
  end
  return nil
end

if kind == 'rename' then
  if key_type(KEYS[1]) ~= ARGV[2] then
    return 0
  end
  if ARGV[3] and ARGV[3] ~= '' and ARGV[2] == 'hash' and redis.call('HLEN', KEYS[1]) == 1
      and redis.call('HGET', KEYS[1], 'cwork') == ARGV[3] then
    return 0
  end
  if redis.call('EXISTS', KEYS[2]) == 1 then
    return {-2, KEYS[2]}
  end
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('PERSIST', KEYS[2])
  return 1
end

if kind == 'requeue' then
  if redis.call('EXISTS', KEYS[5]) == 1 then
    return 0
  end
  for i = 1, 4 do
    local t = ({'list', 'list', 'string', 'hash'})[i]
    if not want(KEYS[i], t) then
      return {-2, KEYS[i]}
    end
  end
  local n = 0
  while redis.call('RPOPLPUSH', KEYS[1], KEYS[2]) do
    n = n + 1
  end
  local held = int_text(redis.call('HGET', KEYS[4], ARGV[2])) or 0
  redis.call('HDEL', KEYS[4], ARGV[2])
  local lock = int_text(redis.call('GET', KEYS[3]))
  if lock and held ~= 0 then
    local left = lock - held
    if left < 0 then
      left = 0
    end
    redis.call('SET', KEYS[3], left)
  end
  if n == 0 then
    return 0
  end
  return 1
end

if kind == 'locks' then
  if not want(KEYS[1], 'string') or not want(KEYS[2], 'hash') then
    return 0
  end
  -- A pool holds a slot for each entry of its list, except that an upstream Go pool
  -- leaves a by-key placeholder behind after it released the slot (§4.5): entries that
  -- carry "unique_key" may or may not hold one. So each pool holds between its other
  -- entries (low) and all of them (high), and so does the lock between the sums.
  local pools, low, high, lsum, hsum = {}, {}, {}, 0, 0
  for i = 3, #KEYS do
    if not want(KEYS[i], 'list') then
      return 0
    end
    pools[ARGV[i]] = i
    high[i] = redis.call('LLEN', KEYS[i])
    low[i] = high[i]
    for _, e in ipairs(redis.call('LRANGE', KEYS[i], 0, -1)) do
      if string.find(e, '"unique_key"', 1, true) then
        low[i] = low[i] - 1
      end
    end
    lsum, hsum = lsum + low[i], hsum + high[i]
  end
  local function holds(i)
    return low[i] == high[i] and tostring(high[i]) or (low[i] .. ' to ' .. high[i])
  end
  local fields = redis.call('HGETALL', KEYS[2])
  local wrong, set = {}, {}
  for i = 1, #fields, 2 do
    local at = pools[fields[i]]
    if not at then
      return -1
    end
    local v = int_text(fields[i + 1])
    if not v or v < low[at] or v > high[at] then
      table.insert(wrong, 'lock_info field ' .. fields[i] .. ' is ' .. fields[i + 1] ..
                   ', its in-progress list holds ' .. holds(at))
      set[at] = (v and v > high[at]) and high[at] or low[at]
    end
  end
  for i = 3, #KEYS do
    if low[i] > 0 and redis.call('HEXISTS', KEYS[2], ARGV[i]) == 0 then
      table.insert(wrong, 'pool ' .. ARGV[i] .. ' holds ' .. holds(i) ..
                   ' in progress with no lock_info field')
      set[i] = low[i]
    end
  end
  local lock_text = redis.call('GET', KEYS[1])
  local lock = int_text(lock_text) or (lock_text and -1 or 0)
  if lock < lsum or lock > hsum then
    table.insert(wrong, 'lock is ' .. (lock_text or 'absent') .. ', in-progress lists hold ' ..
                 (lsum == hsum and tostring(hsum) or (lsum .. ' to ' .. hsum)))
  end
  if #wrong == 0 then
    return 0
  end
  if ARGV[2] == 'repair' then
    -- each wrong field to the nearest count it may hold, then the lock to their sum
    local sum = 0
    for i = 3, #KEYS do
      local v = set[i] or int_text(redis.call('HGET', KEYS[2], ARGV[i])) or 0
      if v > 0 then
        redis.call('HSET', KEYS[2], ARGV[i], v)
      else
        redis.call('HDEL', KEYS[2], ARGV[i])
      end
      sum = sum + v
    end
    redis.call('SET', KEYS[1], sum)
  end
  return table.concat(wrong, '; ')
end

if kind == 'zmove' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
  if not score then
    return 0
  end
  if not want(KEYS[2], 'zset') then
    return {-2, KEYS[2]}
  end
  redis.call('ZADD', KEYS[2], score, ARGV[2])
  redis.call('ZREM', KEYS[1], ARGV[2])
  return 1
end

if kind == 'hmove' then
  if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[3] then
    return 0
  end
  if not want(KEYS[2], 'hash') then
    return {-2, KEYS[2]}
  end
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
  redis.call('HDEL', KEYS[1], ARGV[2])
  return 1
end

if kind == 'unguard' then
  if key_type(KEYS[1]) ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[2] then
    return 0
  end
  redis.call('DEL', KEYS[1])
  return 1
end

if kind == 'sadd' then
  if not want(KEYS[1], 'set') then
    return {-2, KEYS[1]}
  end
  return redis.call('SADD', KEYS[1], ARGV[2])
end

if kind == 'beat' then
  if key_type(KEYS[1]) ~= 'hash' or redis.call('HGET', KEYS[1], 'heartbeat_at') ~= ARGV[2] then
    return 0
  end
  redis.call('HSET', KEYS[1], 'heartbeat_at', ARGV[3])
  return 1
end

if kind == 'batch' then
  if key_type(KEYS[1]) ~= 'hash' or not want(KEYS[2], 'hash') then
    return 0
  end
  local tally = {s = 0, d = 0, r = 0}
  local jobs = redis.call('HGETALL', KEYS[2])
  for i = 2, #jobs, 2 do
    if tally[jobs[i]] then
      tally[jobs[i]] = tally[jobs[i]] + 1
    end
  end
  local names = {s = 'succeeded', d = 'dead', r = 'retrying'}
  local wrong, sum = {}, 0
  for k, field in pairs(names) do
    local text = redis.call('HGET', KEYS[1], field)
    local v = int_text(text)
    sum = sum + tally[k]
    if (text or tally[k] ~= 0) and v ~= tally[k] then
      table.insert(wrong, field .. ' is ' .. (text or 'absent') .. ', :jobs counts ' .. tally[k])
    end
  end
  local total_text = redis.call('HGET', KEYS[1], 'total')
  local total = int_text(total_text)
  if not total or total < sum then
    table.insert(wrong, 'total is ' .. (total_text or 'absent') .. ', below the ' .. sum ..
                 ' jobs counted')
  end
  if #wrong == 0 then
    return 0
  end
  table.sort(wrong)
  if ARGV[2] == 'repair' then
    for k, field in pairs(names) do
      redis.call('HSET', KEYS[1], field, tally[k])
    end
    if not total or total < sum then
      redis.call('HSET', KEYS[1], 'total', sum)
    end
  end
  return table.concat(wrong, '; ')
end

if kind == 'file' then
  if key_type(KEYS[1]) ~= 'list' or redis.call('LINDEX', KEYS[1], 0) ~= ARGV[2] then
    return 0
  end
  if not want(KEYS[2], 'list') then
    return {-2, KEYS[2]}
  end
  while redis.call('RPOPLPUSH', KEYS[1], KEYS[2]) do
  end
  return 1
end

return redis.error_reply('doctor_repair: unknown kind ' .. tostring(kind))
