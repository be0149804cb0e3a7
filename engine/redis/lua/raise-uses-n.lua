--[[
  Raises the use counters of a batch of one tenant's vouchers in Redis to at
  least the counts Postgres holds, after the outbox sink stored their uses.
  Redis is normally ahead; this only acts when Redis fell behind (a restart
  that lost its last writes, reloaded from a Postgres the sink had not yet
  brought up to date), and it never lowers a counter. One call per tenant
  and batch, not one per voucher: a batch of single-use vouchers' starts
  holds as many vouchers as records, and the sink's client and Redis paid a
  script call per verify (bench/results/portal-verify.md). Every key carries
  the tenant's hash tag: single-slot.

  The key count is the caller's (numberOfKeys null).
  KEYS[i]   voucher i's hash   {t:T}:v:<code>

  ARGV[2i-1] voucher i's id (a code now held by another voucher is left alone)
  ARGV[2i]   the uses Postgres counts for voucher i

  Returns how many counters were raised (0 normally)
]]
local rcall = redis.call

local raised = 0
for i = 1, #KEYS do
  local current = rcall('HMGET', KEYS[i], 'id', 'uses')
  local uses = tonumber(ARGV[2 * i])
  if current[1] == ARGV[2 * i - 1] and (tonumber(current[2]) or 0) < uses then
    rcall('HSET', KEYS[i], 'uses', ARGV[2 * i])
    raised = raised + 1
  end
end
return raised
