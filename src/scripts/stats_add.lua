-- Adds the jobs a pool finished since its last write to the namespace's throughput
-- counts (PROTOCOL §14.2): the daily hash and the minute's fields in the hour's hash, in
-- one step, so that the minutes of a day always sum to that day's counts whatever
-- process dies when. A key of another type (someone else's data) fails the call before
-- anything is written, since a script is not undone by a later error.
-- KEYS[1] <p>cwork:stat:<YYYY-MM-DD>     KEYS[2] <p>cwork:stat:<YYYY-MM-DDTHH>
-- ARGV[1] processed (finished, failed included)   ARGV[2] failed
-- ARGV[3] the minute, "MM"   ARGV[4] the day's TTL (s)   ARGV[5] the hour's TTL (s)
-- Returns 1.
for i = 1, 2 do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'hash' and t ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' is a ' .. t .. ', not a hash of counts')
  end
end
redis.call('HINCRBY', KEYS[1], 'processed', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'failed', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('HINCRBY', KEYS[2], ARGV[3] .. ':processed', ARGV[1])
redis.call('HINCRBY', KEYS[2], ARGV[3] .. ':failed', ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1
