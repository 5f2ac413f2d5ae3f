-- Enqueue a batch (cwork_enqueue_batch): every job and every known_jobs registration
-- of the batch is written, or nothing is. One script rather than MULTI/EXEC: a refused
-- MULTI (an ACL without it) would leave the commands behind it to run one by one, and
-- a command that fails inside EXEC does not undo the others. Every key is checked
-- before the first write; Redis refuses a script's first write when out of memory and
-- never a later one, so the writes that follow the checks all happen.
-- KEYS[1] <p>known_jobs, KEYS[2] <p>scheduled, KEYS[3 .. 2+q] the queues of the batch's
--   immediate jobs, KEYS[3+q ..] two per unique entry, in entry order: its guard, and
--   the guard in the other escape spelling (or the guard again; enqueue_unique.lua's
--   KEYS[2] and KEYS[4]).
-- ARGV, read in this order:
--   the wake-up channel, q;
--   g, then per group of immediate plain jobs: its queue (1..q), count c, c jobs (pushed
--     in this order, each to the left end, as c LPUSHes would);
--   d, then d pairs of run-at and job (delayed plain jobs, into <p>scheduled);
--   u, then per unique entry: its queue (1..q, or 0 when delayed), run-at ('' when
--     immediate), job, the guard's value, '1' to re-arm the guard of a duplicate — each
--     enqueued exactly as enqueue_unique.lua does it: that script is this one's
--     enqueue_unique function, put in at build time (cmake/EmbedScripts.cmake);
--   s, then s names for SADD <p>known_jobs;
--   p, then p names to publish on the channel (the names of immediate jobs);
--   optionally, for the members of a tracked batch (§23): its key <p>cwork:batch:<id>
--     and the number of jobs, added to its total.
-- Returns a string with one byte per unique entry: 'w' written, 'd' duplicate.
local q = tonumber(ARGV[2])
local function check(key, want)
  local have = redis.call('TYPE', key).ok
  if have ~= want and have ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. have .. ', not a ' .. want ..
      ': nothing of the batch written')
  end
end
local bad = check(KEYS[1], 'set') or check(KEYS[2], 'zset')
for i = 3, 2 + q do
  bad = bad or check(KEYS[i], 'list')
end
if bad then
  return bad
end

-- acl_refusal: before enqueue_unique.lua, whose own include of it then stays a comment.
--[[include acl_lib.lua]]

-- enqueue_unique.lua, verbatim, as a function of its KEYS and ARGV: one unique enqueue.
local function enqueue_unique(KEYS, ARGV)
--[[include enqueue_unique.lua]]
end

local call, unpack_ = redis.call, unpack
local a = 3
local function push(cmd, key, from, to)
  -- (chunks: Lua's stack takes a few thousand values at most)
  for i = from, to, 1000 do
    call(cmd, key, unpack_(ARGV, i, math.min(i + 999, to)))
  end
end
-- Registrations first: a first write refused for memory leaves nothing behind.
local g = tonumber(ARGV[a])
local groups_at = a + 1
a = groups_at
for _ = 1, g do
  a = a + 2 + tonumber(ARGV[a + 1])
end
local d = tonumber(ARGV[a])
local delayed_at = a + 1
a = delayed_at + 2 * d
local u = tonumber(ARGV[a])
local unique_at = a + 1
a = unique_at + 5 * u
local s = tonumber(ARGV[a])
local sadd_at = a + 1
a = a + 1 + s
local p, publish_at = tonumber(ARGV[a]), a + 1
local tracked = ARGV[publish_at + p]
-- Every write of the batch asked of the ACL before the first one (acl_lib.lua).
local calls = {}
if tracked then
  calls[1] = {'HINCRBY', tracked, 'total', '1'}
end
if s > 0 then
  calls[#calls + 1] = {'SADD', KEYS[1], 'x'}
end
for i = 3, 2 + q do
  calls[#calls + 1] = {'LPUSH', KEYS[i], 'x'}
end
local zadd = d > 0
for k = 1, u do
  local guard = 2 + q + 2 * k - 1
  zadd = zadd or ARGV[unique_at + 5 * (k - 1)] == '0'
  calls[#calls + 1] = {'SET', KEYS[guard], 'x'}
  if KEYS[guard + 1] ~= KEYS[guard] then
    calls[#calls + 1] = {'EXISTS', KEYS[guard + 1]}
    calls[#calls + 1] = {'SET', KEYS[guard + 1], 'x'}
  end
end
if zadd then
  calls[#calls + 1] = {'ZADD', KEYS[2], '0', 'x'}
end
local refused = acl_refusal(calls)
if refused then
  return refused
end
-- A tracked batch's members (PROTOCOL §23): its total grows with them, in this call, and
-- only while the batch is open.
if tracked then
  local t = redis.call('TYPE', tracked).ok
  if t ~= 'hash' then
    return redis.error_reply('NOBATCH ' .. tracked ..
      (t == 'none' and ' does not exist (never opened, or expired)' or ' is a ' .. t) ..
      ': nothing of the batch written')
  end
  if redis.call('HGET', tracked, 'sealed') == '1' then
    return redis.error_reply('SEALED ' .. tracked .. ' is sealed: nothing of the batch written')
  end
  redis.call('HINCRBY', tracked, 'total', ARGV[publish_at + p + 1])
end
if s > 0 then
  push('SADD', KEYS[1], sadd_at, sadd_at + s - 1)
end

a = groups_at
for _ = 1, g do
  local c = tonumber(ARGV[a + 1])
  push('LPUSH', KEYS[2 + tonumber(ARGV[a])], a + 2, a + 1 + c)
  a = a + 2 + c
end
if d > 0 then
  push('ZADD', KEYS[2], delayed_at, delayed_at + 2 * d - 1)
end
local statuses = {}
for k = 1, u do
  local at = unique_at + 5 * (k - 1)
  local queue = tonumber(ARGV[at])
  local guard = 2 + q + 2 * k - 1
  -- (known_jobs registered above: ARGV[3] ''; the wake-ups are published below)
  local r = enqueue_unique({queue == 0 and KEYS[2] or KEYS[2 + queue], KEYS[guard], KEYS[1],
                            KEYS[guard + 1]},
                           {ARGV[at + 2], ARGV[at + 1], '', ARGV[at + 3], ARGV[at + 4]})
  statuses[k] = r == 'ok' and 'w' or 'd'
end
-- pcall: a refused wake-up (an ACL without PUBLISH) must not fail written jobs.
for k = publish_at, publish_at + p - 1 do
  redis.pcall('PUBLISH', ARGV[1], ARGV[k])
end
return table.concat(statuses)
