--[[
  Fragment (included by scripts.ts at load time): the one place a session's
  end record is built. Used by end-session-10.lua and by the session start,
  which ends the session it replaces. Record and grant fields:
  engine/redis/records.ts (SessionEndRecord, GRANT); the event and counters:
  includes/activity.lua.

  grantEndFields(grantKey)  the grant's session id, end and what its end
                            record carries, defaults for missing fields
  recordSessionEnd(k, outboxKey, sid, hs, mac, at, reason, e, by)
                            queues the session_end record, emits session.end
                            and counts the end (ends, durations, the live
                            counts the grant held moved down); `k` from
                            activityKeys, `e` what grantEndFields read (or
                            NO_GRANT), `at` text ms
]]
--- @include "activity"

-- What an end record carries when the grant no longer holds the session.
-- `none`: nothing is known of its SSID or access point, so those live counts are left alone.
local NO_GRANT = {created = '0', bin = '0', bout = '0', ip = '', ssid = '', user = '', method = '', ap = '', none = true}

local function grantEndFields(grantKey)
  local g = rcall('HMGET', grantKey, 'sid', 'until', 'created', 'bin', 'bout', 'ip', 'ssid', 'user', 'method', 'ap')
  return {sid = g[1], untilMs = tonumber(g[2]), created = g[3] or '0', bin = g[4] or '0', bout = g[5] or '0',
    ip = g[6] or '', ssid = g[7] or '', user = g[8] or '', method = g[9] or '', ap = g[10] or ''}
end

local function recordSessionEnd(k, outboxKey, sid, hs, mac, at, reason, e, by)
  rcall('XADD', outboxKey, '*', 'type', 'session_end', 'rec', cjson.encode({
    type = 'session_end', sid = sid, hs = hs, mac = mac, at = at, reason = reason,
    bin = e.bin, bout = e.bout, ip = e.ip, ssid = e.ssid, user = e.user, method = e.method, by = by}))

  local atMs, created = tonumber(at), tonumber(e.created) or 0
  local dur = 0
  if created > 0 and atMs > created then dur = math.floor((atMs - created) / 1000) end
  emitEvent(k, 'session.end', at, hs, {session_id = sid, mac = mac, method = e.method, hotspot_id = hs,
    reason = reason, duration_sec = dur, bytes_in = tonumber(e.bin) or 0, bytes_out = tonumber(e.bout) or 0})
  -- Where their readers take them (the live panel: disconnects per minute, ends and durations of
  -- 24 h; none per hotspot): three HINCRBY where countActivity spent eight (issue 22; records.ts ACTIVITY).
  countMinute(k, 'end', '1')
  countHour(k, 'end', '1', 'dur', dur)
  -- The start counted this session under its device and SSID, accounting moved it between
  -- access points; the grant says where it is now.
  moveLive(k.devices, mac, '-1')
  if not e.none then
    moveLive(k.ssid, hs .. '|' .. e.ssid, '-1')
    if e.ap ~= '' then moveLive(k.ap, hs .. '|' .. e.ap, '-1') end
  end
end
