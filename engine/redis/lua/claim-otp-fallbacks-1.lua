--[[
  Claims the tenant's fallback watches that are due. Each claimed request id
  is pushed `lease` ms into the future rather than removed, so exactly one
  poller (of any process) gets it now, and if that process dies before it
  settles the request (settle-otp-fallback-3.lua removes it), another poller
  claims it again once the lease has passed: the watch survives restarts.

  KEYS[1] fallback zset   {t:T}:otp:fb   request id -> due ms

  ARGV[1] now, ms (the service's clock)
  ARGV[2] lease, ms
  ARGV[3] at most this many ids

  Returns the claimed request ids (possibly none).
]]
local rcall = redis.call
local now = tonumber(ARGV[1])
local ids = rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do rcall('ZADD', KEYS[1], now + tonumber(ARGV[2]), id) end
return ids
