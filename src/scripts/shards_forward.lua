-- A unique enqueue during a grow (PROTOCOL §27.5), in the guard's OLD shard, for a key
-- whose shard differs between the record's `from` and `count`.
-- KEYS[1] the guard <p_old>unique:<name>:<JSON>\n, KEYS[2] its other spelling (or
--   KEYS[1] again; as enqueue_unique.lua)
-- ARGV[1] the forwarding marker's value
-- ARGV[2] the marker's TTL (s): '0' once the grow's forwarding window has passed (no
--   enqueuer is still on the old count: no marker is written)
-- ARGV[3] the guard's value on a re-arm, ARGV[4] '1' to re-arm (as enqueue_unique.lua's
--   ARGV[4] and ARGV[5]; '' and '' to leave a guard alone)
-- Returns 'dup' when a guard (either spelling, not a marker) is there: the job is a
-- duplicate, as enqueue_unique.lua would have found in an unsharded namespace, and
-- nothing is enqueued (the guard re-armed when ARGV[4] says so). Else 'new': the
-- enqueue goes to the key's new shard; while the window lasts the key's guard here
-- becomes a marker first (SET NX: a marker that is there keeps its TTL), which an
-- enqueuer still on the old count meets as a guard and is refused, so that two
-- enqueuers on two views cannot make two jobs.
local dup = false
for i = 1, 2 do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'none' and (t ~= 'string' or redis.call('GET', KEYS[i]) ~= ARGV[1]) then
    dup = true
  end
end
if dup then
  if ARGV[4] == '1' then
    for i = 1, KEYS[2] ~= KEYS[1] and 2 or 1 do
      if redis.call('TYPE', KEYS[i]).ok == 'string' and redis.call('GET', KEYS[i]) ~= ARGV[1] then
        redis.call('SET', KEYS[i], ARGV[3] ~= '' and ARGV[3] or '1', 'EX', 86400)
      end
    end
  end
  return 'dup'
end
if ARGV[2] ~= '0' then
  redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
end
return 'new'
