-- Pools that hold lock_info fields but are not in worker_pools (PROTOCOL §9.4): crashed
-- before their first heartbeat, removed by an earlier pass, or stopped leaving fields.
-- KEYS[1] <p>worker_pools, then the lock_info hash of every job name considered.
-- Returns {a JSON object: pool id → array of the lock_info keys it appears in ('{}'),
-- then "key: error" for every lock_info key that could not be read}.
local unknown, errors = {}, {}
for i = 2, #KEYS do
  local pools = redis.pcall('HKEYS', KEYS[i])
  if pools.err then
    errors[#errors + 1] = KEYS[i] .. ': ' .. pools.err
  else
    for _, pool in ipairs(pools) do
      if redis.call('SISMEMBER', KEYS[1], pool) == 0 then
        unknown[pool] = unknown[pool] or {}
        table.insert(unknown[pool], KEYS[i])
      end
    end
  end
end
local out = {cjson.encode(unknown)}
for _, e in ipairs(errors) do
  out[#out + 1] = e
end
return out
