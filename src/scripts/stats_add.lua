-- Adds the jobs a pool finished since its last write to the namespace's throughput
-- counts (PROTOCOL §14.2): the daily hash and the minute's fields in the hour's hash, in
-- one step, so that the minutes of a day always sum to that day's counts whatever
-- process dies when. A key of another type (someone else's data) fails the call before
-- anything is written, since a script is not undone by a later error.
-- The pool sends its totals, not a difference: the script keeps what it has added for
-- that pool (KEYS[3]) and adds only the rest, so a write the pool tries again after an
-- unknown outcome (a timeout, a dropped connection after the call ran) counts once.
-- KEYS[1] <p>cwork:stat:<YYYY-MM-DD>     KEYS[2] <p>cwork:stat:<YYYY-MM-DDTHH>
-- KEYS[3] <p>cwork:stats_sent:<pool id>
-- ARGV[1] the pool's processed total (finished, failed included)   ARGV[2] its failed total
-- ARGV[3] the minute, "MM"   ARGV[4] the day's TTL (s)   ARGV[5] the hour's TTL (s)
-- ARGV[6], ARGV[7] the processed and failed totals the pool knows were added (used when
--   KEYS[3] is gone: it expired, or the pool's last write deleted it)
-- ARGV[8] '1' for the pool's last write (it stops): KEYS[3] is deleted, else kept for
--   the hour's TTL (ARGV[5])
-- Returns 1.
for i = 1, 3 do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'hash' and t ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' is a ' .. t .. ', not a hash of counts')
  end
end
local sent = redis.call('HMGET', KEYS[3], 'processed', 'failed')
local dp = tonumber(ARGV[1]) - (tonumber(sent[1]) or tonumber(ARGV[6]))
local df = tonumber(ARGV[2]) - (tonumber(sent[2]) or tonumber(ARGV[7]))
-- Never less than nothing (a total below what was added: a pool id reused).
dp, df = math.max(dp, 0), math.max(df, 0)
if dp > 0 or df > 0 then
  local np, nf = string.format('%d', dp), string.format('%d', df)
  redis.call('HINCRBY', KEYS[1], 'processed', np)
  redis.call('HINCRBY', KEYS[1], 'failed', nf)
  redis.call('EXPIRE', KEYS[1], ARGV[4])
  redis.call('HINCRBY', KEYS[2], ARGV[3] .. ':processed', np)
  redis.call('HINCRBY', KEYS[2], ARGV[3] .. ':failed', nf)
  redis.call('EXPIRE', KEYS[2], ARGV[5])
end
if ARGV[8] == '1' then
  redis.call('DEL', KEYS[3])
else
  redis.call('HSET', KEYS[3], 'processed', ARGV[1], 'failed', ARGV[2])
  redis.call('EXPIRE', KEYS[3], ARGV[5])
end
return 1
