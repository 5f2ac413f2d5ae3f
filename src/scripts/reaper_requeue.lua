-- Give a dead pool's in-progress jobs back to their queues (PROTOCOL §9.3), all at once.
-- KEYS: four per job name: the dead pool's in-progress list, the queue, the lock, the
--   lock_info hash.   ARGV[1] the dead pool's id.
-- The same end state as Go's script called until it returns nil: every entry moves
-- unchanged from the in-progress list's right end to the queue's left end (behind the
-- waiting jobs), and per job the lock is decremented and the pool's lock_info field too
-- (here once per name, by the count).
-- A damaged key (a list of another type, a counter that is not an integer) stops
-- nothing but its own step: RPOPLPUSH checks both lists before it moves anything, so a
-- job stays where it is (and its name is reported, so that the caller keeps the pool's
-- slot for it and a later cycle tries again); a counter that cannot move is left to the
-- lock-healing pass.
-- Returns {number of jobs moved, {the 1-based index of every name whose jobs could not
-- move}, {"key: error" for every step that failed}}.
local moved, stuck, errors = 0, {}, {}
for i = 1, #KEYS, 4 do
  local n = 0
  while true do
    local job = redis.pcall('RPOPLPUSH', KEYS[i], KEYS[i + 1])
    if type(job) == 'table' and job.err then
      errors[#errors + 1] = KEYS[i] .. ' -> ' .. KEYS[i + 1] .. ': ' .. job.err
      stuck[#stuck + 1] = (i + 3) / 4
      break
    end
    if not job then
      break
    end
    n = n + 1
  end
  if n > 0 then
    local r = redis.pcall('DECRBY', KEYS[i + 2], n)
    if type(r) == 'table' and r.err then
      errors[#errors + 1] = KEYS[i + 2] .. ': ' .. r.err
    end
    r = redis.pcall('HINCRBY', KEYS[i + 3], ARGV[1], -n)
    if type(r) == 'table' and r.err then
      errors[#errors + 1] = KEYS[i + 3] .. ': ' .. r.err
    end
    moved = moved + n
  end
end
return {moved, stuck, errors}
