--[[
  Fragment (included by scripts.ts at load time): the one place a session's
  end record is built. Used by end-session-4.lua and by the session start,
  which ends the session it replaces. Record and grant fields:
  engine/redis/records.ts (SessionEndRecord, GRANT).

  grantEndFields(grantKey)  the grant's session id, end and what its end
                            record carries, defaults for missing fields
  queueSessionEnd(outboxKey, sid, hs, mac, at, reason, e, by)
                            queues the session_end record; `e` is what
                            grantEndFields read (or NO_GRANT), `at` text ms
]]

-- What an end record carries when the grant no longer holds the session.
local NO_GRANT = {created = '0', bin = '0', bout = '0', ip = '', ssid = '', user = '', method = ''}

local function grantEndFields(grantKey)
  local g = rcall('HMGET', grantKey, 'sid', 'until', 'created', 'bin', 'bout', 'ip', 'ssid', 'user', 'method')
  return {sid = g[1], untilMs = tonumber(g[2]), created = g[3] or '0', bin = g[4] or '0', bout = g[5] or '0',
    ip = g[6] or '', ssid = g[7] or '', user = g[8] or '', method = g[9] or ''}
end

local function queueSessionEnd(outboxKey, sid, hs, mac, at, reason, e, by)
  rcall('XADD', outboxKey, '*', 'type', 'session_end', 'rec', cjson.encode({
    type = 'session_end', sid = sid, hs = hs, mac = mac, at = at, reason = reason,
    bin = e.bin, bout = e.bout, ip = e.ip, ssid = e.ssid, user = e.user, method = e.method, by = by}))
end
