--[[
  Counts an OTP send against every abuse limit and, when none is reached,
  stores the new code's keyed hash. One script, so two engine processes can
  never both pass a limit that has room for one more send, and a code is
  never stored without its send being counted.

  Limits are fixed windows held in hashes (n = sends in the window, reset =
  when the window ends, ms). Time is ARGV[1], the service's clock, never
  Redis's: tests move that clock. Key TTLs only clean up; the stored times
  decide. A limit of 0 is off (an unknown client IP, say).

  KEYS[1] code hash        {t:T}:otp:c:<hotspot>:<identity>   h, tries, exp, rid, ch
  KEYS[2] request state    {t:T}:otp:r:<request id>           status, ch, hs, user, fb, lang
  KEYS[3] identity limit   {t:T}:otp:l:user:<identity>        next (cool-down end), n, reset (day window)
  KEYS[4] source limit     {t:T}:otp:l:ip:<source address>  (the request's peer or trusted
                           proxy's word, never a body field: http/client-address.ts)
  KEYS[5] MAC limit        {t:T}:otp:l:mac:<hotspot>/<mac>  (a claimed MAC, so per hotspot, and
                           never the only guard: the source limit always applies)
  KEYS[6] prefix limit     {t:T}:otp:l:prefix:<dial prefix or e-mail domain>
  KEYS[7] fallback zset    {t:T}:otp:fb                       request id -> due ms

  ARGV[1]  now, ms
  ARGV[2]  keyed hash of the code (hex)
  ARGV[3]  request id
  ARGV[4]  channel: sms | msgapp | email
  ARGV[5]  hotspot id
  ARGV[6]  identity (E.164 phone or e-mail)
  ARGV[7]  code validity, ms (300000)
  ARGV[8]  request state TTL, ms
  ARGV[9]  cool-down between sends to one identity, ms
  ARGV[10] sends per identity per day window (0: off)
  ARGV[11] day window, ms
  ARGV[12] sends per client IP per window (0: off)
  ARGV[13] sends per MAC per window (0: off)
  ARGV[14] sends per prefix per window (0: off)
  ARGV[15] window of the IP, MAC and prefix limits, ms
  ARGV[16] fallback due time, ms (0: no delivery watch; msgapp only)
  ARGV[17] 1: SMS fallback when the watch fires, 0: not_delivered
  ARGV[18] the guest's language, tr | en (absent: tr): a fallback SMS sent later is in it too

  Returns
    {'ok'}
    {'limited', limit, retry_after_ms}   limit: cooldown | identity | ip | mac | prefix;
                                         nothing was counted or stored
]]
local rcall = redis.call
--- @include "fixed-window"
local now = tonumber(ARGV[1])

local cooldown = tonumber(ARGV[9])
local nextAt = tonumber(rcall('HGET', KEYS[3], 'next') or '0')
if nextAt > now then return {'limited', 'cooldown', nextAt - now} end

local checks = {
  {'identity', KEYS[3], tonumber(ARGV[10]), tonumber(ARGV[11])},
  {'ip', KEYS[4], tonumber(ARGV[12]), tonumber(ARGV[15])},
  {'mac', KEYS[5], tonumber(ARGV[13]), tonumber(ARGV[15])},
  {'prefix', KEYS[6], tonumber(ARGV[14]), tonumber(ARGV[15])},
}
for _, c in ipairs(checks) do
  local wait = windowWait(c[2], c[3], now)
  if wait > 0 then return {'limited', c[1], wait} end
end
for _, c in ipairs(checks) do windowCount(c[2], c[3], c[4], now) end
if cooldown > 0 then
  rcall('HSET', KEYS[3], 'next', now + cooldown)
  if rcall('PTTL', KEYS[3]) < cooldown then rcall('PEXPIRE', KEYS[3], cooldown + 60000) end
end

-- A new code replaces the identity's older one at this hotspot, tries and all.
local ttl = tonumber(ARGV[7])
rcall('DEL', KEYS[1])
rcall('HSET', KEYS[1], 'h', ARGV[2], 'tries', 0, 'exp', now + ttl, 'rid', ARGV[3], 'ch', ARGV[4])
rcall('PEXPIRE', KEYS[1], ttl + 60000)

rcall('HSET', KEYS[2], 'status', 'sent', 'ch', ARGV[4], 'hs', ARGV[5], 'user', ARGV[6], 'fb', ARGV[17], 'lang', ARGV[18] or 'tr')
rcall('PEXPIRE', KEYS[2], tonumber(ARGV[8]))
local due = tonumber(ARGV[16])
if due > 0 then rcall('ZADD', KEYS[7], due, ARGV[3]) end
return {'ok'}
