--[[
  A sponsor's approval: uses the link up and starts the device's session in
  one step, so a link is used at most once however many processes and
  connections press "approve" at once, and a link used to approve always
  means a started session (invariant: a sponsor link is never used more
  than once). The request's status is the link's use: it leaves `pending`
  only here or in reject-sponsor-3.lua. The link key stays (it expires with
  the request), so a second use is told `used`, not unknown.
  The session is started for the device the request names (its MAC at its
  hotspot), not for the browser that asked: a guest who closed the page is
  let in at the NAS's next Access-Request. A blocked device, or a Redis that
  does not hold the tenant (includes/admit-device.lua), leaves the link
  alive. Records: engine/redis/records.ts.

  KEYS[1] link                   {t:T}:sp:l:<sha256 of the token>
  KEYS[2] request hash           {t:T}:sp:r:<request id>
  KEYS[3] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[4] outbox stream          {t:T}:outbox
  KEYS[5] tenant loaded marker   {t:T}:loaded
  KEYS[6] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[7] session ref            {t:T}:sr:<new session id>
  KEYS[8] block marker           {t:T}:blk:<mac>
  KEYS[9..14] event stream, activity minute and hour, live devices, per SSID,
          per AP (includes/activity.lua; engine/events/activity-keys.ts)
  KEYS[15] known devices hash    {t:T}:kdev (includes/session-start.lua: device.new)

  ARGV[1]  now, ms
  ARGV[2]  request id (the link must stand for it)
  ARGV[3]  sha256 of the presented token (hex; the request must hold it)
  ARGV[4]  MAC (canonical; the request must name it)
  ARGV[5]  hotspot id (the request must name it)
  ARGV[6]  client IP ('' unknown)
  ARGV[7]  SSID ('' unknown)
  ARGV[8]  session id for the new session (sess_...)
  ARGV[9]  session minutes (> 0; the sponsor's choice)
  ARGV[10] idle timeout s (0 none)
  ARGV[11] user name (the sponsor's address)
  ARGV[12] down kbps, ARGV[13] up kbps (0 unset)
  ARGV[14] daily quota MB, ARGV[15] session quota MB (0 none)
  ARGV[16] bandwidth profile ('' none)

  Returns
    {'ok', session_id, grant_until_ms, replaced_session_id}   the request is approved (the same
                      call again: the same answer, replaced_session_id '')
    {'unknown'}       no such link (never made, or its request is gone)
    {'used'}          the link was used already (approved or rejected)
    {'expired'}       past the link's lifetime
    {'not_loaded', run_id}, {'blocked'}   includes/admit-device.lua; the link is untouched
]]
local rcall = redis.call
--- @include "admit-device"
--- @include "session-start"

local now = tonumber(ARGV[1])
if rcall('GET', KEYS[1]) ~= ARGV[2] then return {'unknown'} end
local r = rcall('HMGET', KEYS[2], 'status', 'th', 'exp', 'mac', 'hs', 'guest', 'sponsor', 'sid', 'until')
if not r[1] or r[2] ~= ARGV[3] or r[4] ~= ARGV[4] or r[5] ~= ARGV[5] then return {'unknown'} end
-- The same call again (ioredis resends a command whose answer a dropped connection lost): the
-- approval it made, under the session id it gave, answered as made rather than as a used link.
if r[1] == 'approved' and r[8] == ARGV[8] then return {'ok', r[8], r[9], ''} end
if r[1] ~= 'pending' then return {'used'} end
if tonumber(r[3]) <= now then return {'expired'} end

local refused = admitDevice(KEYS[5], KEYS[8])
if refused then return refused end

local k = activityKeys(9)
k.known = KEYS[15]
local sid = ARGV[8]
local minutes = tonumber(ARGV[9])
local untilMs = now + minutes * 60000
local replaced = startSession(KEYS[3], KEYS[6], KEYS[7], KEYS[4], k, {
  sid = sid, hs = ARGV[5], mac = ARGV[4], now = now, untilMs = untilMs, method = 'sponsor', user = ARGV[11], vid = '',
  down = ARGV[12], up = ARGV[13], quota = ARGV[14], squota = ARGV[15], idle = ARGV[10], profile = ARGV[16],
  ip = ARGV[6], ssid = ARGV[7]})
rcall('HSET', KEYS[2], 'status', 'approved', 'decided', now, 'minutes', minutes, 'sid', sid, 'until', untilMs)
emitEvent(k, 'sponsor.approved', now, ARGV[5], {request_id = ARGV[2], hotspot_id = ARGV[5], mac = ARGV[4],
  sponsor_email = r[7], guest_name = r[6], minutes = minutes})
emitEvent(k, 'jit.decided', now, ARGV[5], {request_id = ARGV[2], decision = 'approved'})
return {'ok', sid, tostring(untilMs), replaced}
