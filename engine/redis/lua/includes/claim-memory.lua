--[[
  Fragment (included by scripts.ts at load time): the same claim call again
  gets back what it claimed, instead of claiming more. ioredis resends a
  command whose answer a dropped connection lost (and a cluster failover
  retries one); without this, the deliveries the lost answer named waited
  for their lease with an attempt counted that was never sent, and one on
  its last attempt died unsent. Used by claim-webhook-deliveries-6.lua and
  route-webhook-events-5.lua.

  Nothing is written to remember a claim: a call's deliveries are scored
  leaseEnd (its `now` plus the lease, the same in a resend, which carries
  the same arguments) and carry its token, so they are found again by that
  score and kept by that token. A first call finds nothing of its token.

  recallClaim(queueKey, deliveriesKey, bodiesKey, leaseEnd, token)
    nil when this token holds nothing (the usual case: one ZRANGEBYSCORE);
    else the flat list id, state JSON, data JSON of what it holds.
]]

local function recallClaim(queueKey, deliveriesKey, bodiesKey, leaseEnd, token)
  local ids = rcall('ZRANGEBYSCORE', queueKey, leaseEnd, leaseEnd)
  if #ids == 0 then return nil end
  local raws = rcall('HMGET', deliveriesKey, unpack(ids))
  local mine, states = {}, {}
  for i = 1, #ids do
    if raws[i] and cjson.decode(raws[i]).k == token then
      mine[#mine + 1] = ids[i]
      states[#states + 1] = raws[i]
    end
  end
  if #mine == 0 then return nil end
  local datas = rcall('HMGET', bodiesKey, unpack(mine))
  local out = {}
  for i = 1, #mine do
    out[#out + 1] = mine[i]
    out[#out + 1] = states[i]
    out[#out + 1] = datas[i] or '{}'
  end
  return out
end
