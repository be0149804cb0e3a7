--[[
  Fragment (included by scripts.ts at load time): one Accounting-Request
  (Start, Interim-Update or Stop) recorded against a live session, its
  quotas checked; account-session-3.lua runs it for one report,
  account-sessions-n.lua for each of a batch (engine/sessions/
  account-batcher.ts). Includes "activity" (moveLive); the including script
  declares `local rcall = redis.call` before its includes.

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
  (engine/events/activity-tally.ts).

  Every call costs a handful of commands (HMGET, HSET, INCRBY, and EXPIRE
  only when the daily counter is new). Grant fields: engine/redis/records.ts (GRANT).

  accountReport(gkey, dkey, lapkey, now_, aid_, in_, out_, ip_, ap_, signal_, status_)
    gkey    session (grant) hash   {t:T}:g:<hotspot>:<mac>
    dkey    daily usage counter    {t:T}:dq:<mac>:<yyyymmdd, hotspot local day>
    lapkey  live per AP hash       {t:T}:lap
    now_ ms; aid_ Acct-Session-Id; in_/out_ its totals (guest download/upload);
    ip_, ap_, signal_ ('' unknown); status_ start, interim or stop.
  Returns, with current = 1 when aid_ is the session's current Acct-Session-Id,
  and delta_in, delta_out the bytes this request added (0 for a retransmit)
    {'none'}                                                    no live session for this device
    {'ok', sid, bytes_in, bytes_out, daily_bytes, last_activity_ms, current, delta_in, delta_out}
    {'session_quota', ...the same}
    {'daily_quota', ...the same}
]]
--- @include "activity"
local MB = 1048576

local function accountReport(gkey, dkey, lapkey, now_, aid_, in_, out_, ip_, ap_, signal_, status_)
  local aidKey = 'a:' .. aid_
  local g = rcall('HMGET', gkey, 'sid', 'aid', 'ain', 'aout', 'bin', 'bout', 'quota', 'squota', 'last', aidKey, 'hs', 'ap')
  local sid = g[1]
  if not sid then
    return {'none'}
  end
  local hs = g[11] or ''
  local now = tonumber(now_)
  local tin = tonumber(in_)
  local tout = tonumber(out_)
  local pin, pout
  if g[10] then
    local sp = string.find(g[10], ' ', 1, true)
    pin, pout = tonumber(string.sub(g[10], 1, sp - 1)), tonumber(string.sub(g[10], sp + 1))
  elseif g[2] == aid_ and g[3] then
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

  local bin = tonumber(g[5]) + din
  local bout = tonumber(g[6]) + dout
  -- The first write: a report that fails (a counter that is not an integer, a corrupt field read above)
  -- fails before it has written anything, so the NAS's retransmission, once it succeeds, counts its bytes.
  local daily = rcall('INCRBY', dkey, din + dout)
  -- Only this script writes the counter, so a value equal to this delta means it was just made: its lifetime is set
  -- then, not on every Interim (an existing counter at 0 gets it again, harmlessly).
  if daily == din + dout then rcall('EXPIRE', dkey, 172800) end

  local aid = g[2]
  if status_ == 'start' or not aid then aid = aid_ end
  local current = aid == aid_

  local last = tonumber(g[9])
  local movedFrom = nil
  local fields = {'bin', bin, 'bout', bout}
  -- The NAS's totals and the time kept as they came, text: Redis's Lua turns a number into text
  -- with printf's "%.14g", about 1 µs each (bench/results/accounting.md).
  local totals = in_ .. ' ' .. out_
  if din + dout > 0 then
    last = now
    fields[#fields + 1] = 'last'
    fields[#fields + 1] = now_
  end
  if current then
    fields[#fields + 1] = 'aid'; fields[#fields + 1] = aid
    fields[#fields + 1] = aidKey; fields[#fields + 1] = totals
    if ip_ ~= '' then fields[#fields + 1] = 'ip'; fields[#fields + 1] = ip_ end
    if ap_ ~= '' then
      fields[#fields + 1] = 'ap'; fields[#fields + 1] = ap_
      local was = g[12] or ''
      if was ~= ap_ then movedFrom = was end
    end
    if signal_ ~= '' then fields[#fields + 1] = 'signal'; fields[#fields + 1] = signal_ end
  else
    -- Kept after its Stop too: a retransmission of that Stop (a new Acct-Delay-Time) adds nothing.
    fields[#fields + 1] = aidKey; fields[#fields + 1] = totals
  end
  rcall('HSET', gkey, unpack(fields))
  if g[3] then rcall('HDEL', gkey, 'ain', 'aout') end
  -- Last, and unable to fail the report: once the daily counter has been raised, a failure would leave it raised
  -- with the totals above unsaved, so every retransmission would count the same bytes again. The live-per-AP
  -- count is a display figure; a corrupt hash there costs the dashboard that figure, never a guest a false quota.
  if movedFrom then
    pcall(moveLive, lapkey, hs .. '|' .. ap_, 1)
    if movedFrom ~= '' then pcall(moveLive, lapkey, hs .. '|' .. movedFrom, -1) end
  end

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
end
