--[[
  Takes or keeps the lease on a hotspot's actor: exactly one engine process
  owns a hotspot at a time. Succeeds when the lease is free or already ours,
  and (re)sets its time to live.

  KEYS[1] lease   {t:T}:lease:<hotspot>

  ARGV[1] owner (engine process id)
  ARGV[2] time to live, ms

  Returns 1 when we hold the lease, 0 when another process does.
]]
local rcall = redis.call

local holder = rcall('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  return 0
end
rcall('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
