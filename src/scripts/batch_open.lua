-- Opens a tracked batch (cwork_batch_open, PROTOCOL §23.1): writes its hash and gives it
-- the TTL of an open batch, so that a batch never sealed, or whose jobs never all finish,
-- is not kept for ever (sealing and counting leave the TTL alone; the completion check
-- replaces it with the TTL of a finished batch). Both writes or neither: the EXPIRE is
-- asked of the ACL before the HSET (Redis 7's redis.acl_check_cmd; older servers have no
-- per-command ACL refusal that could come between the two).
-- KEYS[1] <p>cwork:batch:<id>
-- ARGV[1] the TTL of an open batch (seconds), then the hash's fields and values.
-- Returns 1; an error when the key exists (ids are random: never in practice), or when
-- the ACL refuses EXPIRE.
if redis.acl_check_cmd and not redis.acl_check_cmd('EXPIRE', KEYS[1], ARGV[1]) then
  return redis.error_reply('NOPERM this user may not run \'expire\' on ' .. KEYS[1] ..
    ': the batch was not opened')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('ERR ' .. KEYS[1] .. ' exists already: the batch was not opened')
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
