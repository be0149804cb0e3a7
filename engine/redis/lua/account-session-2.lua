--[[
  Records one Accounting-Request (Start, Interim-Update or Stop) against a
  live session and checks its quotas, atomically.

  The NAS reports running totals per Acct-Session-Id. We keep the last totals
  seen and add only the difference, so a retransmit (same totals, another
  Acct-Delay-Time) counts nothing, and a new Acct-Session-Id for the same
  device (a reconnect) starts from its own zero without resetting anything.
  The daily counter is per device and tenant, across all its sessions, so
  reconnecting never resets a daily quota.

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] daily usage counter    {t:T}:dq:<mac>:<yyyymmdd, hotspot local day>

  ARGV[1] now, ms
  ARGV[2] Acct-Session-Id
  ARGV[3] input octets, total for this Acct-Session-Id (guest download)
  ARGV[4] output octets, total (guest upload)
  ARGV[5] framed IP ('' unknown)
  ARGV[6] AP name ('' unknown)
  ARGV[7] signal dBm ('' unknown)

  Returns
    {'none'}                                          no live session for this device
    {'ok', sid, bytes_in, bytes_out, daily_bytes, last_activity_ms}
    {'session_quota', sid, bytes_in, bytes_out, daily_bytes}
    {'daily_quota', sid, bytes_in, bytes_out, daily_bytes}
]]
local rcall = redis.call
local MB = 1048576

local g = rcall('HMGET', KEYS[1], 'sid', 'aid', 'ain', 'aout', 'bin', 'bout', 'quota', 'squota', 'last')
local sid = g[1]
if not sid then
  return {'none'}
end
local now = tonumber(ARGV[1])
local tin = tonumber(ARGV[3])
local tout = tonumber(ARGV[4])
local din, dout
if g[2] ~= ARGV[2] then
  din, dout = tin, tout
else
  din = tin - tonumber(g[3])
  dout = tout - tonumber(g[4])
  -- A NAS whose counters went backwards restarted them: count from zero.
  if din < 0 then din = tin end
  if dout < 0 then dout = tout end
end

local bin = tonumber(g[5]) + din
local bout = tonumber(g[6]) + dout
local last = tonumber(g[9])
local fields = {'aid', ARGV[2], 'ain', tin, 'aout', tout, 'bin', bin, 'bout', bout}
if din + dout > 0 then
  last = now
  fields[#fields + 1] = 'last'
  fields[#fields + 1] = now
end
if ARGV[5] ~= '' then fields[#fields + 1] = 'ip'; fields[#fields + 1] = ARGV[5] end
if ARGV[6] ~= '' then fields[#fields + 1] = 'ap'; fields[#fields + 1] = ARGV[6] end
if ARGV[7] ~= '' then fields[#fields + 1] = 'signal'; fields[#fields + 1] = ARGV[7] end
rcall('HSET', KEYS[1], unpack(fields))

local daily = rcall('INCRBY', KEYS[2], din + dout)
rcall('EXPIRE', KEYS[2], 172800)

local squota = tonumber(g[8]) or 0
if squota > 0 and bin + bout >= squota * MB then
  return {'session_quota', sid, bin, bout, daily}
end
local quota = tonumber(g[7]) or 0
if quota > 0 and daily >= quota * MB then
  return {'daily_quota', sid, bin, bout, daily}
end
return {'ok', sid, bin, bout, daily, last}
