--[[
  Starts a session for a guest whose method checked them already, in a
  step of its own (a sponsor's approval, a hotel guest found in the PMS;
  engine/signin/identity-method.ts; OTP codes start through use-otp-14.lua): the
  block check and the method-neutral start (includes/session-start.lua), so
  the session_start record carrying `auth_method` is queued with the grant.
  Records: engine/redis/records.ts.

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] outbox stream          {t:T}:outbox
  KEYS[3] tenant loaded marker   {t:T}:loaded (see includes/admit-device.lua)
  KEYS[4] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[5] session ref            {t:T}:sr:<new session id>
  KEYS[6] block marker           {t:T}:blk:<mac>
  KEYS[7] event stream          {t:T}:ev
  KEYS[8] activity, this minute  {t:T}:am:<floor(now / 60000)>
  KEYS[9] activity, this hour    {t:T}:ah:<floor(now / 3600000)>
  KEYS[10] live devices hash      {t:T}:ldev
  KEYS[11] live per SSID hash     {t:T}:lss
  KEYS[12] live per AP hash       {t:T}:lap
                                 (includes/activity.lua; engine/events/activity-keys.ts)
  KEYS[13] known devices hash     {t:T}:kdev   MAC -> first seen (ms): device.new
                                 the first time the tenant sees the MAC (includes/session-start.lua)

  ARGV[1] now, ms since epoch
  ARGV[2] MAC (canonical)
  ARGV[3] hotspot id
  ARGV[4] client IP ('' when unknown)
  ARGV[5] SSID ('' when unknown)
  ARGV[6] session id for the new session (sess_...)
  ARGV[7] session minutes (> 0)
  ARGV[8] idle timeout, seconds (0: none)
  ARGV[9] auth method (sms_otp, msgapp_otp, email, sponsor, pms)
  ARGV[10] user name (E.164 phone, e-mail address, ...)
  ARGV[11] down kbps (0 unset)
  ARGV[12] up kbps (0 unset)
  ARGV[13] daily quota MB (0 none)
  ARGV[14] session quota MB (0 none)
  ARGV[15] bandwidth profile name ('' none)
  ARGV[16] device type the browser claimed (ios, android, windows, macos, other; '' none): reports only

  Returns
    {'ok', session_id, grant_until_ms, replaced_session_id}
        replaced_session_id is '' or the device's previous live session at
        this hotspot, ended here (its session_end record queued first)
    {'not_loaded', run_id}     see includes/admit-device.lua
    {'blocked'}

  Errors
    ERR admit-device: INFO server shows no run_id
]]
local rcall = redis.call
--- @include "admit-device"
--- @include "session-start"

local refused = admitDevice(KEYS[3], KEYS[6])
if refused then
  return refused
end

local now = tonumber(ARGV[1])
local untilMs = now + tonumber(ARGV[7]) * 60000
local k = activityKeys(7)
k.known = KEYS[13]
local replaced = startSession(KEYS[1], KEYS[4], KEYS[5], KEYS[2], k, {
  sid = ARGV[6], hs = ARGV[3], mac = ARGV[2], now = now, untilMs = untilMs, method = ARGV[9], user = ARGV[10], vid = '',
  down = ARGV[11], up = ARGV[12], quota = ARGV[13], squota = ARGV[14], idle = ARGV[8], profile = ARGV[15],
  ip = ARGV[4], ssid = ARGV[5], dt = ARGV[16]})
return {'ok', ARGV[6], tostring(untilMs), replaced}
