--[[
  Extends a live session by a number of minutes, queues the audit record and
  emits session.extend (engine/events/types.ts).
  The new end is counted from the later of the current end and now.

  Grant fields and the session_extend record: engine/redis/records.ts.

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[3] outbox stream          {t:T}:outbox
  KEYS[4] event stream           {t:T}:ev

  ARGV[1] session id
  ARGV[2] now, ms
  ARGV[3] minutes to add
  ARGV[4] who (operator subject)
  ARGV[5] the call's operation id (random, one per extend)

  An extend is applied once: the grant keeps the last one's operation id
  (`xop`), and the same call again (ioredis resends a command whose answer a
  dropped connection lost; a failover's retry) answers the end it set
  without adding its minutes twice or queuing a second record.

  Returns
    {'extended', new_until_ms}
    {'gone'}                      not a live session
]]
local rcall = redis.call

local g = rcall('HMGET', KEYS[1], 'sid', 'until', 'hs', 'mac', 'ip', 'ssid', 'user', 'method', 'xop')
if g[1] ~= ARGV[1] or not rcall('ZSCORE', KEYS[2], ARGV[1]) then
  return {'gone'}
end
if g[9] == ARGV[5] then
  return {'extended', g[2]}
end
local now = tonumber(ARGV[2])
local from = tonumber(g[2])
if from < now then from = now end
local untilMs = from + tonumber(ARGV[3]) * 60000
rcall('HSET', KEYS[1], 'until', untilMs, 'xop', ARGV[5])
rcall('ZADD', KEYS[2], untilMs, ARGV[1])
rcall('XADD', KEYS[3], '*', 'type', 'session_extend', 'rec', cjson.encode({
  type = 'session_extend', sid = ARGV[1], hs = g[3], mac = g[4], at = ARGV[2],
  minutes = ARGV[3], ['until'] = tostring(untilMs), ip = g[5] or '', ssid = g[6] or '', user = g[7] or '',
  method = g[8] or '', by = ARGV[4]}))
-- No MAXLEN: the events stream is trimmed by engine/events/event-trimmer.ts only.
rcall('XADD', KEYS[4], '*', 'type', 'session.extend', 'ts', ARGV[2], 'site', g[3],
  'data', cjson.encode({session_id = ARGV[1], mac = g[4], method = g[8] or '', hotspot_id = g[3],
    minutes = tonumber(ARGV[3]), ['until'] = untilMs, by = ARGV[4]}))
return {'extended', tostring(untilMs)}
