--[[
  Rewrites one hash field's value only if it still holds the value the caller
  read (compare-and-set): an erasure pseudonymises values found by an earlier
  scan (engine/privacy/redis-personal-data.ts), and a field deleted or changed
  since (an audit intent committed, a webhook body delivered and dropped) must
  not come back or lose the newer value.

  KEYS[1] the hash   any tenant key, {t:T}:...

  ARGV[1] field
  ARGV[2] the value read before (expected)
  ARGV[3] the new value

  Returns 1 when rewritten, 0 when the field is gone or holds another value (nothing written)
]]
local rcall = redis.call

if rcall('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
rcall('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
