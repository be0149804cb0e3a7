--[[
  Claims the tenant's owed deliveries that are due, for one process to send.
  A claimed delivery is not removed: its score moves `lease` ms ahead and
  its state takes the claim's token and counts the attempt, so exactly one
  sender (of any process) has it now, and if that process dies before it
  settles (settle-webhook-delivery-6.lua), the delivery is due again when
  the lease has passed: owed deliveries survive kill -9. A delivery whose
  subscription is no longer active (deleted, or disabled by a 410) is
  dropped here, not sent. Also forgets a few finished deliveries whose
  keeping time is over.

  KEYS[1] queue zset         {t:T}:wh:q      delivery id -> due ms
  KEYS[2] deliveries hash    {t:T}:wh:d      delivery id -> JSON state
  KEYS[3] bodies hash        {t:T}:wh:b      delivery id -> data JSON
  KEYS[4] done zset          {t:T}:wh:done   delivery id -> forget at ms
  KEYS[5] dead zset          {t:T}:wh:dead   delivery id -> died at ms
  KEYS[6] subscriptions hash {t:T}:wh:subs   the active subscriptions

  ARGV[1] now, ms
  ARGV[2] lease, ms (longer than an attempt's deadline)
  ARGV[3] at most this many
  ARGV[4] the claim's token (random, this call's)
  ARGV[5] attempts in all (3): a delivery whose last attempt's claim lapsed
          unsettled (its process died mid-attempt) is dead, not sent again
  ARGV[6] keep a dead one this long, ms

  Returns a flat list: delivery id, state JSON (with the attempt counted), data JSON, ...
]]
local rcall = redis.call
local now = tonumber(ARGV[1])
for _, id in ipairs(rcall('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 100)) do
  rcall('HDEL', KEYS[2], id)
  rcall('HDEL', KEYS[3], id)
  rcall('ZREM', KEYS[5], id)
  rcall('ZREM', KEYS[4], id)
end
local out = {}
for _, id in ipairs(rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))) do
  local raw = rcall('HGET', KEYS[2], id)
  local st = raw and cjson.decode(raw)
  if not st or rcall('HEXISTS', KEYS[6], st.s) == 0 then
    rcall('ZREM', KEYS[1], id)
    rcall('HDEL', KEYS[2], id)
    rcall('HDEL', KEYS[3], id)
  elseif (st.n or 0) >= tonumber(ARGV[5]) then
    st.k = nil
    st.st = 'dead'
    st.err = 'the last attempt was not settled (its process stopped)'
    st.at = now
    rcall('HSET', KEYS[2], id, cjson.encode(st))
    rcall('ZREM', KEYS[1], id)
    rcall('ZADD', KEYS[5], now, id)
    rcall('ZADD', KEYS[4], now + tonumber(ARGV[6]), id)
  else
    st.n = (st.n or 0) + 1
    st.k = ARGV[4]
    raw = cjson.encode(st)
    rcall('HSET', KEYS[2], id, raw)
    rcall('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
    out[#out + 1] = id
    out[#out + 1] = raw
    out[#out + 1] = rcall('HGET', KEYS[3], id) or '{}'
  end
end
return out
