-- Deletes jobs waiting in a queue by id (`cwork queue delete`, the web UI's queue page).
-- Each wanted job takes out one entry whose decoded id it is, by that entry's exact
-- bytes, in this one atomic step: a job a pool took meanwhile is reported as not found,
-- and nothing else in the queue changes. Only one part of the list is searched, read
-- 1000 entries at a time from its back (left) end to its front and no further than
-- needed, so that the work stays bounded on queues of millions (the caller picks the
-- part: near where a job was listed, or one page of a walk).
-- KEYS[1] the queue <p>jobs:<name>
-- ARGV[1], ARGV[2] the part searched, as LRANGE's start and stop (negative indices
--   count from the right end, where the next job to run is -1).
-- ARGV[3], ARGV[4], ... a place and an id per wanted job: the place it was listed at (0
--   = the next to run, -1 when unknown). When several entries carry the id, the one
--   nearest that place goes. It goes by LREM from the end of the list it is nearer to,
--   so that LREM stops at it (of byte-equal copies, LREM takes the one nearest that
--   end: it removes bytes, not positions).
-- Returns {entries looked at, the queue's length before, then per wanted job 1 (deleted)
-- or 0 (not found), then the bytes of every deleted unique job}: the caller deletes
-- their guards (a script cannot build them, as for client_queue_clear.lua). A key of
-- another type is left as it is: {-1, its type}.
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'none' and kind ~= 'list' then
  return {-1, kind}
end
local n = (#ARGV - 2) / 2
local want, asked, plain = {}, {}, true
local lowest -- the lowest listed place among the wanted jobs
for i = 1, n do
  local id, place = ARGV[2 + 2 * i], tonumber(ARGV[1 + 2 * i])
  want[id] = {}
  asked[id] = (asked[id] or 0) + 1
  if place >= 0 and (not lowest or place < lowest) then lowest = place end
  -- An id any JSON encoder writes as it is ('/' aside: cjson writes "\/"), so that a
  -- text search finds the entries worth decoding; other ids get every entry decoded.
  if string.find(id, '[%c"\\<>&\128-\255]') then
    plain = false
  end
end
local len = redis.call('LLEN', KEYS[1])
local start, stop = tonumber(ARGV[1]), tonumber(ARGV[2])
if start < 0 then start = math.max(len + start, 0) end
if stop < 0 then stop = len + stop end
stop = math.min(stop, len - 1)

-- The entry at index at: kept among the matches of its id when it decodes to a wanted id.
local function consider(raw, at)
  local ok, job = pcall(cjson.decode, raw)
  if ok and type(job) == 'table' and type(job.id) == 'string' and want[job.id] then
    local m = want[job.id]
    m[#m + 1] = {at = at, place = len - 1 - at, raw = raw, unique = job.unique == true}
  end
end

local looked = 0
local from = start
while from <= stop do
  local part = redis.call('LRANGE', KEYS[1], from, math.min(from + 999, stop))
  for j, raw in ipairs(part) do
    if plain then
      for cand in string.gmatch(raw, '"id"%s*:%s*"([^"]*)"') do
        if want[(string.gsub(cand, '\\/', '/'))] then
          consider(raw, from + j - 1)
          break
        end
      end
    else
      consider(raw, from + j - 1)
    end
  end
  looked = looked + #part
  if #part == 0 then break end
  from = from + #part
  -- The part goes from high places to low ones (the back of the queue to its front):
  -- done when every wanted job has an entry and the search has passed 1000 places
  -- below the lowest listed place (a nearer entry with the same id would be there).
  local done = not lowest or len - from < lowest - 1000
  for id, m in pairs(want) do
    done = done and #m >= asked[id]
  end
  if done then break end
end

local reply = {looked, len}
local guards = {}
for i = 1, n do
  local place, best = tonumber(ARGV[1 + 2 * i]), nil
  for _, m in ipairs(want[ARGV[2 + 2 * i]]) do
    if not m.used and (not best or (place >= 0 and
        math.abs(m.place - place) < math.abs(best.place - place))) then
      best = m
    end
  end
  reply[#reply + 1] = 0
  if best then
    best.used = true
    if redis.call('LREM', KEYS[1], best.at < len / 2 and 1 or -1, best.raw) == 1 then
      reply[#reply] = 1
      if best.unique then guards[#guards + 1] = best.raw end
    end
  end
end
for _, raw in ipairs(guards) do
  reply[#reply + 1] = raw
end
return reply
