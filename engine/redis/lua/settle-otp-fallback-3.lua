--[[
  Ends a request's wait for delivery: either the code is re-issued for the
  SMS channel (a fresh code, 0 tries, full validity) and the request becomes
  `resent_by_sms`, or the request ends `not_delivered` and its code dies.
  Only while the request is still in the expected state and its code is the
  identity's live one: a delivery callback, a verify that consumed the code,
  or a newer code for the same identity wins over a late fallback.

  KEYS[1] request state   {t:T}:otp:r:<request id>
  KEYS[2] fallback zset   {t:T}:otp:fb
  KEYS[3] code hash       {t:T}:otp:c:<hotspot>:<identity>

  ARGV[1] request id
  ARGV[2] outcome: resent | not_delivered
  ARGV[3] keyed hash of the new code (resent only)
  ARGV[4] now, ms
  ARGV[5] code validity, ms
  ARGV[6] the state the request must be in: sent, or resent_by_sms (an SMS resend that failed)

  Returns
    {'ok'}
    {'gone', status}   nothing changed: the request is in another state (status, '' when
                       its state expired), or its code was used or replaced
]]
local rcall = redis.call
rcall('ZREM', KEYS[2], ARGV[1])
local status = rcall('HGET', KEYS[1], 'status')
if not status then return {'gone', ''} end
if status ~= ARGV[6] then return {'gone', status} end
if rcall('HGET', KEYS[3], 'rid') ~= ARGV[1] then return {'gone', status} end

if ARGV[2] == 'resent' then
  local now, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
  rcall('HSET', KEYS[3], 'h', ARGV[3], 'tries', 0, 'exp', now + ttl, 'ch', 'sms')
  rcall('PEXPIRE', KEYS[3], ttl + 60000)
  rcall('HSET', KEYS[1], 'status', 'resent_by_sms', 'ch', 'sms')
else
  rcall('DEL', KEYS[3])
  rcall('HSET', KEYS[1], 'status', 'not_delivered')
end
return {'ok'}
