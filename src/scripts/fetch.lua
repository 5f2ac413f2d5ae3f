-- Fetch up to #draws jobs for one pool (SPEC §4.6, batched as DESIGN.md "Threads").
-- KEYS: six per job type, in registration order: queue, this pool's in-progress list,
--   paused, lock, lock_info, max_concurrency.
-- ARGV[1] pool id; ARGV[2] '1' to move one job per step (RPOPLPUSH, servers < 6.2);
-- ARGV[3] the draws: for each draw, the 1-based job type indices in the order the
--   priority sampler drew them, each as ARGV[4] bytes (big-endian), draw after draw —
--   one compact string, cheap to walk with string.byte.
-- Each draw takes the first type in its order that still has a job available — not
-- paused, under its max concurrency, not emptied by earlier draws of this batch — which
-- is what the Go fetch does for one draw. State is read once per batch (queue lengths
-- only for the types a draw reaches); each type's share then moves in one step with the same end state as one RPOPLPUSH, INCR and HINCRBY per
-- job (in-progress ends up in the same order).
-- Returns a flat array: type index, array of job bytes, type index, array, ...
local pool = ARGV[1]
local single = ARGV[2] == '1'
local avail, take = {}, {}

-- Pause and limit state of every type, read in two calls: one EXISTS over all paused
-- keys (per key only when something is paused) and one MGET of all locks and limits.
local ntypes = #KEYS / 6
local paused = {}
local pkeys, mkeys = {}, {}
for t = 1, ntypes do
  pkeys[t] = KEYS[(t - 1) * 6 + 3]
  mkeys[2 * t - 1] = KEYS[(t - 1) * 6 + 4]
  mkeys[2 * t] = KEYS[(t - 1) * 6 + 6]
end
if redis.call('EXISTS', unpack(pkeys)) > 0 then
  for t = 1, ntypes do
    paused[t] = redis.call('EXISTS', pkeys[t]) == 1
  end
end
local locks = redis.call('MGET', unpack(mkeys))

local function available(t)
  if avail[t] == nil then
    local n = 0
    if not paused[t] then
      n = redis.call('LLEN', KEYS[(t - 1) * 6 + 1])
    end
    if n > 0 then
      local limit = tonumber(locks[2 * t])
      if limit and limit > 0 then
        local lock = tonumber(locks[2 * t - 1]) or 0
        -- Go allows a fetch while lock < limit, so the room is ceil(limit - lock).
        local room = math.ceil(limit - lock)
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

local draws, width = ARGV[3], tonumber(ARGV[4])
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

local out = {}
for t, n in pairs(take) do
  if n > 0 then
    local base = (t - 1) * 6
    local jobs
    if single then
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
    redis.call('INCRBY', KEYS[base + 4], n)
    redis.call('HINCRBY', KEYS[base + 5], pool, n)
    out[#out + 1] = t
    out[#out + 1] = jobs
  end
end
return out
