-- Grow a sharded namespace (PROTOCOL §27.5): the record's count goes up, in one step.
-- KEYS[1] the shard record <p>cwork:shards
-- ARGV[1] the new count (checked by the caller: 2 to 1024)
-- ARGV[2] now (Unix s)
-- ARGV[3] the hash function's name (written, with created, when there is no record)
-- Returns 'grown', or 'same' when the count already is ARGV[1] (nothing changes: a grow
-- is idempotent). Error replies, nothing written: the record is not a hash; the new
-- count is below the recorded one (no shrinking); a grow to another count is still in
-- progress (its `from` is set: finish it first).
-- `homes` is written once, at the first grow, as the count before it: names (pinned
-- types, periodic jobs) keep routing by it for ever, so a limit or a fire time stays in
-- one shard. `from` is the count before this grow, until `cwork shards finish`.
local t = redis.call('TYPE', KEYS[1]).ok
if t ~= 'hash' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' is a ' .. t .. ', not a hash: nothing written')
end
local want = tonumber(ARGV[1])
local cur = tonumber(redis.call('HGET', KEYS[1], 'count') or '1')
if not cur then
  return redis.error_reply('DAMAGED ' .. KEYS[1] .. ': its count is not a number')
end
if want == cur then
  return 'same'
end
if want < cur then
  return redis.error_reply('SHRINK ' .. KEYS[1] .. ' has ' .. cur ..
    ' shards: a namespace cannot shrink (to ' .. want .. ')')
end
local from = redis.call('HGET', KEYS[1], 'from')
if from then
  return redis.error_reply('GROWING ' .. KEYS[1] .. ' is still growing from ' .. from ..
    ' to ' .. cur .. ' shards: finish that grow first (cwork shards finish)')
end
if t == 'none' then
  redis.call('HSET', KEYS[1], 'hash', ARGV[3], 'created', ARGV[2])
end
if redis.call('HEXISTS', KEYS[1], 'homes') == 0 then
  redis.call('HSET', KEYS[1], 'homes', cur)
end
redis.call('HSET', KEYS[1], 'from', cur, 'count', want, 'grown', ARGV[2])
return 'grown'
