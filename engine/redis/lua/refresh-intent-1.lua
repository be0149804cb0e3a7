--[[
  Marks an operator change's intent as still under way (a long request: a
  streamed import), so the sweep does not take it for one whose request died
  (engine/audit/audit-log.ts). Only while the intent is there: one already
  committed, withdrawn or recovered is not brought back.

  KEYS[1] intents hash      {t:T}:audit:intents

  ARGV[1] record id (the intent's field)
  ARGV[2] the intent as stored before (JSON)
  ARGV[3] the intent with its new `seen` time (JSON)

  Returns 1 when refreshed, 0 when the field is gone or holds something else.
]]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
