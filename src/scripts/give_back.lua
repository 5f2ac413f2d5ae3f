-- Give jobs that a pool fetched ahead and has not started back to their queues
-- (PROTOCOL §5.8): its executors are all held by handlers far longer than usual, and
-- another pool could run them now.
-- KEYS: four per job name: the pool's in-progress list, the queue, the lock, the
--   lock_info hash.
-- ARGV[1] the pool's id; then, for each name in the order of KEYS, the number of its
--   jobs and that many jobs' bytes.
-- Each job leaves the in-progress list (LREM from the head, where a fetch pushes it)
-- and goes to the queue's right end, so that the next fetch of any pool (RPOPLPUSH,
-- Go's too) takes it first: a name's jobs are given oldest first and pushed youngest
-- first, so that they keep their order; per name, the lock and the pool's lock_info field go down
-- by the count moved, as the reaper's requeue does. A job no longer in the in-progress
-- list was given back by a reaper meanwhile (this pool was judged dead) and is left
-- alone. A job the queue cannot take (a key of another type) goes back into the
-- in-progress list: it stays the pool's, to run. A counter that cannot move is left to
-- the lock-healing pass.
-- Returns {jobs moved, {1-based positions among ARGV's jobs of those not found},
-- {positions of those kept}, {"key: error" for every step that failed}}.
local moved, missing, kept, errors = 0, {}, {}, {}
local pos, a = 0, 2
for i = 1, #KEYS, 4 do
  local n = tonumber(ARGV[a]) or 0
  local back = 0
  -- the youngest first, so that the oldest ends at the right end, next in line
  for j = n, 1, -1 do
    local job = ARGV[a + j]
    local at = pos + j
    local r = redis.pcall('LREM', KEYS[i], 1, job)
    if r == 1 then
      local q = redis.pcall('RPUSH', KEYS[i + 1], job)
      if type(q) == 'number' then
        back = back + 1
      else
        redis.call('LPUSH', KEYS[i], job)
        kept[#kept + 1] = at
        errors[#errors + 1] = KEYS[i + 1] .. ': ' .. q.err
      end
    elseif type(r) == 'table' then
      kept[#kept + 1] = at -- the in-progress list is damaged: nothing moved
      errors[#errors + 1] = KEYS[i] .. ': ' .. r.err
    else
      missing[#missing + 1] = at
    end
  end
  a = a + n + 1
  pos = pos + n
  if back > 0 then
    local r = redis.pcall('DECRBY', KEYS[i + 2], back)
    if type(r) == 'table' then
      errors[#errors + 1] = KEYS[i + 2] .. ': ' .. r.err
    end
    r = redis.pcall('HINCRBY', KEYS[i + 3], ARGV[1], -back)
    if type(r) == 'table' then
      errors[#errors + 1] = KEYS[i + 3] .. ': ' .. r.err
    end
    moved = moved + back
  end
end
return {moved, missing, kept, errors}
