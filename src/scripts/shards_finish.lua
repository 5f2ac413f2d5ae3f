-- End a grow (PROTOCOL §27.5): remove the record's `from`, when it is still the grow
-- the caller checked.
-- KEYS[1] the shard record <p>cwork:shards
-- ARGV[1] the from the caller saw, ARGV[2] the count it saw
-- Returns 'finished', 'none' when no grow is in progress, or 'changed' when the record
-- no longer holds ARGV[1] and ARGV[2] (nothing is changed then).
local b = redis.call('HMGET', KEYS[1], 'from', 'count')
if not b[1] then
  return 'none'
end
if b[1] ~= ARGV[1] or b[2] ~= ARGV[2] then
  return 'changed'
end
redis.call('HDEL', KEYS[1], 'from')
return 'finished'
