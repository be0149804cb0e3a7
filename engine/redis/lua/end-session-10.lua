--[[
  Ends a session exactly once: queues its end record, emits session.end and
  counts the end (includes/session-end-record.lua; fields:
  engine/redis/records.ts).

  Removal from the hotspot's live set is the once-only guard: whoever removes
  the id writes the end record; any later attempt (a retransmitted Stop, a
  sweep racing an operator) gets 'gone' and writes and counts nothing.

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[3] session ref            {t:T}:sr:<session id>
  KEYS[4] outbox stream          {t:T}:outbox
  KEYS[5] event stream          {t:T}:ev
  KEYS[6] activity, this minute  {t:T}:am:<floor(now / 60000)>
  KEYS[7] activity, this hour    {t:T}:ah:<floor(now / 3600000)>
  KEYS[8] live devices hash      {t:T}:ldev
  KEYS[9] live per SSID hash     {t:T}:lss
  KEYS[10] live per AP hash       {t:T}:lap
                                 (includes/activity.lua; engine/events/activity-keys.ts)

  ARGV[1] session id
  ARGV[2] now, ms
  ARGV[3] reason: session_timeout, idle_timeout, daily_quota, session_quota,
          user_request (device), admin_disconnect, blocked, nas_reboot, replaced,
          pms_checkout (room sign-in's reservation checked out)
  ARGV[4] hotspot id
  ARGV[5] MAC
  ARGV[6] who (operator subject, or '')
  ARGV[7] the call's operation id (random, one per end; '' none)

  The call that ends the session leaves its operation id in the session
  ref ("<hotspot> <mac> <op>"), so the same call again (ioredis resends a
  command whose answer a dropped connection lost; a failover's retry) is
  told it ended the session, and its caller still tells the NAS, rather
  than 'gone' from its own first run.

  Returns
    {'ended', bytes_in, bytes_out, started_ms}
    {'ended'}                     the same call again: it had ended the session
    {'gone'}                      already ended
]]
local rcall = redis.call
--- @include "session-end-record"

local op = ARGV[7]
if rcall('ZREM', KEYS[2], ARGV[1]) == 0 then
  local ref = rcall('GET', KEYS[3])
  if op ~= '' and ref and string.sub(ref, -(#op + 1)) == ' ' .. op then
    return {'ended'}
  end
  return {'gone'}
end
local e = grantEndFields(KEYS[1])
if e.sid == ARGV[1] then
  rcall('DEL', KEYS[1])
else
  -- The device's grant holds another session now: this one's details are gone.
  e = NO_GRANT
end
-- The id -> device reference outlives the session by an hour, so an operator
-- acting on a session that just ended is told it ended, not that it never was.
local ref = op ~= '' and rcall('GET', KEYS[3])
if ref then
  rcall('SET', KEYS[3], ref .. ' ' .. op, 'PX', 3600000)
else
  rcall('PEXPIRE', KEYS[3], 3600000)
end
recordSessionEnd(activityKeys(5), KEYS[4], ARGV[1], ARGV[4], ARGV[5], ARGV[2], ARGV[3], e, ARGV[6])
return {'ended', e.bin, e.bout, e.created}
