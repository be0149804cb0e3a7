--[[
  The lease on a hotel's PMS link (engine/pms/pms-links.ts): a FIAS
  interface takes one connection, so one engine process holds it. Taken when
  free, renewed by its holder, released by its holder only.

  KEYS[1] the lease  {t:T}:pms:lease:<hotspot>

  ARGV[1] owner (NODE_ID)
  ARGV[2] 'hold' or 'release'
  ARGV[3] TTL, ms (hold)

  Returns 1 held (or released) by ARGV[1], 0 another process holds it
]]
local rcall = redis.call
local cur = rcall('GET', KEYS[1])
if ARGV[2] == 'release' then
  if cur == ARGV[1] then rcall('DEL', KEYS[1]) return 1 end
  return 0
end
if cur and cur ~= ARGV[1] then
  return 0
end
rcall('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
