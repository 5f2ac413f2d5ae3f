-- Give a dead pool's in-progress jobs back to their queues (SPEC §8.3), all at once.
-- KEYS: four per job name: the dead pool's in-progress list, the queue, the lock, the
--   lock_info hash.   ARGV[1] the dead pool's id.
-- The same end state as Go's script called until it returns nil: every entry moves
-- unchanged from the in-progress list's right end to the queue's left end (behind the
-- waiting jobs), and per job the lock is decremented and the pool's lock_info field too
-- (here once per name, by the count).
-- Returns the number of jobs moved.
local moved = 0
for i = 1, #KEYS, 4 do
  local n = 0
  while redis.call('RPOPLPUSH', KEYS[i], KEYS[i + 1]) do
    n = n + 1
  end
  if n > 0 then
    redis.call('DECRBY', KEYS[i + 2], n)
    redis.call('HINCRBY', KEYS[i + 3], ARGV[1], -n)
    moved = moved + n
  end
end
return moved
