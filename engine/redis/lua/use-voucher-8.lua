--[[
  Uses a voucher for one device and starts its session: the only place a use
  counter is raised.

  The checks (block, expiry, SSID, remaining uses), the counter increment, the
  session (the device's grant at the hotspot) and the outbox record that
  carries the use and the session start to Postgres happen in one script.
  So two devices using the same code at once can never push the counter past
  max_uses, and no guest is authorised without its session-start record queued.

  KEYS[1] voucher hash           {t:T}:v:<code>
  KEYS[2] voucher devices hash   {t:T}:vd:<code>
  KEYS[3] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[4] outbox stream          {t:T}:outbox
  KEYS[5] tenant loaded marker   {t:T}:loaded, holding the run_id of the Redis
                                 server the tenant was loaded into
  KEYS[6] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[7] session ref            {t:T}:sr:<new session id>
  KEYS[8] block marker           {t:T}:blk:<mac>

  ARGV[1] now, ms since epoch
  ARGV[2] MAC (canonical)
  ARGV[3] hotspot id
  ARGV[4] client IP ('' when unknown)
  ARGV[5] SSID ('' when unknown)
  ARGV[6] session id for a new session (sess_...)
  ARGV[7] use id for a new use
  ARGV[8] session minutes when the voucher sets none
  ARGV[9] idle timeout, seconds (0: none)
  ARGV[10] auth method ('voucher')

  Returns
    {'ok', session_id, grant_until_ms, current_uses, max_uses, 1}
        the device already had a live session from this voucher: it gets it
        back and no use is counted
    {'ok', session_id, grant_until_ms, current_uses, max_uses, 0, replaced_session_id}
        a new use and session; replaced_session_id is '' or the device's
        previous live session at this hotspot, which this script has ended
        (its session_end record queued before the new use, with its bytes):
        the caller only tells the hotspot's actor to forget it
        (max_uses is -1 when unlimited)
    {'not_found'}
    {'not_loaded', run_id}            this Redis server may not hold the tenant's vouchers and
                                      blocks as Postgres has them: the marker is missing (new
                                      or emptied Redis) or names another server (a restart or
                                      failover, which may have lost the last writes). Load them
                                      from Postgres, set the marker to run_id, and retry
    {'blocked'}                       the MAC is on the tenant's block list
    {'expired', expires_at_ms}
    {'ssid'}                          the voucher is limited to other SSIDs
    {'exhausted', max_uses, current_uses}

  Errors
    ERR use-voucher: INFO server shows no run_id   (no Redis server does this; a
                                      proxy in front of one might)
]]
local rcall = redis.call

-- The marker alone cannot tell a restarted Redis: the AOF keeps the marker,
-- written long ago, while `everysec` may have dropped the last second of uses,
-- some of them already copied to Postgres. A restart or failover always
-- changes the server's run_id, so the tenant counts as loaded only into the
-- server that runs this script now. It is read here, not passed in: a caller's
-- remembered run_id can be stale (ioredis resends commands that were in flight
-- across a reconnect), and a stale id would match the surviving marker.
local info = rcall('INFO', 'server')
local at = string.find(info, 'run_id:', 1, true)
if not at then
  return redis.error_reply('ERR use-voucher: INFO server shows no run_id')
end
local runId = string.sub(info, at + 7, at + 46)
if rcall('GET', KEYS[5]) ~= runId then
  return {'not_loaded', runId}
end
if rcall('EXISTS', KEYS[8]) == 1 then
  return {'blocked'}
end

local v = rcall('HMGET', KEYS[1], 'id', 'max', 'uses', 'exp', 'ssids', 'dur', 'down', 'up', 'quota', 'profile', 'code', 'squota')
local id = v[1]
if not id then
  return {'not_found'}
end
local now = tonumber(ARGV[1])
local exp = tonumber(v[4])
-- Valid strictly before expires_at; at expires_at it is expired.
if exp > 0 and now >= exp then
  return {'expired', v[4]}
end
local ssids = v[5]
if ssids ~= '' then
  -- The list is newline separated: an SSID holding a newline would match two
  -- listed names at once, so it matches none.
  if ARGV[5] == '' or string.find(ARGV[5], '\n', 1, true)
    or not string.find('\n' .. ssids .. '\n', '\n' .. ARGV[5] .. '\n', 1, true) then
    return {'ssid'}
  end
end

local mac = ARGV[2]
local max = tonumber(v[2])
local uses = tonumber(v[3])

-- The same device again while its session from this voucher is live gets
-- that session back; no use is counted (multi-use means several devices).
local prior = rcall('HGET', KEYS[2], mac)
if prior then
  local g = rcall('HMGET', KEYS[3], 'sid', 'until')
  if g[1] == prior and tonumber(g[2]) > now then
    return {'ok', prior, g[2], uses, max, 1}
  end
end

if max >= 0 and uses >= max then
  return {'exhausted', max, uses}
end

uses = rcall('HINCRBY', KEYS[1], 'uses', 1)
local sid = ARGV[6]
local dur = tonumber(v[6])
if dur <= 0 then dur = tonumber(ARGV[8]) end
local untilMs = now + dur * 60000
-- Only the voucher sets a session quota. A definition written before
-- vouchers had one has no `squota` field: none.
local squota = tonumber(v[12]) or 0

-- A device has one session per hotspot: a previous live one ends here, once
-- (removal from the live set is the guard, as in end-session), with the bytes
-- and details its grant holds before the grant is rewritten. One whose time
-- had already run out (the sweep not there yet) ends as a time-out, then.
local old = rcall('HMGET', KEYS[3], 'sid', 'until', 'bin', 'bout', 'ip', 'ssid', 'user', 'method')
local replaced = ''
if old[1] and rcall('ZREM', KEYS[6], old[1]) == 1 then
  replaced = old[1]
  local oldUntil = tonumber(old[2]) or now
  local reason, at = 'replaced', now
  if oldUntil <= now then reason, at = 'session_timeout', oldUntil end
  rcall('XADD', KEYS[4], '*', 'type', 'session_end', 'rec', cjson.encode({
    type = 'session_end', sid = replaced, hs = ARGV[3], mac = mac, at = tostring(at),
    reason = reason, bin = old[3] or '0', bout = old[4] or '0', ip = old[5] or '', ssid = old[6] or '',
    user = old[7] or '', method = old[8] or '', by = ''}))
end

rcall('HSET', KEYS[2], mac, sid)
rcall('DEL', KEYS[3])
rcall('HSET', KEYS[3],
  'sid', sid, 'hs', ARGV[3], 'mac', mac, 'until', untilMs, 'method', ARGV[10], 'user', v[11],
  'vid', id, 'down', v[7], 'up', v[8], 'quota', v[9], 'squota', squota, 'idle', ARGV[9],
  'profile', v[10], 'ip', ARGV[4], 'ssid', ARGV[5], 'created', now, 'last', now,
  'bin', 0, 'bout', 0)
rcall('ZADD', KEYS[6], untilMs, sid)
rcall('SET', KEYS[7], ARGV[3] .. ' ' .. mac)

rcall('XADD', KEYS[4], '*', 'type', 'voucher_use', 'rec', cjson.encode({
  type = 'voucher_use', use = ARGV[7], vid = id, hs = ARGV[3], mac = mac,
  ip = ARGV[4], ssid = ARGV[5], sid = sid, at = tostring(now), ['until'] = tostring(untilMs),
  user = v[11], method = ARGV[10]}))

return {'ok', sid, tostring(untilMs), uses, max, 0, replaced}
