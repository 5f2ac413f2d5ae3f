-- A unique enqueue during a grow (PROTOCOL §27.5), in the guard's OLD shard, for a key
-- whose shard differs between the record's `from` and `count`.
-- KEYS[1] the guard <p_old>unique:<name>:<JSON>\n, KEYS[2] its other spelling (or
--   KEYS[1] again; as enqueue_unique.lua)
-- ARGV[1] the marker's value (field `cwork` of the hash)
-- ARGV[2] the marker's TTL (s): '0' once the grow's forwarding window has passed (no
--   enqueuer is still on the old count: no marker is written)
-- ARGV[3] the guard's value on a re-arm, ARGV[4] '1' to re-arm (as enqueue_unique.lua's
--   ARGV[4] and ARGV[5]; '' and '' to leave a guard alone)
-- Returns 'dup' when a guard (either spelling; anything but a marker) is there: the job
-- is a duplicate, as enqueue_unique.lua would have found in an unsharded namespace, and
-- nothing is enqueued (a string guard re-armed when ARGV[4] says so). Else 'new': the
-- enqueue goes to the key's new shard; while the window lasts the key's guard here
-- becomes a forwarding marker first — a hash {cwork: ARGV[1]} with the TTL, left as it
-- is when there — which an enqueuer still on the old count meets as a guard (any type
-- is one, §4.4) and never re-arms (only strings are, §16.15), so that two enqueuers on
-- two views cannot make two jobs and the marker expires as set.
--[[include acl_lib.lua]]
local function is_marker(key)
  return redis.call('TYPE', key).ok == 'hash' and redis.call('HGET', key, 'cwork') == ARGV[1]
end
local dup = false
for i = 1, 2 do
  if redis.call('TYPE', KEYS[i]).ok ~= 'none' and not is_marker(KEYS[i]) then
    dup = true
  end
end
if dup then
  if ARGV[4] == '1' then
    for i = 1, KEYS[2] ~= KEYS[1] and 2 or 1 do
      if redis.call('TYPE', KEYS[i]).ok == 'string' then
        redis.call('SET', KEYS[i], ARGV[3] ~= '' and ARGV[3] or '1', 'EX', 86400)
      end
    end
  end
  return 'dup'
end
if ARGV[2] ~= '0' and redis.call('EXISTS', KEYS[1]) == 0 then
  local refused = acl_refusal({{'HSET', KEYS[1], 'cwork', ARGV[1]}, {'EXPIRE', KEYS[1], ARGV[2]}})
  if refused then
    return refused
  end
  redis.call('HSET', KEYS[1], 'cwork', ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return 'new'
