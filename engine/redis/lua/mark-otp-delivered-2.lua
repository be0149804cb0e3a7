--[[
  A provider's delivery callback said the code reached the guest: the
  request becomes `delivered` and its fallback watch is cancelled, in one
  step, so a fallback being claimed at the same moment finds the request
  no longer `sent` (settle-otp-fallback-3.lua) and sends nothing.

  KEYS[1] request state   {t:T}:otp:r:<request id>
  KEYS[2] fallback zset   {t:T}:otp:fb

  ARGV[1] request id
  ARGV[2] channel the callback is for (sms | msgapp | email)

  Returns
    'delivered'   status was sent on that channel and is now delivered
    'ignored'     the request moved on (resent by SMS, not delivered, delivered) or the
                  callback is for another channel: nothing changes
    'unknown'     no such request (never made, or its state expired)
]]
local rcall = redis.call
local v = rcall('HMGET', KEYS[1], 'status', 'ch')
if not v[1] then return 'unknown' end
if v[1] ~= 'sent' or v[2] ~= ARGV[2] then return 'ignored' end
rcall('HSET', KEYS[1], 'status', 'delivered')
rcall('ZREM', KEYS[2], ARGV[1])
return 'delivered'
