-- Included by the enqueue scripts (enqueue.lua, enqueue_unique.lua, enqueue_batch.lua,
-- batch_seal.lua, shards_forward.lua). Defines acl_refusal; on its own it does nothing.
--
-- acl_refusal(calls): a script's writes are not undone when a later call fails, so a
-- command the Redis user may not run, met after the first write, would leave a half
-- write (known_jobs without its job, a unique guard without its job). Each call the
-- script will make, {command, key, arg...}, is asked of the ACL (Redis 7's
-- redis.acl_check_cmd, which also checks the key against the user's key patterns)
-- before the first write. Returns nil when all are allowed, else an error reply naming
-- the first refused command and its key. Redis 6 cannot be asked: nil (a refusal then
-- fails the script at that call, as before).
local function acl_refusal(calls)
  if not redis.acl_check_cmd then
    return nil
  end
  for _, c in ipairs(calls) do
    if not redis.acl_check_cmd(unpack(c)) then
      local cmd = string.lower(c[1])
      return redis.error_reply('NOPERM the Redis user may not run \'' .. cmd .. '\' (ACL +' ..
        cmd .. ') on ' .. c[2] .. ': nothing written')
    end
  end
  return nil
end
