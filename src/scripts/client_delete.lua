-- Delete-single (PROTOCOL §11.2): removes the members of a zset that have the given score and
-- the given job id.
-- KEYS[1] the zset (<p>retry, <p>scheduled or <p>dead); KEYS[2] the job's failure
--   history <p>cwork:failures:<id> (PROTOCOL §26), deleted with the job
-- ARGV[1] the job id   ARGV[2], ARGV[3] the ZRANGEBYSCORE bounds of the listed score
--   (whole Unix seconds: just that score; see cw_score_range for the others, so that a
--   member with an odd score — a fraction, past 2^53, ±inf — can be addressed too)
-- Members at that score that cjson cannot decode are left alone (Go's script fails on
-- them, so one bad member made every delete at its score fail).
-- Returns {count, the bytes of every removed member…}: the caller deletes the unique
-- guard of each removed unique scheduled job.
local removed = {0}
for _, raw in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[3])) do
  local ok, job = pcall(cjson.decode, raw)
  if ok and type(job) == 'table' and job.id == ARGV[1] then
    redis.call('ZREM', KEYS[1], raw)
    removed[1] = removed[1] + 1
    removed[#removed + 1] = raw
  end
end
if removed[1] > 0 and KEYS[2] then
  redis.call('DEL', KEYS[2])
end
return removed
