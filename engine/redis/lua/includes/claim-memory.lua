--[[
  Fragment (included by scripts.ts at load time): what a claim took, kept
  for the claim's lease under a key named by its token, so the same call
  again is answered with it instead of claiming more. ioredis resends a
  command whose answer a dropped connection lost (and a cluster failover
  retries one); without this, the deliveries the lost answer named waited
  for their lease with an attempt counted that was never sent, and one on
  its last attempt died unsent. Used by claim-webhook-deliveries-7.lua and
  route-webhook-events-6.lua.

  recallClaim(memoryKey, token, deliveriesKey, bodiesKey)
    nil when this token claimed nothing yet (the usual case: one GET);
    else the flat list id, state JSON, data JSON of what it claimed that is
    still its own (its state carries the token: not settled, not re-claimed).
  rememberClaim(memoryKey, out, from, leaseMs)
    keeps the ids of the triples out[from], out[from + 3], ... (id, state,
    data) for leaseMs; nothing when there are none.
]]

local function recallClaim(memoryKey, token, deliveriesKey, bodiesKey)
  local kept = rcall('GET', memoryKey)
  if not kept then return nil end
  local ids = {}
  for id in string.gmatch(kept, '[^ ]+') do ids[#ids + 1] = id end
  local out = {}
  if #ids == 0 then return out end
  local raws = rcall('HMGET', deliveriesKey, unpack(ids))
  local datas = rcall('HMGET', bodiesKey, unpack(ids))
  for i = 1, #ids do
    local raw = raws[i]
    if raw and cjson.decode(raw).k == token then
      out[#out + 1] = ids[i]
      out[#out + 1] = raw
      out[#out + 1] = datas[i] or '{}'
    end
  end
  return out
end

local function rememberClaim(memoryKey, out, from, leaseMs)
  local ids = {}
  for i = from, #out, 3 do ids[#ids + 1] = out[i] end
  if #ids > 0 then rcall('SET', memoryKey, table.concat(ids, ' '), 'PX', leaseMs) end
end
