--[[
  Fragment (included by scripts.ts at load time): the one method-neutral
  session start. Whatever let the guest in (a voucher use, a consumed OTP
  code), the session is written here in the same script as that check, so no
  guest is authorised unless its session_start record is queued with it.
  Grant and record fields: engine/redis/records.ts (GRANT, SessionStartRecord).

  startSession(grantKey, liveKey, refKey, outboxKey, k, s)
    k: activityKeys(...) (includes/activity.lua), plus k.known: the tenant's
       known devices hash {t:T}:kdev (MAC -> first seen, ms)
    s: sid, hs, mac, now (ms, number), untilMs (number), method, user, vid
       ('' none), down, up, quota, squota, idle, profile, ip, ssid, and
       ssids (the voucher's SSID list, newline separated; nil or '': any),
       dt (the device type the browser claimed; nil or '': none, stored as other)
    Writes the grant, the live set entry, the session ref and the
    session_start record, emits device.new when the tenant has never seen
    the MAC and then session.start, and counts the start (starts in the
    minute bucket, the device and its SSID live); returns '' or the id of the device's
    previous live session at the hotspot, which it has ended (its end record
    and event queued first).
]]
--- @include "session-end-record"

local function startSession(grantKey, liveKey, refKey, outboxKey, k, s)
  -- Before any write: a script that forgot the key fails whole, not half way.
  if not k.known then error('session-start: no known-devices key (k.known)') end
  -- Each number turned into text once: Redis formats a number given to a command (and tostring
  -- does) with printf, about 1 µs each, and a start writes these two in several places (issue 22).
  local now, untilMs = tostring(s.now), tostring(s.untilMs)
  -- A device has one session per hotspot: a previous live one ends here, once
  -- (removal from the live set is the guard, as in end-session), with the bytes
  -- and details its grant holds before the grant is rewritten. One whose time
  -- had already run out (the sweep not there yet) ends as a time-out, then.
  local old = grantEndFields(grantKey)
  local replaced = ''
  if old.sid and rcall('ZREM', liveKey, old.sid) == 1 then
    replaced = old.sid
    local oldUntil = old.untilMs or s.now
    local reason, at = 'replaced', now
    if oldUntil <= s.now then reason, at = 'session_timeout', tostring(oldUntil) end
    recordSessionEnd(k, outboxKey, replaced, s.hs, s.mac, at, reason, old, '')
  end

  rcall('DEL', grantKey)
  rcall('HSET', grantKey,
    'sid', s.sid, 'hs', s.hs, 'mac', s.mac, 'until', untilMs, 'method', s.method, 'user', s.user,
    'vid', s.vid, 'down', s.down, 'up', s.up, 'quota', s.quota, 'squota', s.squota, 'idle', s.idle,
    'profile', s.profile, 'ip', s.ip, 'ssid', s.ssid, 'ssids', s.ssids or '', 'created', now, 'last', now,
    'bin', '0', 'bout', '0')
  rcall('ZADD', liveKey, untilMs, s.sid)
  rcall('SET', refKey, s.hs .. ' ' .. s.mac)

  rcall('XADD', outboxKey, '*', 'type', 'session_start', 'rec', cjson.encode({
    type = 'session_start', sid = s.sid, hs = s.hs, mac = s.mac, ip = s.ip, ssid = s.ssid,
    at = now, ['until'] = untilMs, user = s.user, method = s.method, vid = s.vid,
    -- Left out when unknown (RADIUS, sponsor): stored as NULL, counted as other.
    dt = (s.dt ~= '' and s.dt) or nil}))
  -- device.new: HSETNX creates the field once, whichever of any number of concurrent starts of the
  -- same MAC (any method, any engine process) runs first, as Redis runs scripts one at a time; the
  -- rest find it. One command per sign-in; the event only for a new device.
  if rcall('HSETNX', k.known, s.mac, now) == 1 then
    emitEvent(k, 'device.new', now, s.hs, {mac = s.mac, hotspot_id = s.hs, session_id = s.sid, method = s.method, first_seen = s.now})
  end
  emitEvent(k, 'session.start', now, s.hs, {session_id = s.sid, mac = s.mac, method = s.method, hotspot_id = s.hs})
  -- Starts are read only tenant-wide and per minute (the live panel's connects of the last hour):
  -- counted there alone, one HINCRBY where countActivity spent four (issue 22; records.ts ACTIVITY).
  countMinute(k, 'start', '1')
  -- No access point yet: accounting names it, and moves the session there (account-session-3.lua).
  moveLive(k.devices, s.mac, '1')
  moveLive(k.ssid, s.hs .. '|' .. s.ssid, '1')
  return replaced
end
