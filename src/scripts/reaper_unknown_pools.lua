-- Pools that hold lock_info fields but are not in worker_pools (SPEC §8.4): crashed
-- before their first heartbeat, removed by an earlier pass, or stopped leaving fields.
-- KEYS[1] <p>worker_pools, then the lock_info hash of every job name considered.
-- Returns a JSON object: pool id → array of the lock_info keys it appears in ('{}').
local unknown = {}
for i = 2, #KEYS do
  for _, pool in ipairs(redis.call('HKEYS', KEYS[i])) do
    if redis.call('SISMEMBER', KEYS[1], pool) == 0 then
      unknown[pool] = unknown[pool] or {}
      table.insert(unknown[pool], KEYS[i])
    end
  end
end
return cjson.encode(unknown)
