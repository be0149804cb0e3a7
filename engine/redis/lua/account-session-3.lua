--[[
  Records one Accounting-Request (Start, Interim-Update or Stop) against a
  live session and checks its quotas, atomically.

  The NAS reports running totals per Acct-Session-Id. We keep the last totals
  seen for each one (field a:<Acct-Session-Id> = "in out") and add only the
  difference, so a retransmit (same totals, another Acct-Delay-Time) counts
  nothing, and another Acct-Session-Id for the same device (a reconnect, or a
  roam to another access point that is its own NAS) counts from its own zero
  without resetting anything, however the two NASes' reports interleave.
  The daily counter is per device and tenant, across all its sessions, so
  reconnecting never resets a daily quota.

  The session's current Acct-Session-Id (field aid) is the one last started
  (or the first seen). Only its Stop ends the session: a late Stop from the
  access point the device has left counts its last bytes, and that is all.

  A session whose current access point changes moves in the live-per-AP
  hash (includes/activity.lua). The byte deltas are returned: the caller
  sums them into the dashboard's activity buckets once a second
  (engine/events/activity-tally.ts), which is not this script's work
  because each redis.call from Lua has its own cost, and eight HINCRBYs per
  Interim-Update cost Redis three times the rest of the script.

  Every call costs a handful of commands (HMGET, HSET, INCRBY, and EXPIRE
  only when the daily counter is new): it runs for every Interim-Update.

  Grant fields: engine/redis/records.ts (GRANT).

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] daily usage counter    {t:T}:dq:<mac>:<yyyymmdd, hotspot local day>
  KEYS[3] live per AP hash       {t:T}:lap
                                 (includes/activity.lua; engine/events/activity-keys.ts)

  ARGV[1] now, ms
  ARGV[2] Acct-Session-Id
  ARGV[3] input octets, total for this Acct-Session-Id (guest download)
  ARGV[4] output octets, total (guest upload)
  ARGV[5] framed IP ('' unknown)
  ARGV[6] AP name ('' unknown)
  ARGV[7] signal dBm ('' unknown)
  ARGV[8] status: start, interim or stop

  Returns, with current = 1 when ARGV[2] is the session's current Acct-Session-Id,
  and delta_in, delta_out the bytes this request added (0 for a retransmit)
    {'none'}                                                    no live session for this device
    {'ok', sid, bytes_in, bytes_out, daily_bytes, last_activity_ms, current, delta_in, delta_out}
    {'session_quota', ...the same}
    {'daily_quota', ...the same}
]]
local rcall = redis.call
--- @include "activity"
local MB = 1048576

local aidKey = 'a:' .. ARGV[2]
local g = rcall('HMGET', KEYS[1], 'sid', 'aid', 'ain', 'aout', 'bin', 'bout', 'quota', 'squota', 'last', aidKey, 'hs', 'ap')
local sid = g[1]
if not sid then
  return {'none'}
end
local hs = g[11] or ''
local now = tonumber(ARGV[1])
local tin = tonumber(ARGV[3])
local tout = tonumber(ARGV[4])
local pin, pout
if g[10] then
  local sp = string.find(g[10], ' ', 1, true)
  pin, pout = tonumber(string.sub(g[10], 1, sp - 1)), tonumber(string.sub(g[10], sp + 1))
elseif g[2] == ARGV[2] and g[3] then
  -- Totals kept before there was a field per Acct-Session-Id.
  pin, pout = tonumber(g[3]), tonumber(g[4])
end
local din, dout = tin, tout
if pin then
  din, dout = tin - pin, tout - pout
  -- A NAS whose counters went backwards restarted them: count from zero.
  if din < 0 then din = tin end
  if dout < 0 then dout = tout end
end

local aid = g[2]
if ARGV[8] == 'start' or not aid then aid = ARGV[2] end
local current = aid == ARGV[2]

local bin = tonumber(g[5]) + din
local bout = tonumber(g[6]) + dout
local last = tonumber(g[9])
local fields = {'bin', bin, 'bout', bout}
if din + dout > 0 then
  last = now
  fields[#fields + 1] = 'last'
  fields[#fields + 1] = now
end
if current then
  fields[#fields + 1] = 'aid'; fields[#fields + 1] = aid
  fields[#fields + 1] = aidKey; fields[#fields + 1] = tin .. ' ' .. tout
  if ARGV[5] ~= '' then fields[#fields + 1] = 'ip'; fields[#fields + 1] = ARGV[5] end
  if ARGV[6] ~= '' then
    fields[#fields + 1] = 'ap'; fields[#fields + 1] = ARGV[6]
    local was = g[12] or ''
    if was ~= ARGV[6] then
      moveLive(KEYS[3], hs .. '|' .. ARGV[6], 1)
      if was ~= '' then moveLive(KEYS[3], hs .. '|' .. was, -1) end
    end
  end
  if ARGV[7] ~= '' then fields[#fields + 1] = 'signal'; fields[#fields + 1] = ARGV[7] end
else
  -- Kept after its Stop too: a retransmission of that Stop (a new Acct-Delay-Time) adds nothing.
  fields[#fields + 1] = aidKey; fields[#fields + 1] = tin .. ' ' .. tout
end
rcall('HSET', KEYS[1], unpack(fields))
if g[3] then rcall('HDEL', KEYS[1], 'ain', 'aout') end

local daily = rcall('INCRBY', KEYS[2], din + dout)
-- Only this script writes the counter, so a value equal to this delta means it was just made: its lifetime is set
-- then, not on every Interim (an existing counter at 0 gets it again, harmlessly).
if daily == din + dout then rcall('EXPIRE', KEYS[2], 172800) end

local flag = current and 1 or 0
local kind = 'ok'
local squota = tonumber(g[8]) or 0
local quota = tonumber(g[7]) or 0
if squota > 0 and bin + bout >= squota * MB then
  kind = 'session_quota'
elseif quota > 0 and daily >= quota * MB then
  kind = 'daily_quota'
end
return {kind, sid, bin, bout, daily, last, flag, din, dout}
