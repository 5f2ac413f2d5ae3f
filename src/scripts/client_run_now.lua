-- Runs jobs of the retry or scheduled set now (`cwork retry run`, `cwork scheduled
-- run`): moves them into their queues whatever their time, as the requeuer moves a due
-- job (PROTOCOL §8): t = now, cjson's encoding, LPUSH onto the queue. Unlike the requeuer
-- it drops `d`, so that the requeuer's stale-tail check cannot discard a periodic
-- instance someone asked to run (as for a retried dead job, PROTOCOL §16.13); fails,
-- err and failed_at of a retry job stay, as the requeuer keeps them.
-- KEYS[1] the set, KEYS[2..] the queue <p>jobs:<name> of every name in known_jobs
-- ARGV[1] <p>jobs:   ARGV[2] now
-- ARGV[3] 'one': ARGV[4] the score, ARGV[5] the job id — the members with exactly that
--         score and id;
--         'all': ARGV[4] batch size, ARGV[5] first rank, ARGV[6] (optional) only jobs of
--         this name — at most a batch of members from that rank (the caller adds the
--         members that stayed to its next first rank and stops when fewer than a batch
--         were looked at).
-- Nothing is lost and no damaged key fails the call: a job whose name is not in
-- known_jobs (no pool would take it), a member cjson cannot decode or without a string
-- name, and a job whose queue key holds another type stay in the set as they are. The
-- push comes before the ZREM, so a failed push leaves the job where it was.
-- Returns {run, stayed: unknown name, stayed: damaged queue, members looked at,
-- the first damaged queue's error or ''}; a member that cannot be decoded (or, with a
-- name, is of another name) is looked at and stays, counted in none of the others.
local now = tonumber(ARGV[2])
local known = {}
for i = 2, #KEYS do
  known[KEYS[i]] = true
end
local one = ARGV[3] == 'one'
local members
if one then
  members = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[4], ARGV[4])
else
  local first = tonumber(ARGV[5])
  members = redis.call('ZRANGE', KEYS[1], first, first + tonumber(ARGV[4]) - 1)
end
local run, unknown, damaged, first_error = 0, 0, 0, ''
for _, raw in ipairs(members) do
  local ok, job = pcall(cjson.decode, raw)
  local match = ok and type(job) == 'table' and type(job.name) == 'string'
  if match and one then
    match = job.id == ARGV[5]
  elseif match and ARGV[6] ~= nil then
    match = job.name == ARGV[6]
  end
  if match then
    local queue = ARGV[1] .. job.name
    if not known[queue] then
      unknown = unknown + 1
    else
      job.t = now
      job.d = nil
      local pushed = redis.pcall('LPUSH', queue, cjson.encode(job))
      if type(pushed) == 'table' and pushed.err then
        damaged = damaged + 1
        if first_error == '' then
          first_error = queue .. ': ' .. pushed.err
        end
      else
        redis.call('ZREM', KEYS[1], raw)
        run = run + 1
      end
    end
  end
end
return {run, unknown, damaged, #members, first_error}
