--[[
  Checks a presented code against an identity's live code and, on a match,
  consumes it and starts the device's session: the only place a code is
  used. One script, so the code is consumed if and only if the session
  starts (a blocked device, or a Redis that does not hold the tenant, leaves
  the code alive), and of any number of concurrent verifies from any number
  of engine processes exactly one can succeed. The start is the
  method-neutral one (includes/session-start.lua), so no guest is authorised
  unless its session_start record is queued here too. Records:
  engine/redis/records.ts.

  The code itself never reaches Redis: the service sends the keyed hash of
  the presented code (HMAC-SHA256, see otp-code.ts) and the script compares
  it with the stored one without an early exit, so the time taken does not
  show how much of it matched. The code is checked before the device is
  admitted, so a wrong code is counted (and answered) as it always was.

  The session's terms depend on the method, which only the stored code
  knows (a phone code went by SMS or by messaging app): the caller passes
  the terms of each method the code may belong to, and the script takes the
  group whose channel the code was sent on.

  KEYS[1] code hash              {t:T}:otp:c:<hotspot>:<identity>   h, tries, exp, rid, ch
  KEYS[2] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[3] outbox stream          {t:T}:outbox
  KEYS[4] tenant loaded marker   {t:T}:loaded (see includes/admit-device.lua)
  KEYS[5] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[6] session ref            {t:T}:sr:<new session id>
  KEYS[7] block marker           {t:T}:blk:<mac>
  KEYS[8] event stream           {t:T}:ev
  KEYS[9] activity, this minute  {t:T}:am:<floor(now / 60000)>
  KEYS[10] activity, this hour   {t:T}:ah:<floor(now / 3600000)>
  KEYS[11] live devices hash     {t:T}:ldev
  KEYS[12] live per SSID hash    {t:T}:lss
  KEYS[13] live per AP hash      {t:T}:lap
                                 (includes/activity.lua; engine/events/activity-keys.ts)
  KEYS[14] known devices hash    {t:T}:kdev   MAC -> first seen (ms): device.new
                                 the first time the tenant sees the MAC (includes/session-start.lua)

  ARGV[1] now, ms since epoch (the service's clock)
  ARGV[2] keyed hash of the presented code (hex)
  ARGV[3] wrong tries that kill a code (5)
  ARGV[4] MAC (canonical)
  ARGV[5] hotspot id
  ARGV[6] client IP ('' when unknown)
  ARGV[7] SSID ('' when unknown)
  ARGV[8] session id for the new session (sess_...)
  ARGV[9] user name (E.164 phone or e-mail address)
  ARGV[10] device type the browser claimed (ios, android, windows, macos, other; '' none): reports only
  ARGV[11...] one group of 9 per method the code may belong to:
          channel (sms, msgapp, email), auth method (sms_otp, msgapp_otp, email),
          session minutes (> 0), idle timeout s (0 none), down kbps, up kbps
          (0 unset), daily quota MB, session quota MB (0 none), bandwidth
          profile name ('' none)

  Returns
    {'ok', session_id, grant_until_ms, replaced_session_id, auth_method, request_id}
        the code is gone; replaced_session_id is '' or the device's previous
        live session at this hotspot, ended here (its session_end record
        queued first); the same call again answers its session with
        replaced_session_id and request_id ''
    {'expired'}                   no live code: never sent, already used, or past its validity
    {'invalid', attempts_left}    wrong code, counted
    {'locked'}                    the code took its last wrong try (now or before); it stays
                                  dead until it expires or a new code replaces it
    {'not_loaded', run_id}        see includes/admit-device.lua; the code is untouched
    {'blocked'}                   the MAC is on the tenant's block list; the code is untouched

  Errors
    ERR admit-device: INFO server shows no run_id
    ERR use-otp: no terms for channel <ch>   (the caller passed no group for the code's channel)
]]
local rcall = redis.call
--- @include "admit-device"
--- @include "session-start"

local now = tonumber(ARGV[1])
local max = tonumber(ARGV[3])

local v = rcall('HMGET', KEYS[1], 'h', 'tries', 'exp', 'ch', 'rid')
if not v[1] then
  -- The same call again (ioredis resends a command whose answer a dropped connection lost; a
  -- failover's retry): the code is gone because this call used it, and the device's session is
  -- the one it started, under the id it gave. Answered as started, not as an expired code.
  local s = rcall('HMGET', KEYS[2], 'sid', 'until', 'method')
  if s[1] == ARGV[8] then return {'ok', s[1], s[2], '', s[3], ''} end
  return {'expired'}
end
if tonumber(v[3]) <= now then
  rcall('DEL', KEYS[1])
  return {'expired'}
end
local tries = tonumber(v[2])
if tries >= max then return {'locked'} end

local a, b = v[1], ARGV[2]
local diff = (#a == #b) and 0 or 1
for i = 1, math.min(#a, #b) do
  diff = bit.bor(diff, bit.bxor(string.byte(a, i), string.byte(b, i)))
end
if diff ~= 0 then
  tries = rcall('HINCRBY', KEYS[1], 'tries', 1)
  if tries >= max then return {'locked'} end
  return {'invalid', max - tries}
end

local g
for i = 11, #ARGV, 9 do
  if ARGV[i] == v[4] then g = i break end
end
if not g then
  return redis.error_reply('ERR use-otp: no terms for channel ' .. tostring(v[4]))
end

-- The right code: only now is the device admitted, and only an admitted
-- device uses the code up.
local refused = admitDevice(KEYS[4], KEYS[7])
if refused then
  return refused
end

rcall('DEL', KEYS[1])
local sid = ARGV[8]
local method = ARGV[g + 1]
local untilMs = now + tonumber(ARGV[g + 2]) * 60000
local k = activityKeys(8)
k.known = KEYS[14]
local replaced = startSession(KEYS[2], KEYS[5], KEYS[6], KEYS[3], k, {
  sid = sid, hs = ARGV[5], mac = ARGV[4], now = now, untilMs = untilMs, method = method, user = ARGV[9], vid = '',
  down = ARGV[g + 4], up = ARGV[g + 5], quota = ARGV[g + 6], squota = ARGV[g + 7], idle = ARGV[g + 3], profile = ARGV[g + 8],
  ip = ARGV[6], ssid = ARGV[7], dt = ARGV[10]})
return {'ok', sid, tostring(untilMs), replaced, method, v[5]}
