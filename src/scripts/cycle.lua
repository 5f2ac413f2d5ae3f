-- One dispatcher round trip: commit finished jobs (SPEC §4.8), then fetch new ones
-- (SPEC §4.6), in one script call — each call has a fixed cost in Redis, and every key
-- and argument costs about as much as a command.
--
-- KEYS: six per registered job type, in registration order: queue, this pool's
--   in-progress list, paused, lock, lock_info, max_concurrency; then <p>retry, <p>dead.
-- ARGV[1] pool id
-- ARGV[2] '1' to move one job per step (RPOPLPUSH, servers < 6.2)
-- ARGV[3] the draws: for each draw, the 1-based type indices in the order the priority
--   sampler drew them, ARGV[4] bytes (big-endian) each, draw after draw ('' = no fetch)
-- ARGV[5] G, the number of types with jobs to commit; then G triples: type index,
--   number of succeeded jobs, number of failed jobs; then the raw bytes (as fetched) of
--   every succeeded job, type by type; then for every failed job, type by type: raw
--   bytes, target ('r' retry, 'd' dead, '-' dropped), score, the re-encoded job.
--
-- Commit: a job is released and forwarded only if LREM removed it (otherwise a reaper
-- took it back; a retry of this script after an ambiguous failure is harmless).
-- Fetch: each draw takes the first type in its order that still has a job available —
-- not paused, under its max concurrency (counting the slots this call releases), not
-- emptied by earlier draws — as the Go fetch does for one draw; each type's share moves
-- in one step. Locks: per type one INCRBY and one HINCRBY by (taken − released), the
-- same end state as Go's INCR/DECR and HINCRBY ±1 per job.
-- Returns {jobs removed by the commit, type index, {job bytes…}, type index, {…}, …}.
local pool = ARGV[1]
local ntypes = (#KEYS - 2) / 6
local retry, dead = KEYS[6 * ntypes + 1], KEYS[6 * ntypes + 2]
local delta = {}

-- Commit.
local G = tonumber(ARGV[5])
local a = 6 + 3 * G
local removed = 0
for g = 1, G do
  local t = tonumber(ARGV[3 + 3 * g])
  local inprogress, n = KEYS[(t - 1) * 6 + 2], 0
  for _ = 1, tonumber(ARGV[4 + 3 * g]) do
    n = n + redis.call('LREM', inprogress, 1, ARGV[a])
    a = a + 1
  end
  delta[t] = (delta[t] or 0) - n
  removed = removed + n
end
for g = 1, G do
  local t = tonumber(ARGV[3 + 3 * g])
  local inprogress, n = KEYS[(t - 1) * 6 + 2], 0
  for _ = 1, tonumber(ARGV[5 + 3 * g]) do
    if redis.call('LREM', inprogress, 1, ARGV[a]) == 1 then
      n = n + 1
      local target = ARGV[a + 1]
      if target == 'r' then
        redis.call('ZADD', retry, ARGV[a + 2], ARGV[a + 3])
      elseif target == 'd' then
        redis.call('ZADD', dead, ARGV[a + 2], ARGV[a + 3])
      end
    end
    a = a + 4
  end
  delta[t] = (delta[t] or 0) - n
  removed = removed + n
end

-- Fetch.
local out = {removed}
local draws, width = ARGV[3], tonumber(ARGV[4])
if #draws > 0 then
  local single = ARGV[2] == '1'
  local paused, pkeys, mkeys = {}, {}, {}
  for t = 1, ntypes do
    pkeys[t] = KEYS[(t - 1) * 6 + 3]
    mkeys[2 * t - 1] = KEYS[(t - 1) * 6 + 4]
    mkeys[2 * t] = KEYS[(t - 1) * 6 + 6]
  end
  -- One EXISTS over all paused keys; per key only when something is paused.
  if redis.call('EXISTS', unpack(pkeys)) > 0 then
    for t = 1, ntypes do
      paused[t] = redis.call('EXISTS', pkeys[t]) == 1
    end
  end
  local locks = redis.call('MGET', unpack(mkeys))
  local avail, take = {}, {}
  local function available(t)
    if avail[t] == nil then
      local n = 0
      if not paused[t] then
        n = redis.call('LLEN', KEYS[(t - 1) * 6 + 1])
      end
      if n > 0 then
        local limit = tonumber(locks[2 * t])
        if limit and limit ~= 0 then
          -- Go allows a fetch while there is no counter or lock < limit: room is
          -- ceil(limit − lock), where the lock already counts the slots released above,
          -- and at least one while the counter does not exist (even for a negative limit).
          local counter = tonumber(locks[2 * t - 1])
          local lock = (counter or 0) + (delta[t] or 0)
          local room = math.ceil(limit - lock)
          if counter == nil and room < 1 then
            room = 1
          end
          if room < n then
            n = room
          end
          if n < 0 then
            n = 0
          end
        end
      end
      avail[t] = n
      take[t] = 0
    end
    return avail[t] - take[t]
  end
  local step = ntypes * width
  for d = 1, #draws, step do
    for pos = d, d + step - 1, width do
      local t = string.byte(draws, pos)
      if width == 2 then
        t = t * 256 + string.byte(draws, pos + 1)
      end
      if available(t) > 0 then
        take[t] = take[t] + 1
        break
      end
    end
  end
  for t, n in pairs(take) do
    if n > 0 then
      local base = (t - 1) * 6
      local jobs
      if single or n == 1 then
        -- One call per job: the old servers' path, and the cheaper one for one job.
        jobs = {}
        for i = 1, n do
          jobs[i] = redis.call('RPOPLPUSH', KEYS[base + 1], KEYS[base + 2])
        end
      else
        jobs = redis.call('RPOP', KEYS[base + 1], n)
        for i = 1, #jobs, 1000 do
          redis.call('LPUSH', KEYS[base + 2], unpack(jobs, i, math.min(i + 999, #jobs)))
        end
      end
      delta[t] = (delta[t] or 0) + n
      out[#out + 1] = t
      out[#out + 1] = jobs
    end
  end
end

-- Locks: one adjustment per type.
for t, n in pairs(delta) do
  if n ~= 0 then
    redis.call('INCRBY', KEYS[(t - 1) * 6 + 4], n)
    redis.call('HINCRBY', KEYS[(t - 1) * 6 + 5], pool, n)
  end
end
return out
