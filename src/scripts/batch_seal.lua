-- Seals a tracked batch (cwork_batch_seal, PROTOCOL §23): no job can join it any more,
-- and its callback may fire from now on — here at once when every job was counted
-- already (or the batch is empty).
-- KEYS[1] <p>cwork:batch:<id>, KEYS[2] <p>cwork:batch:<id>:jobs (expired with it)
-- ARGV[1] <p>, ARGV[2] now (Unix seconds), ARGV[3] the TTL of a finished batch
-- Returns 1 when this call sealed it, 0 when it was sealed already (the callback is then
-- tried again if a damaged queue refused it before); an error naming the key when there
-- is no such batch, or when the callback's queue refused it.
--[[include batch_lib.lua]]
--[[include acl_lib.lua]]
local t = redis.call('TYPE', KEYS[1]).ok
if t ~= 'hash' then
  return redis.error_reply('NOBATCH ' .. KEYS[1] ..
    (t == 'none' and ' does not exist (never opened, or expired)' or ' is a ' .. t))
end
-- The writes the seal and its callback make, asked of the ACL before the first one, so
-- that a refused one leaves the batch as it was (acl_lib.lua).
local cb = redis.call('HGET', KEYS[1], 'cb_name') or ''
local refused = acl_refusal({{'HSET', KEYS[1], 'sealed', '1'}, {'HMGET', KEYS[1], 'sealed'},
  {'EXPIRE', KEYS[1], ARGV[3]},
  {'EXPIRE', KEYS[2], ARGV[3]}, {'LPUSH', ARGV[1] .. 'jobs:' .. cb, 'x'}})
if refused then
  return refused
end
local sealed = 1
if redis.call('HGET', KEYS[1], 'sealed') == '1' then
  sealed = 0
else
  redis.call('HSET', KEYS[1], 'sealed', '1')
end
local err = batch_fire(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
if err then
  return redis.error_reply('ERR ' .. err)
end
return sealed
