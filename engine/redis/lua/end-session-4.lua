--[[
  Ends a session exactly once and queues its end record.

  Removal from the hotspot's live set is the once-only guard: whoever removes
  the id writes the end record; any later attempt (a retransmitted Stop, a
  sweep racing an operator) gets 'gone' and writes nothing.

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[3] session ref            {t:T}:sr:<session id>
  KEYS[4] outbox stream          {t:T}:outbox

  ARGV[1] session id
  ARGV[2] now, ms
  ARGV[3] reason: session_timeout, idle_timeout, daily_quota, session_quota,
          user_request (device), admin_disconnect, blocked, nas_reboot, replaced
  ARGV[4] hotspot id
  ARGV[5] MAC
  ARGV[6] who (operator subject, or '')

  Returns
    {'ended', bytes_in, bytes_out, started_ms}
    {'gone'}                      already ended
]]
local rcall = redis.call

if rcall('ZREM', KEYS[2], ARGV[1]) == 0 then
  return {'gone'}
end
local g = rcall('HMGET', KEYS[1], 'sid', 'bin', 'bout', 'created', 'ip', 'ssid', 'user', 'method', 'aid')
local bin, bout, created, ip, ssid, user, method, aid = '0', '0', '0', '', '', '', '', ''
if g[1] == ARGV[1] then
  bin, bout, created = g[2] or '0', g[3] or '0', g[4] or '0'
  ip, ssid, user, method, aid = g[5] or '', g[6] or '', g[7] or '', g[8] or '', g[9] or ''
  rcall('DEL', KEYS[1])
end
-- The id -> device reference outlives the session by an hour, so an operator
-- acting on a session that just ended is told it ended, not that it never was.
rcall('PEXPIRE', KEYS[3], 3600000)
rcall('XADD', KEYS[4], '*', 'type', 'session_end', 'rec', cjson.encode({
  type = 'session_end', sid = ARGV[1], hs = ARGV[4], mac = ARGV[5], at = ARGV[2],
  reason = ARGV[3], bin = bin, bout = bout, ip = ip, ssid = ssid, user = user,
  method = method, by = ARGV[6]}))
return {'ended', bin, bout, created}
