-- Give jobs that a pool fetched ahead and has not started back to their queues
-- (PROTOCOL §5.8): its executors are all held by handlers far longer than usual (or it
-- stops), and another pool could run them now.
-- KEYS: four per job name: the pool's in-progress list, the queue, the lock, the
--   lock_info hash; then <p>cwork:cancelled.
-- ARGV[1] the pool's id; ARGV[2] the namespace's wake-up channel ('' for none); then,
--   for each name in the order of KEYS, the name, the number of its jobs and that many
--   jobs' bytes, oldest first.
-- Each job leaves the in-progress list (LREM from the head, where a fetch pushes it)
-- and goes to the queue's right end, so that the next fetch of any pool (RPOPLPUSH,
-- Go's too) takes it first: a name's jobs are pushed youngest first, so that they keep
-- their order; per name, the lock and the pool's lock_info field go down by the count
-- moved, as the reaper's requeue does, and the name is published on the wake-up
-- channel (§14.1) so that idle cwork pools fetch at once.
-- A job no longer in the in-progress list was given back by a reaper meanwhile (this
-- pool was judged dead) and is left alone. A job an operator cancelled (its id in
-- <p>cwork:cancelled, §21) stays in the in-progress list: it is not to run anywhere,
-- and the pool commits it to dead. A job the queue cannot take (a key of another type)
-- also stays: it is the pool's, to run. A counter that cannot move is left to the
-- lock-healing pass.
-- Returns {jobs moved, {1-based positions among ARGV's jobs of those not found},
-- {positions of those kept}, {"key: error" for every step that failed}, {positions of
-- those kept because cancelled}}.
local moved, missing, kept, errors, cancelled = 0, {}, {}, {}, {}
local nkeys = #KEYS - 1
local marks_key = KEYS[nkeys + 1]
local marks = redis.call('TYPE', marks_key).ok == 'hash'

-- Whether the job's id is marked cancelled (only a namespace with marks pays for it).
local function is_cancelled(job)
  if not marks then
    return false
  end
  local ok, decoded = pcall(cjson.decode, job)
  return ok and type(decoded) == 'table' and type(decoded.id) == 'string' and
           redis.call('HGET', marks_key, decoded.id) ~= false
end

local pos, a = 0, 3
for i = 1, nkeys, 4 do
  local name, n = ARGV[a], tonumber(ARGV[a + 1]) or 0
  local back = 0
  -- the youngest first, so that the oldest ends at the right end, next in line
  for j = n, 1, -1 do
    local job = ARGV[a + 1 + j]
    local at = pos + j
    if is_cancelled(job) then
      cancelled[#cancelled + 1] = at
    else
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
  end
  a = a + n + 2
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
    if ARGV[2] ~= '' then
      redis.pcall('PUBLISH', ARGV[2], name) -- a user without +publish: pools poll anyway
    end
    moved = moved + back
  end
end
return {moved, missing, kept, errors, cancelled}
