--[[
  Writes a voucher's definition into Redis: at creation, and when Redis is
  rebuilt from Postgres. The use counter never goes down: it becomes the larger
  of the stored and the given value, so a rebuild from a Postgres that lags
  the outbox cannot hand out uses twice.

  KEYS[1] voucher hash   {t:T}:v:<code>

  ARGV[1] voucher id    ARGV[2] max uses (-1 unlimited)   ARGV[3] current uses
  ARGV[4] expires at, ms (0 never)   ARGV[5] SSIDs, newline separated ('' any)
  ARGV[6] session minutes (0: hotspot default)   ARGV[7] down kbps (0 unset)
  ARGV[8] up kbps (0 unset)   ARGV[9] daily quota MB (0 unlimited)
  ARGV[10] bandwidth profile name ('' none)   ARGV[11] code
  ARGV[12] session data quota MB (0 none), stored as `squota`: use-voucher
           copies it into each new session's grant
  ARGV[13] valid from, ms (0 or absent: open)    ARGV[14] valid until, ms (0 or
           absent: open): the match-day window, stored as `vfrom`/`vuntil`
           and checked by use-voucher (absent: a caller from before windows)

  Returns
    1   written
    0   the code belongs to another voucher (nothing written)
]]
local rcall = redis.call

local current = rcall('HMGET', KEYS[1], 'id', 'uses')
if current[1] and current[1] ~= ARGV[1] then
  return 0
end
local uses = tonumber(ARGV[3])
if current[2] and tonumber(current[2]) > uses then
  uses = tonumber(current[2])
end
rcall('HSET', KEYS[1],
  'id', ARGV[1], 'max', ARGV[2], 'uses', uses, 'exp', ARGV[4], 'ssids', ARGV[5],
  'dur', ARGV[6], 'down', ARGV[7], 'up', ARGV[8], 'quota', ARGV[9], 'profile', ARGV[10],
  'code', ARGV[11], 'squota', ARGV[12], 'vfrom', ARGV[13] or '0', 'vuntil', ARGV[14] or '0')
return 1
