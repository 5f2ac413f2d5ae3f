-- One dispatcher round trip: commit finished jobs (PROTOCOL §5.7), then fetch new ones
-- (PROTOCOL §5.4), in one script call (§5.8) — each call has a fixed cost in Redis, and each
-- redis.call inside costs about a microsecond, so the script counts its calls.
--
-- KEYS: n = number of registered job types, t = 1..n in registration order:
--   KEYS[t] paused, KEYS[n+t] lock, KEYS[2n+t] max_concurrency (so that one MGET reads
--   them all), KEYS[3n+t] queue, KEYS[4n+t] this pool's in-progress list,
--   KEYS[5n+t] lock_info; then <p>retry, <p>dead; then x extra keys (results, kept
--   successes: PROTOCOL §22), only when the commit has any.
-- ARGV[1] pool id
-- ARGV[2] '1' to move one job per step (RPOPLPUSH, servers < 6.2), else '0'; followed
--   by ' x' when there are x > 0 extra keys
-- ARGV[3] the draws: for each draw, the 1-based type indices in the order the priority
--   sampler drew them, ARGV[4] bytes (big-endian) each, draw after draw ('' = no fetch)
-- ARGV[5] the commit's groups, one per type with finished jobs, six bytes each: type
--   index, number of succeeded jobs, number of failed jobs (16-bit big-endian); then
--   the raw bytes (as fetched) of every succeeded job, group by group; then for every
--   failed job, group by group: raw bytes, target ('r' retry, 'd' dead, '-' dropped),
--   score, the re-encoded job; then, only with extra keys, the results section (below).
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
-- Locks: per type, lock and lock_info move by (taken − released) — the end state of
-- Go's INCR/DECR and HINCRBY ±1 per job.
-- Returns a flat array: {jobs removed by the commit, then groups of fetched jobs: type
-- index, count, the job bytes… (a type may have more than one group)}, and last, when
-- a write failed on a damaged key, a group with type index 0: 0, 2m, then m pairs of
-- type index and error text. When some committed job was not removed (a reaper took it
-- back, or its retry/dead set is damaged), the first element is instead {removed, the
-- positions of those jobs' bytes in the commit's arguments (ARGV[5] is position 0)…}, so
-- that the pool does not count as processed a job that runs again elsewhere.
--
-- Numbers go to redis.call as strings: Redis 7.0 formats a Lua number argument with
-- "%.17g", which costs more than the command it is passed to.
local pool = ARGV[1]
local mode = ARGV[2]
local nx = 0
if #mode > 1 then
  nx = tonumber(string.sub(mode, 3))
end
local n = (#KEYS - 2 - nx) / 6
local retry, dead = KEYS[6 * n + 1], KEYS[6 * n + 2]
local byte, call, rpcall = string.byte, redis.call, redis.pcall -- locals: no global lookups
local huge = math.huge
-- Per-type arrays, sized once: a table grown element by element is rehashed at every
-- power of two, and keys that arrive out of order land in its hash part.
local zeros = string.rep('\0', n)
local delta = {byte(zeros, 1, n)} -- n zeros
local digits = {}
local function str(v)
  local s = digits[v]
  if not s then
    s = string.format('%d', v)
    digits[v] = s
  end
  return s
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

-- Commit.
local groups = ARGV[5]
local a = 6
local removed = 0
local lost -- positions of committed jobs not removed, nil while there are none
for g = 1, #groups, 6 do
  local t1, t2, s1, s2 = byte(groups, g, g + 3)
  local t = t1 * 256 + t2
  local inprogress, c = KEYS[4 * n + t], 0
  for _ = 1, s1 * 256 + s2 do
    local r = rpcall('LREM', inprogress, '-1', ARGV[a])
    if r == 1 then
      c = c + 1
    else
      if r ~= 0 then
        fail(t, 'in-progress', r.err)
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
      if target ~= '-' then
        local zset = target == 'r' and retry or dead
        local z = rpcall('ZADD', zset, ARGV[a + 2], ARGV[a + 3])
        if type(z) ~= 'number' then
          -- Not forwarded: back where it was, still holding its lock.
          fail(t, target == 'r' and 'retry' or 'dead', z.err)
          call('LPUSH', inprogress, ARGV[a])
          c = c - 1
          lost = lost or {}
          lost[#lost + 1] = a - 5
        end
      end
    else
      if r ~= 0 then
        fail(t, 'in-progress', r.err)
      end
      lost = lost or {}
      lost[#lost + 1] = a - 5
    end
    a = a + 4
  end
  delta[t] = delta[t] - c
  removed = removed + c
end

-- Results and kept successes (PROTOCOL §22), only when the commit has them: ARGV[a] is
-- now (Unix ms), ARGV[a+1] the results channel, then records, each for a job whose
-- bytes are at position pos of the commit (as in `lost`) and written only if its LREM
-- above removed it (a job a reaper took back publishes nothing):
--   'R', pos, key, ttl ms, result, id  SET the result key, PUBLISH the id
--   'S', pos, t, key, member           ZADD the type's kept successes at now
--   'T', t, key, '(oldest', '-keep-1' trim them by age, then by count
-- (key: the index of the extra key, 1-based after <p>dead).
if nx > 0 then
  local gone = {}
  for i = 1, lost and #lost or 0 do
    gone[str(lost[i])] = true
  end
  local base = 6 * n + 2
  local now, channel = ARGV[a], ARGV[a + 1]
  a = a + 2
  while a <= #ARGV do
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
  table.insert(lost, 1, removed)
  out[1] = lost
end
local state, got
local draws, width = ARGV[3], ARGV[4] == '2' and 2 or 1
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
                  fail(t, 'in-progress', r.err)
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
if failed then
  out[#out + 1] = 0
  out[#out + 1] = #failed
  for i = 1, #failed do
    out[#out + 1] = failed[i]
  end
end
return out
