-- Renew the reaper lock's lease, only while we still hold it.
-- KEYS[1] <p>reaper_lock   ARGV[1] our lock value   ARGV[2] the lease in milliseconds.
-- Returns 1 when renewed, 0 when the lock is gone or another's (the cycle must stop).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
