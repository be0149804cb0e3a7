--[[
  Queues an operator change's audit record on the tenant's outbox and clears
  the change's intent, in one step: the intent is never gone without its
  record queued (engine/audit/audit-log.ts, docs/audit-chain.md).

  KEYS[1] outbox stream     {t:T}:outbox
  KEYS[2] intents hash      {t:T}:audit:intents

  ARGV[1] record id (the intent's field)
  ARGV[2] '1': queue only while the intent is still there (a recovery: another process may
          have committed or recovered it already); '0': queue whatever (the change's own commit)
  ARGV[3] event   ARGV[4] at (ms)   ARGV[5] by   ARGV[6] hotspot id or ''   ARGV[7] MAC or ''
  ARGV[8] details (JSON)

  Returns 1 when the record was queued, 0 when ARGV[2] is '1' and the intent was gone.
]]
local rcall = redis.call

if ARGV[2] == '1' and rcall('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  return 0
end
-- A field pair per value, as every outbox record (engine/store/outbox-record.ts).
rcall('XADD', KEYS[1], '*', 'type', 'audit', 'rid', ARGV[1], 'event', ARGV[3], 'at', ARGV[4], 'by', ARGV[5],
  'hs', ARGV[6], 'mac', ARGV[7], 'details', ARGV[8])
rcall('HDEL', KEYS[2], ARGV[1])
return 1
