--[[
  Claims the tenant's owed deliveries that are due, for one process to send.
  A claimed delivery is not removed: its score moves `lease` ms ahead and
  its state takes the claim's token and counts the attempt, so exactly one
  sender (of any process) has it now, and if that process dies before it
  settles (settle-webhook-deliveries-n.lua), the delivery is due again when
  the lease has passed: owed deliveries survive kill -9. A delivery whose
  subscription is no longer active (deleted, or disabled by a 410) is
  dropped here, not sent. Also forgets up to FORGET finished deliveries
  whose keeping time is over. Every poll claims (WEBHOOK_POLL_MS, 100 ms by
  default), and under load the route claims most deliveries, so the polls
  may be the only claims: at 1,000 a call a process forgets up to 10,000 a
  second per tenant, more than it can deliver.

  Every delivery of the call is read with one HMGET per hash and written
  with one HSET and one ZADD (many fields each), and the subscriptions are
  looked up once per call, not once per delivery: the claim's cost is a few
  commands per call, not five per delivery.

  KEYS[1] queue zset         {t:T}:wh:q      delivery id -> due ms
  KEYS[2] deliveries hash    {t:T}:wh:d      delivery id -> JSON state
  KEYS[3] bodies hash        {t:T}:wh:b      delivery id -> data JSON
  KEYS[4] done zset          {t:T}:wh:done   delivery id -> forget at ms
  KEYS[5] dead zset          {t:T}:wh:dead   delivery id -> died at ms
  KEYS[6] subscriptions hash {t:T}:wh:subs   the active subscriptions

  ARGV[1] now, ms
  ARGV[2] lease, ms (longer than an attempt's deadline)
  ARGV[3] at most this many
  ARGV[4] the claim's token (random, this call's): the same call again (a resend
          after its answer was lost) gets back what it claimed (includes/claim-memory.lua)
  ARGV[5] attempts in all (3): a delivery whose last attempt's claim lapsed
          unsettled (its process died mid-attempt) is dead, not sent again
  ARGV[6] keep a dead one this long, ms

  Returns a flat list: delivery id, state JSON (with the attempt counted), data JSON, ...
]]
local rcall = redis.call
local now = tonumber(ARGV[1])

--- @include "write-deliveries"
--- @include "claim-memory"

-- The same call again (its answer lost): what it claimed, nothing more.
local recalled = recallClaim(KEYS[1], KEYS[2], KEYS[3], tostring(now + tonumber(ARGV[2])), ARGV[4])
if recalled then return recalled end

local FORGET = 1000
local forget = rcall('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, FORGET)
many('HDEL', KEYS[2], forget)
many('HDEL', KEYS[3], forget)
many('ZREM', KEYS[5], forget)
many('ZREM', KEYS[4], forget)

local ids = rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
if #ids == 0 then return {} end
local raws = rcall('HMGET', KEYS[2], unpack(ids))
local datas = rcall('HMGET', KEYS[3], unpack(ids))

-- The distinct subscriptions of these deliveries, and which are still active (HMGET: false when gone).
local states, subs, seen = {}, {}, {}
for i = 1, #ids do
  local raw = raws[i]
  if raw then
    local st = cjson.decode(raw)
    states[i] = st
    if not seen[st.s] then
      seen[st.s] = true
      subs[#subs + 1] = st.s
    end
  end
end
local active = {}
if #subs > 0 then
  local v = rcall('HMGET', KEYS[6], unpack(subs))
  for j = 1, #subs do active[subs[j]] = v[j] ~= false end
end

local token, attempts = ARGV[4], tonumber(ARGV[5])
-- Scores as text, made once: Redis's Lua formats a number given to a command with printf, per use.
local leaseEnd, forgetDead = tostring(now + tonumber(ARGV[2])), tostring(now + tonumber(ARGV[6]))
local out, dropped, ended, written, due, dead, done = {}, {}, {}, {}, {}, {}, {}
for i = 1, #ids do
  local id, st = ids[i], states[i]
  if not st or not active[st.s] then
    dropped[#dropped + 1] = id
  elseif (st.n or 0) >= attempts then
    st.k = nil
    st.st = 'dead'
    st.err = 'the last attempt was not settled (its process stopped)'
    st.at = now
    written[#written + 1] = id
    written[#written + 1] = cjson.encode(st)
    ended[#ended + 1] = id
    dead[#dead + 1] = ARGV[1]
    dead[#dead + 1] = id
    done[#done + 1] = forgetDead
    done[#done + 1] = id
  else
    st.n = (st.n or 0) + 1
    st.k = token
    local raw = cjson.encode(st)
    written[#written + 1] = id
    written[#written + 1] = raw
    due[#due + 1] = leaseEnd
    due[#due + 1] = id
    out[#out + 1] = id
    out[#out + 1] = raw
    out[#out + 1] = datas[i] or '{}'
  end
end
writeDeliveries({ gone = dropped, unqueued = ended, written = written, due = due, dead = dead, done = done })
return out
