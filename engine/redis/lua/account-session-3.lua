--[[
  Records one Accounting-Request (Start, Interim-Update or Stop) against a
  live session and checks its quotas, atomically: includes/account-report.lua
  says how (totals per Acct-Session-Id, the daily counter, the live-per-AP
  hash, the quota checks). A batch of reports goes through
  account-sessions-n.lua instead, which runs the same fragment for each.

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
--- @include "account-report"

return accountReport(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
