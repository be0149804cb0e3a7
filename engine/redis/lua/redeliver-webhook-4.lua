--[[
  Queues a kept delivery (dead, delivered, or still owed) to be sent again
  now, with a fresh budget of attempts and the same delivery id. One being
  sent at this moment is left to its sender.

  KEYS[1] queue zset         {t:T}:wh:q
  KEYS[2] deliveries hash    {t:T}:wh:d
  KEYS[3] done zset          {t:T}:wh:done
  KEYS[4] dead zset          {t:T}:wh:dead

  ARGV[1] delivery id
  ARGV[2] the subscription it must belong to
  ARGV[3] now, ms

  Returns 0 no such delivery (of that subscription), 1 queued, 2 being sent now.
]]
local rcall = redis.call
local raw = rcall('HGET', KEYS[2], ARGV[1])
if not raw then return 0 end
local st = cjson.decode(raw)
if st.s ~= ARGV[2] then return 0 end
if st.k then return 2 end
st.st = 'pending'
st.n = 0
rcall('HSET', KEYS[2], ARGV[1], cjson.encode(st))
rcall('ZREM', KEYS[3], ARGV[1])
rcall('ZREM', KEYS[4], ARGV[1])
rcall('ZADD', KEYS[1], tonumber(ARGV[3]), ARGV[1])
return 1
