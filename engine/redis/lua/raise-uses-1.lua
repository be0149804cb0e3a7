--[[
  Raises a voucher's use counter in Redis to at least the count Postgres
  holds, after the outbox sink stored uses. Redis is normally ahead; this only
  acts when Redis fell behind (a restart that lost its last writes, reloaded
  from a Postgres the sink had not yet brought up to date), and it never
  lowers a counter.

  KEYS[1] voucher hash   {t:T}:v:<code>

  ARGV[1] voucher id (a code now held by another voucher is left alone)
  ARGV[2] uses Postgres counts

  Returns 1 when raised, 0 otherwise (already at or above, absent, or another voucher's)
]]
local rcall = redis.call

local current = rcall('HMGET', KEYS[1], 'id', 'uses')
if current[1] ~= ARGV[1] then
  return 0
end
if (tonumber(current[2]) or 0) >= tonumber(ARGV[2]) then
  return 0
end
rcall('HSET', KEYS[1], 'uses', ARGV[2])
return 1
