-- One dispatcher round trip: commit finished jobs (PROTOCOL §5.7), then fetch new ones
-- (PROTOCOL §5.4), in one script call (§5.8) — each call has a fixed cost in Redis, and each
-- redis.call inside costs about a microsecond, so the script counts its calls.
--
-- KEYS: n = number of registered job types, t = 1..n in registration order:
--   KEYS[t] paused, KEYS[n+t] lock, KEYS[2n+t] max_concurrency (so that one MGET reads
--   them all), KEYS[3n+t] queue, KEYS[4n+t] this pool's in-progress list,
--   KEYS[5n+t] lock_info; then <p>retry, <p>dead, <p>cwork:cancelled; then, only when
--   L > 0 types are rate-limited (PROTOCOL §20): <p>cwork:rate_limits and each limited
--   type's <p>cwork:rate_limit:<name>, in the order of ARGV[4]; then x extra keys
--   (results, kept successes: PROTOCOL §22; failure histories: §26), only when the
--   commit has any.
-- ARGV[1] pool id
-- ARGV[2] '1' to move one job per step (RPOPLPUSH, servers < 6.2), else '0'; followed
--   by ' x<x> b<b>' when there are x > 0 extra keys or b > 0 batch arguments
-- ARGV[3] the draws: for each draw, the 1-based type indices in the order the priority
--   sampler drew them, ARGV[4]'s first character bytes (big-endian) each, draw after
--   draw ('' = no fetch)
-- ARGV[4] the width of a type index in the draws, '1' or '2'; with rate-limited types
--   followed by ' ', the time in microseconds ('-': Redis' TIME) and the L type indices,
--   space-separated (e.g. '1 - 3 7'); their names are then the last L arguments
-- ARGV[5] the commit's groups, one per type with finished jobs, six bytes each: type
--   index, number of succeeded jobs, number of failed jobs (16-bit big-endian); then
--   the raw bytes (as fetched) of every succeeded job, group by group; then for every
--   failed job, group by group: raw bytes, target ('r' retry, 'd' dead, '-' dropped,
--   'c' dead because it was cancelled), score, the re-encoded job; then the batch
--   section (b arguments, only when a committed job belongs to a tracked batch), the
--   results section (only with extra keys), both below; the L rate-limited names last.
--
-- Commit: a job is released and forwarded only if LREM removed it (otherwise a reaper
-- took it back; a retry of this script after an ambiguous failure is harmless). LREM
-- searches from the tail, where the oldest jobs are: equal bytes are equal elements, so
-- the list left is the one Go's search from the head leaves.
-- Fetch: each draw takes the first type in its order that still has a job available —
-- not paused, under its max concurrency (counting the slots this call releases), not
-- emptied by earlier draws — as the Go fetch does for one draw. Queue lengths are not
-- asked for: the draws are assigned as if every queue had jobs, each type's share is
-- popped in one step, and a queue that comes up short is known from then on, so the
-- draws are assigned again (a type's share only grows when another's shrinks, so what
-- was popped is always taken).
-- Cancellation (PROTOCOL §21): a committed job whose id is in <p>cwork:cancelled goes to
-- dead with err "cancelled" whatever the pool says (it may not have heard of the cancel
-- yet), and its mark is removed. Only a call that commits something, in a namespace that
-- has marks, pays for it: one TYPE per such call, and then a decode per committed job.
-- Locks: per type, lock and lock_info move by (taken − released) — the end state of
-- Go's INCR/DECR and HINCRBY ±1 per job.
-- Returns a flat array: {jobs removed by the commit, then groups of fetched jobs: type
-- index, count, the job bytes… (a type may have more than one group)}, then, when a
-- rate-limited type was held back, a group with type index -2: -2, 1, the microseconds
-- until the earliest such type may start again; and last, when a write failed on a
-- damaged key, a group with type index 0: 0, 2m, then m pairs of type index and error
-- text. When some committed job was not removed (a reaper took it
-- back, or its retry/dead set is damaged), the first element is instead {removed, the
-- positions of those jobs' bytes in the commit's arguments (ARGV[5] is position 0)…}, so
-- that the pool does not count as processed a job that runs again elsewhere; a position
-- is negative when the job's LREM or its forward to retry/dead failed (a damaged key, a
-- refused command) rather than a reaper having taken it. Jobs this
-- call sent to dead because they were cancelled (and the pool did not say 'c') are
-- listed in a group with type index -1: -1, m, their m positions.
--
-- Numbers go to redis.call as strings: Redis 7.0 formats a Lua number argument with
-- "%.17g", which costs more than the command it is passed to.
local pool = ARGV[1]
-- Rate limits: nothing more than this length check when no type is limited.
local limited, nl = nil, 0
if #ARGV[4] > 1 then
  limited = {}
  for w in string.gmatch(ARGV[4], '%S+') do
    limited[#limited + 1] = w
  end
  nl = #limited - 2
  if limited[2] == '-' and redis.replicate_commands then
    -- TIME before writes: servers < 7.0 must replicate this call by its effects.
    redis.replicate_commands()
  end
end
local mode = ARGV[2]
local nx, nbatch = 0, 0
if #mode > 1 then
  nx = tonumber(string.match(mode, ' x(%d+)'))
  nbatch = tonumber(string.match(mode, ' b(%d+)'))
end
local nrate = limited and nl + 1 or 0 -- the rate-limit keys
local n = (#KEYS - 3 - nrate - nx) / 6
local retry, dead, cancelled = KEYS[6 * n + 1], KEYS[6 * n + 2], KEYS[6 * n + 3]
local byte, call, rpcall = string.byte, redis.call, redis.pcall -- locals: no global lookups
local huge = math.huge
-- Per-type arrays, sized once: a table grown element by element is rehashed at every
-- power of two, and keys that arrive out of order land in its hash part.
local zeros = string.rep('\0', n)
local delta = {byte(zeros, 1, n)} -- n zeros
-- An integer as the string Redis reads. The lock_info deltas and most pop counts are
-- small, and string.format costs ~1.8 k instructions here (a memo of its results cost
-- more than it saved): the small ones are constants (docs/POOL.md, issue 23).
local format = string.format
local function str(v)
  if v >= -4 and v <= 4 then
    if v >= 0 then
      return v == 0 and '0' or v == 1 and '1' or v == 2 and '2' or v == 3 and '3' or '4'
    end
    return v == -1 and '-1' or v == -2 and '-2' or v == -3 and '-3' or '-4'
  end
  return format('%d', v)
end

-- Writes that can fail only on a key someone damaged (a wrong type, a counter that is
-- not an integer) go through pcall and are reported in the reply instead of failing
-- the call: a script that fails half way keeps what it wrote, and the caller would
-- then retry commits already done, never releasing their locks. Each failure leaves
-- nothing lost — a job that cannot be forwarded goes back to in-progress, one that
-- cannot be moved to in-progress goes back to its queue.
local failed
local function fail(t, what, err)
  failed = failed or {}
  failed[#failed + 1] = t
  failed[#failed + 1] = what .. ': ' .. err
end

-- A lock counter INCRBY can move: missing (nil), or an integer string. A present
-- counter that is not (someone wrote to it) makes Go's INCR fail; here its type is not
-- fetched, and its releases are reported instead of failing the whole call.
local function valid_counter(s)
  -- (at most 18 characters: far from the 64-bit limit INCRBY would refuse to cross)
  return #s <= 18 and (s == '0' or string.find(s, '^%-?[1-9]%d*$') ~= nil)
end

-- Rate limits (PROTOCOL §20): GCRA without burst. A limit of N per window W schedules a
-- type's starts I = ceil(W / N) µs apart, on Redis' clock: its state is the time the
-- next start is allowed (TAT), and this call may take one job of the type when that
-- time has come. A start less than I/2 late keeps the schedule (the next is due at
-- TAT + I: load does not slow the type down); a later one starts a new schedule
-- (now + I: no burst after idling). The spec is read here, so a changed limit holds
-- from this call.
-- (Defined only when some type is limited: a closure costs every call that creates it.)
local rate_limits, rate_taken
if limited then
  local rate_units = {ms = 1000, s = 1000000, m = 60000000, h = 3600000000}
  local function rate_interval(spec)
    local c, d, u = string.match(spec, '^([1-9]%d*)/([1-9]%d*)(%a+)$')
    local unit = u and rate_units[u]
    if not unit or #c > 10 or #d > 10 then
      return nil
    end
    local count, window = tonumber(c), tonumber(d) * unit
    if count > 1000000000 or window > 604800000000 then -- as cwork_rate_limit_parse
      return nil
    end
    return math.ceil(window / count)
  end

  -- Caps each limited type to one job if its time has come, none otherwise. Returns, per
  -- type that may start, {its next allowed time, state key, milliseconds to keep it},
  -- and the µs until the earliest held-back type may start (nil: none held back).
  rate_limits = function(cap)
    local first = 6 * n + 4
    local specs = call('HMGET', KEYS[first], unpack(ARGV, #ARGV - nl + 1, #ARGV))
    local now = tonumber(limited[2])
    if not now then
      local tm = call('TIME')
      now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
    end
    local allow, wait = {}, nil
    for j = 1, nl do
      local t, spec = tonumber(limited[j + 2]), specs[j]
      if spec and cap[t] > 0 then
        local interval = rate_interval(spec)
        local s = interval and rpcall('GET', KEYS[first + j])
        local tat = s == false and 0 or type(s) == 'string' and tonumber(s)
        if not interval then
          cap[t] = 0
          fail(t, 'rate_limit', 'not N/DURATION: ' .. spec .. ': type not fetched')
        elseif not tat then
          cap[t] = 0
          fail(t, 'rate_limit', (s.err or 'not a number') .. ': type not fetched')
        elseif tat > now then
          cap[t] = 0
          if not wait or tat - now < wait then
            wait = tat - now
          end
        else
          cap[t] = 1
          local next = now - tat < interval / 2 and tat + interval or now + interval
          allow[t] = {next, KEYS[first + j], math.ceil((next - now) / 1000)}
        end
      end
    end
    return allow, wait
  end

  -- Moves the allowed time of each limited type that gave a job: it expires when passed
  -- (a type idle for one interval has no state left).
  rate_taken = function(allow, taken)
    for t, a in pairs(allow) do
      if taken[t] > 0 then
        local px = string.format('%d', a[3])
        local r = rpcall('SET', a[2], string.format('%d', a[1]), 'PX', px)
        if type(r) ~= 'table' or not r.ok then
          fail(t, 'rate_limit', r.err or 'not set')
        end
      end
    end
  end
end

-- Commit.
local groups = ARGV[5]
local marks = #groups > 0 and call('TYPE', cancelled).ok == 'hash'

local by_cancel -- positions of the jobs commit_cancelled sent to dead, nil while none
local decoded, commit_cancelled, note_cancelled -- only with marks (as rate_limits)
if marks then
  -- The decoded job and its id, or nil for bytes cjson cannot read or without a string id.
  decoded = function(raw)
    local ok, job = pcall(cjson.decode, raw)
    if ok and type(job) == 'table' and type(job.id) == 'string' then
      return job, job.id
    end
  end

  -- A cancelled job (its id marked) goes to dead at the time of the cancel, its failure
  -- recorded (cjson's form of the job, as after a trip through Lua, PROTOCOL §3.4), and
  -- the mark goes. Returns true when it did; false for a job not marked — or when dead
  -- cannot take it, when the job takes its ordinary way.
  commit_cancelled = function(t, raw)
    local job, id = decoded(raw)
    local at = id and rpcall('HGET', cancelled, id)
    if type(at) ~= 'string' then
      return false
    end
    job.fails = (tonumber(job.fails) or 0) + 1
    job.err = 'cancelled'
    job.failed_at = tonumber(at)
    local z = rpcall('ZADD', dead, at, cjson.encode(job))
    if type(z) ~= 'number' then
      fail(t, 'dead', z.err)
      return false
    end
    call('HDEL', cancelled, id)
    return true
  end
  note_cancelled = function(pos)
    by_cancel = by_cancel or {}
    by_cancel[#by_cancel + 1] = pos
  end
end
local a = 6
local removed = 0
local lost -- positions of committed jobs not removed, nil while there are none
local refused -- the positions in lost whose write failed (rather than a reaper's take-back)
for g = 1, #groups, 6 do
  local t1, t2, s1, s2 = byte(groups, g, g + 3)
  local t = t1 * 256 + t2
  local inprogress, c = KEYS[4 * n + t], 0
  for _ = 1, s1 * 256 + s2 do
    local r = rpcall('LREM', inprogress, '-1', ARGV[a])
    if r == 1 then
      c = c + 1
      if marks and commit_cancelled(t, ARGV[a]) then
        note_cancelled(a - 5)
      end
    else
      if r ~= 0 then
        fail(t, 'in-progress ' .. inprogress, r.err)
        refused = refused or {}
        refused[a - 5] = true
      end
      lost = lost or {}
      lost[#lost + 1] = a - 5
    end
    a = a + 1
  end
  delta[t] = delta[t] - c
  removed = removed + c
end
for g = 1, #groups, 6 do
  local t1, t2, _, _, f1, f2 = byte(groups, g, g + 5)
  local t = t1 * 256 + t2
  local inprogress, c = KEYS[4 * n + t], 0
  for _ = 1, f1 * 256 + f2 do
    local r = rpcall('LREM', inprogress, '-1', ARGV[a])
    if r == 1 then
      c = c + 1
      local target = ARGV[a + 1]
      if marks and target ~= 'c' and commit_cancelled(t, ARGV[a]) then
        target = '-' -- in dead already
        note_cancelled(a - 5)
      end
      if target ~= '-' then
        local zset = target == 'r' and retry or dead
        local z = rpcall('ZADD', zset, ARGV[a + 2], ARGV[a + 3])
        if marks and target == 'c' and type(z) == 'number' then
          local _, id = decoded(ARGV[a])
          if id then
            call('HDEL', cancelled, id)
          end
        end
        if type(z) ~= 'number' then
          -- Not forwarded: back where it was, still holding its lock.
          fail(t, target == 'r' and 'retry ' .. retry or 'dead ' .. dead, z.err)
          call('LPUSH', inprogress, ARGV[a])
          c = c - 1
          refused = refused or {}
          refused[a - 5] = true
          lost = lost or {}
          lost[#lost + 1] = a - 5
        end
      end
    else
      if r ~= 0 then
        fail(t, 'in-progress ' .. inprogress, r.err)
        refused = refused or {}
        refused[a - 5] = true
      end
      lost = lost or {}
      lost[#lost + 1] = a - 5
    end
    a = a + 4
  end
  delta[t] = delta[t] - c
  removed = removed + c
end

-- Tracked batches (PROTOCOL §23), only when some committed job belongs to one: after the
-- commit's arguments come <p>, now, the TTL of a finished batch, and the entries, seven
-- bytes each — the position of the job's bytes (numbered as in `lost`, 32-bit
-- big-endian), its type index (16-bit), what the commit did ('s' succeeded, 'r' sent to
-- retry, 'd' dead or dropped) — then per entry its batch id and job id. A job counts
-- only when its LREM removed it (not in `lost`), and once: <p>cwork:batch:<id>:jobs
-- remembers each job that was counted retrying ('r') or final ('s', 'd'). A job this call
-- sent to dead as cancelled counts as dead, whatever its run did.
if nbatch > 0 then
--[[include batch_lib.lua]]
  local prefix, now, ttl, entries = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local skip, as_dead = {}, {}
  for i = 1, lost and #lost or 0 do
    skip[lost[i]] = true
  end
  for i = 1, by_cancel and #by_cancel or 0 do
    as_dead[by_cancel[i]] = true
  end
  local at = a + 4
  for e = 1, #entries, 7 do
    local p1, p2, p3, p4, t1, t2, kind = byte(entries, e, e + 6)
    local pos = ((p1 * 256 + p2) * 256 + p3) * 256 + p4
    if as_dead[pos] then
      kind = 100 -- 'd'
    end
    if not skip[pos] then
      local err = batch_count(prefix .. 'cwork:batch:' .. ARGV[at], ARGV[at + 1], kind, prefix,
                              now, ttl)
      if err then
        fail(t1 * 256 + t2, 'batch', err)
      end
    end
    at = at + 2
  end
  a = a + nbatch
end

-- Results and kept successes (PROTOCOL §22), only when the commit has them: ARGV[a] is
-- now (Unix ms), ARGV[a+1] the results channel, then records, each for a job whose
-- bytes are at position pos of the commit (as in `lost`) and written only if its LREM
-- above removed it (a job a reaper took back publishes nothing):
--   'R', pos, key, ttl ms, result, id  SET the result key, PUBLISH the id
--   'S', pos, t, key, member           ZADD the type's kept successes at now
--   'T', t, key, '(oldest', '-keep-1' trim them by age, then by count
--   'F', pos, t, key, ttl s, keep-1, entry, job t
--                                      a failed run's record (PROTOCOL §26): LPUSH onto
--                                      <p>cwork:failures:<id> the entry completed with
--                                      ,"first_t":<n>} (the newest kept entry's, else the
--                                      job's t), keep the newest keep, set the TTL
--   'D', pos, key                      DEL the failures of a job that now succeeded
-- (key: the index of the extra key, 1-based after the rate-limit keys). A job this call
-- sent to dead as cancelled publishes nothing either.
if nx > 0 then
  local gone = {}
  for i = 1, lost and #lost or 0 do
    gone[str(lost[i])] = true
  end
  for i = 1, by_cancel and #by_cancel or 0 do
    gone[str(by_cancel[i])] = true
  end
  local base = 6 * n + 3 + nrate
  local now, channel = ARGV[a], ARGV[a + 1]
  local last = #ARGV - nl -- the rate-limited names follow the section
  a = a + 2
  while a <= last do
    local kind = ARGV[a]
    if kind == 'R' then
      if not gone[ARGV[a + 1]] then
        call('SET', KEYS[base + tonumber(ARGV[a + 2])], ARGV[a + 4], 'PX', ARGV[a + 3])
        -- (a PUBLISH an ACL refuses leaves waiting readers to their fallback GET)
        rpcall('PUBLISH', channel, ARGV[a + 5])
      end
      a = a + 6
    elseif kind == 'S' then
      if not gone[ARGV[a + 1]] then
        local z = rpcall('ZADD', KEYS[base + tonumber(ARGV[a + 3])], now, ARGV[a + 4])
        if type(z) ~= 'number' then
          fail(tonumber(ARGV[a + 2]), 'succeeded', z.err)
        end
      end
      a = a + 5
    elseif kind == 'F' then
      if not gone[ARGV[a + 1]] then
        local key = KEYS[base + tonumber(ARGV[a + 3])]
        local first = ARGV[a + 7]
        local newest = rpcall('LINDEX', key, '0')
        if type(newest) == 'string' then
          first = string.match(newest, ',"first_t":(%-?%d+)}$') or first
        end
        local r = rpcall('LPUSH', key, ARGV[a + 6] .. ',"first_t":' .. first .. '}')
        if type(r) == 'number' then
          call('LTRIM', key, '0', ARGV[a + 5])
          call('EXPIRE', key, ARGV[a + 4])
        else
          fail(tonumber(ARGV[a + 2]), 'failures ' .. key, r.err)
        end
      end
      a = a + 8
    elseif kind == 'D' then
      if not gone[ARGV[a + 1]] then
        call('DEL', KEYS[base + tonumber(ARGV[a + 2])])
      end
      a = a + 3
    else
      local key = KEYS[base + tonumber(ARGV[a + 2])]
      local r = rpcall('ZREMRANGEBYSCORE', key, '-inf', ARGV[a + 3])
      if type(r) == 'number' then
        r = rpcall('ZREMRANGEBYRANK', key, '0', ARGV[a + 4])
      end
      if type(r) ~= 'number' then
        fail(tonumber(ARGV[a + 1]), 'succeeded', r.err)
      end
      a = a + 5
    end
  end
end

-- Fetch.
local out = {removed}
if lost then
  if refused then -- (reported as negative positions: the pool names the true cause)
    for i = 1, #lost do
      lost[i] = refused[lost[i]] and -lost[i] or lost[i]
    end
  end
  table.insert(lost, 1, removed)
  out[1] = lost
end
local state, got, rate, rate_wait
local draws, width = ARGV[3], byte(ARGV[4]) == 50 and 2 or 1 -- '2'
if #draws > 0 then
  local single = byte(mode, 1) == 49 -- '1'
  -- One MGET reads every paused key, lock counter and max_concurrency: a paused key
  -- pauses with any string value, as Go's GET of it does (MGET reads a key of another
  -- type as missing, where Go's GET fails the whole fetch: such a paused key does not
  -- pause, such a max_concurrency sets no limit).
  state = call('MGET', unpack(KEYS, 1, 3 * n))
  -- cap[t]: how many jobs type t may give this call — 0 when paused, the room under its
  -- max concurrency, then the queue's length once a pop came up short.
  local cap = {byte(zeros, 1, n)}
  for t = 1, n do
    local c = huge
    local mc = state[2 * n + t]
    if state[t] then
      c = 0
    elseif mc and mc ~= '0' then
      local limit = tonumber(mc)
      if limit and limit ~= 0 then
        -- Go allows a fetch while there is no counter or lock < limit: room is
        -- ceil(limit − lock), where the lock already counts the slots released above,
        -- and at least one while the counter does not exist (even for a negative limit).
        local counter = tonumber(state[n + t])
        c = math.ceil(limit - (counter or 0) - delta[t])
        -- (a release in this call means Go's DECR created the counter: no exception)
        if counter == nil and delta[t] == 0 and c < 1 then
          c = 1
        end
        if not state[n + t] and call('TYPE', KEYS[n + t]).ok ~= 'none' then
          c = 0 -- a counter of another type cannot count this type's jobs
          fail(t, 'lock', 'WRONGTYPE the lock counter is not a string')
        end
        if c < 0 then
          c = 0
        end
      end
    end
    cap[t] = c
  end
  if limited then
    rate, rate_wait = rate_limits(cap)
  end
  local step = n * width
  got = {byte(zeros, 1, n)}
  repeat
    local take = {byte(zeros, 1, n)}
    for d = 1, #draws, step do
      for pos = d, d + step - 1, width do
        local t = byte(draws, pos)
        if width == 2 then
          t = t * 256 + byte(draws, pos + 1)
        end
        local c = take[t]
        if c < cap[t] then
          take[t] = c + 1
          break
        end
      end
    end
    -- Pop each type's share, appending a group to the reply as the jobs come.
    local short = false
    for t = 1, n do
      local want, have = take[t], got[t]
      if want > have then
        if have == 0 and state[n + t] and not valid_counter(state[n + t]) then
          cap[t] = 0 -- its INCR would fail: not fetched (the draw falls through)
          short = true
          fail(t, 'lock', 'the lock counter is not an integer: type not fetched')
        else
          local queue, inprogress = KEYS[3 * n + t], KEYS[4 * n + t]
          local head = #out
          out[head + 1] = t
          out[head + 2] = 0
          local m = 0
          if single or want - have <= 2 then
            -- One call per job: the old servers' path, and the cheaper one for few jobs.
            for _ = have + 1, want do
              local job = rpcall('RPOPLPUSH', queue, inprogress)
              if type(job) ~= 'string' then
                if job then
                  fail(t, 'fetch', job.err) -- nothing moved; the type gives no more
                end
                break
              end
              m = m + 1
              out[head + 2 + m] = job
            end
          else
            local popped = rpcall('RPOP', queue, str(want - have))
            if popped and popped.err then
              fail(t, 'fetch', popped.err)
            elseif popped then
              m = #popped
              for i = 1, m, 1000 do
                local r = rpcall('LPUSH', inprogress, unpack(popped, i, math.min(i + 999, m)))
                if type(r) ~= 'number' then
                  -- In-progress is damaged: the jobs not pushed go back to the queue's
                  -- tail, oldest last, as they were.
                  fail(t, 'in-progress ' .. inprogress, r.err)
                  for j = m, i, -1000 do
                    local back = {}
                    for x = j, math.max(j - 999, i), -1 do
                      back[#back + 1] = popped[x]
                    end
                    call('RPUSH', queue, unpack(back))
                  end
                  m = i - 1
                  break
                end
              end
              for i = 1, m do
                out[head + 2 + i] = popped[i]
              end
            end
          end
          if m > 0 then
            out[head + 2] = m
          else
            out[head + 2] = nil
            out[head + 1] = nil
          end
          got[t] = have + m
          delta[t] = delta[t] + m
          if have + m < want then
            cap[t] = have + m
            short = true
          end
        end
      end
    end
  until not short
  if rate then
    rate_taken(rate, got)
  end
end

-- Locks. Valid counters that were read go back with one MSET; the others (not read, or
-- not an integer) get an INCRBY, and lock_info a HINCRBY, each through pcall.
local mset, m = {byte(zeros, 1, n)}, 0 -- sized for half the types
for t = 1, n do
  local c = delta[t]
  if c ~= 0 then
    local counter = state and state[n + t]
    -- (a type that was fetched had its counter checked already)
    if counter and #counter <= 15 and (got and got[t] > 0 or valid_counter(counter)) then
      mset[m + 1] = KEYS[n + t]
      mset[m + 2] = str(tonumber(counter) + c)
      m = m + 2
    else
      local r = rpcall('INCRBY', KEYS[n + t], str(c))
      if type(r) ~= 'number' then
        fail(t, 'lock', r.err)
      end
    end
    local r = rpcall('HINCRBY', KEYS[5 * n + t], pool, str(c))
    if type(r) ~= 'number' then
      fail(t, 'lock_info', r.err)
    end
  end
end
if m > 0 then
  call('MSET', unpack(mset, 1, m))
end
if rate_wait then
  -- The earliest a rate-limited type that was held back may start again (µs from now):
  -- the dispatcher looks again then rather than at the end of its idle backoff.
  out[#out + 1] = -2
  out[#out + 1] = 1
  out[#out + 1] = rate_wait
end
if by_cancel then
  out[#out + 1] = -1
  out[#out + 1] = #by_cancel
  for i = 1, #by_cancel do
    out[#out + 1] = by_cancel[i]
  end
end
if failed then
  out[#out + 1] = 0
  out[#out + 1] = #failed
  for i = 1, #failed do
    out[#out + 1] = failed[i]
  end
end
return out
