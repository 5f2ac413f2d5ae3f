-- Release the reaper lock only if we still hold it (PROTOCOL §9.2 item 5).
-- KEYS[1] <p>reaper_lock   ARGV[1] our lock value.   Returns the DEL count (0 or 1).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
