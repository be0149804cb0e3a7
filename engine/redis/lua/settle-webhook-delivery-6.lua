--[[
  Records one attempt's outcome, if the caller's claim still holds (its
  token is the delivery's): a claim whose lease passed and that another
  process took is not the caller's to settle. `delivered` takes the delivery
  off the queue in the same step as it is recorded, so a 2xx recorded here
  is never sent again.

  KEYS[1] queue zset         {t:T}:wh:q
  KEYS[2] deliveries hash    {t:T}:wh:d
  KEYS[3] bodies hash        {t:T}:wh:b
  KEYS[4] done zset          {t:T}:wh:done
  KEYS[5] dead zset          {t:T}:wh:dead
  KEYS[6] attempts stream    {t:T}:wh:att:<subscription>

  ARGV[1] delivery id
  ARGV[2] the claim's token
  ARGV[3] outcome: delivered | retry | dead | dropped (its subscription is gone: forgotten, no attempt recorded)
  ARGV[4] now, ms
  ARGV[5] due, ms (retry)
  ARGV[6] the receiver's status code ('' none: no answer)
  ARGV[7] the attempt's duration, ms
  ARGV[8] error ('' none)
  ARGV[9] keep a delivered one this long, ms (redelivery, the list)
  ARGV[10] keep a dead one this long, ms
  ARGV[11] attempts stream MAXLEN (approximate)

  Returns 1 when settled, 0 when the claim was no longer the caller's.
]]
local rcall = redis.call
local id, outcome, now = ARGV[1], ARGV[3], tonumber(ARGV[4])
local raw = rcall('HGET', KEYS[2], id)
if not raw then return 0 end
local st = cjson.decode(raw)
if st.k ~= ARGV[2] then return 0 end
if outcome == 'dropped' then
  rcall('HDEL', KEYS[2], id)
  rcall('HDEL', KEYS[3], id)
  rcall('ZREM', KEYS[1], id)
  return 1
end
local status = outcome == 'delivered' and 'delivered' or (outcome == 'dead' and 'dead' or 'failed')
rcall('XADD', KEYS[6], 'MAXLEN', '~', ARGV[11], '*',
  'delivery', id, 'event', st.e, 'type', st.t, 'attempt', tostring(st.n), 'status', status,
  'code', ARGV[6], 'duration_ms', ARGV[7], 'error', ARGV[8])
st.k = nil
st.c = ARGV[6]
st.d = tonumber(ARGV[7])
st.err = ARGV[8]
st.at = now
if outcome == 'delivered' then
  st.st = 'delivered'
  rcall('ZREM', KEYS[1], id)
  rcall('ZADD', KEYS[4], now + tonumber(ARGV[9]), id)
elseif outcome == 'dead' then
  st.st = 'dead'
  rcall('ZREM', KEYS[1], id)
  rcall('ZADD', KEYS[5], now, id)
  rcall('ZADD', KEYS[4], now + tonumber(ARGV[10]), id)
else
  st.st = 'pending'
  rcall('ZADD', KEYS[1], tonumber(ARGV[5]), id)
end
rcall('HSET', KEYS[2], id, cjson.encode(st))
return 1
