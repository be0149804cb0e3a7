--[[
  Records a batch of Accounting-Requests of one tenant, in order, each as
  account-session-3.lua records one (includes/account-report.lua), in one
  round trip: the reports an actor thread gathered in one event-loop turn
  (engine/sessions/account-batcher.ts). Every key carries the tenant's hash
  tag, so the batch is single-slot. Each report is atomic on its own; the
  batch is one script, so no reader sees part of one report. Two reports of
  one device in a batch run in their order (the actor sends one device's
  reports one after another, so it never does).

  The key count is the caller's: 1 + 2 per report (numberOfKeys null).
  KEYS[1]         live per AP hash       {t:T}:lap
  KEYS[2i]        report i's session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2i+1]      report i's daily usage counter    {t:T}:dq:<mac>:<yyyymmdd>

  ARGV[8(i-1) + 1 ... 8i], eight per report i, as account-session-3.lua's ARGV:
                  now (ms), Acct-Session-Id, input octets, output octets,
                  framed IP, AP name, signal dBm, status (start, interim or stop)

  Returns one reply per report, in order, each what account-session-3.lua
  returns: {'none'} or {kind, sid, bytes_in, bytes_out, daily, last, current, delta_in, delta_out};
  or, for a report that raised an error (a Redis command refused, say a daily
  counter that is not an integer, or a Lua error on a corrupt field):
    {'failed', message}
  That report fails alone: the others of the batch run and are replied to as
  if it had not been there (each report's keys are its own but for the
  live-per-AP hash). A report's first write is its daily counter's INCRBY,
  after every read and sum, so a report failing there or before (a corrupt
  field) has written nothing, and its retransmission counts its bytes; and
  running a report again adds nothing twice (totals per Acct-Session-Id).
  An error reply for the whole call only when the KEYS and ARGV do not make
  whole reports.
]]
local rcall = redis.call
--- @include "account-report"

local n = (#KEYS - 1) / 2
if n < 1 or n ~= math.floor(n) or #ARGV ~= 8 * n then
  return redis.error_reply('ERR account-sessions-n: 1 + 2n KEYS and 8n ARGV expected')
end
local out = {}
for i = 1, n do
  local a = 8 * (i - 1)
  -- pcall: one bad report must not take the batch's other reports down with it (their NASes would all
  -- retransmit); a failed redis.call raises a table {err = message}, a Lua error a string.
  local ok, r = pcall(accountReport, KEYS[2 * i], KEYS[2 * i + 1], KEYS[1],
    ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], ARGV[a + 8])
  if ok then
    out[i] = r
  elseif type(r) == 'table' then
    out[i] = {'failed', tostring(r.err or r[1] or 'error')}
  else
    out[i] = {'failed', tostring(r)}
  end
end
return out
