-- Write periodic instances to the scheduled set (PROTOCOL §10.2, §10.3), unless the other Go
-- flavour's instance of the same fire time is already there: the fork's bytes carry
-- `d`, upstream's don't, so one fire time would otherwise have two members and run
-- twice (README "Go flavours").
-- KEYS[1] <p>scheduled
-- ARGV    triplets: score (the fire time), this flavour's member, the other flavour's
--         member of the same fire time
-- Returns the 1-based numbers of the triplets skipped because the other's member was
-- present (an empty array when none was).
local skipped = {}
for i = 1, #ARGV, 3 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i + 2]) then
    skipped[#skipped + 1] = (i + 2) / 3
  else
    redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return skipped
