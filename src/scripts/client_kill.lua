-- Kills jobs of the retry or scheduled set (`cwork retry kill`, Sidekiq's "Kill"; PROTOCOL
-- §24): moves them to the dead set at once, where a Go or cwork client sees them as any
-- job that used up its retries.
-- KEYS[1] the set (<p>retry or <p>scheduled), KEYS[2] <p>dead
-- ARGV[1] <p>   ARGV[2] now (Unix seconds)   ARGV[3] the TTL of a finished batch (§23)
-- ARGV[4] 'one': ARGV[5], ARGV[7] the ZRANGEBYSCORE bounds of the listed score (see
--         cw_score_range), ARGV[6] the job id — the members with that score and id;
--         'all': ARGV[5] batch size, ARGV[6] first rank, ARGV[7] (optional) only jobs of
--         this name — at most a batch of members from that rank (the caller adds the
--         members that stayed to its next first rank and stops when fewer than a batch
--         were looked at).
-- The dead entry has score now (Go's dead set is scored by the time a job died). A job
-- that carries `err` (a retry job: its last failure) enters dead with its bytes as they
-- are; one without (a scheduled job never failed) gets err "killed" and failed_at = now
-- in cjson's encoding, so that the dead list shows why it is there. A job of a tracked
-- batch counts there as dead, once, in the same step (batch_lib.lua; its callback may
-- fire), as a cancelled job does. Members cjson cannot decode, or without a string name
-- and id, stay where they are.
-- Returns {killed, members looked at, the bytes of each killed job…} (the caller drops
-- the unique guards of killed scheduled jobs, which a script cannot name), or {-1, key}
-- when a key holds another type than a sorted set (nothing written).
--[[include batch_lib.lua]]

for i = 1, 2 do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'zset' and t ~= 'none' then
    return {-1, KEYS[i]}
  end
end
local prefix, now, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local one = ARGV[4] == 'one'
local members
if one then
  members = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[5], ARGV[7])
else
  local first = tonumber(ARGV[6])
  members = redis.call('ZRANGE', KEYS[1], first, first + tonumber(ARGV[5]) - 1)
end
local out = {0, #members}
for _, raw in ipairs(members) do
  local ok, job = pcall(cjson.decode, raw)
  local match = ok and type(job) == 'table' and type(job.name) == 'string' and
    type(job.id) == 'string'
  if match and one then
    match = job.id == ARGV[6]
  elseif match and ARGV[7] ~= nil then
    match = job.name == ARGV[7]
  end
  if match then
    local entry = raw
    if type(job.err) ~= 'string' or job.err == '' then
      job.err = 'killed'
      job.failed_at = now
      entry = cjson.encode(job)
    end
    redis.call('ZREM', KEYS[1], raw)
    redis.call('ZADD', KEYS[2], now, entry)
    out[1] = out[1] + 1
    out[#out + 1] = raw
    if type(job.cwork_batch) == 'string' and string.find(job.cwork_batch, '^%x+$') then
      -- (a damaged batch hash leaves the batch as it was: `cwork batch` names it)
      batch_count(prefix .. 'cwork:batch:' .. job.cwork_batch, job.id, 100, prefix, now, ttl)
    end
  end
end
return out
