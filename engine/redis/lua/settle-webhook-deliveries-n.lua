--[[
  Records the outcomes of several attempts of one tenant in one step, each
  only if the caller's claim still holds (its token is the delivery's): a
  claim whose lease passed and that another process took is not the caller's
  to settle. `delivered` takes a delivery off the queue in the same step as
  it is recorded, so a 2xx recorded here is never sent again. One call per
  tenant and turn of the dispatcher's event loop, not one per attempt: at a
  few thousand deliveries a second the per-call cost (the client's command,
  Redis's dispatch, a reply) was most of what settling cost. Within the call
  the states are read with one HMGET and written with one HSET, the queue
  and the done and dead sets with one ZADD or ZREM each (many fields per
  command): what is left per outcome is its attempt record (XADD).

  The key count is the caller's (ioredis passes numkeys first): 5 + one
  attempts stream per outcome. Every key is the tenant's ({t:T}, one slot).

  KEYS[1] queue zset         {t:T}:wh:q
  KEYS[2] deliveries hash    {t:T}:wh:d
  KEYS[3] bodies hash        {t:T}:wh:b
  KEYS[4] done zset          {t:T}:wh:done
  KEYS[5] dead zset          {t:T}:wh:dead
  KEYS[5 + i] attempts stream of outcome i's subscription   {t:T}:wh:att:<subscription>

  ARGV[1] now, ms
  ARGV[2] keep a delivered one this long, ms (redelivery, the list)
  ARGV[3] keep a dead one this long, ms
  ARGV[4] attempts stream MAXLEN (approximate)
  then per outcome i, 7 values from ARGV[5 + 7 (i - 1)]:
    delivery id, the claim's token,
    outcome: delivered | retry | dead
           | dropped (its subscription is gone: forgotten, no attempt recorded)
           | released (claimed but never sent, e.g. the process is stopping:
             due now again, its attempt not counted, nothing recorded),
    due ms (retry), the receiver's status code ('' none: no answer),
    the attempt's duration ms, error ('' none)

  Returns a list with one entry per outcome, in order: 1 settled, 0 the
  claim was no longer the caller's.
]]
local rcall = redis.call
local now = tonumber(ARGV[1])
-- Scores as text, made once: Redis's Lua formats a number given to a command with printf, per use.
local forgetDelivered, forgetDead = tostring(now + tonumber(ARGV[2])), tostring(now + tonumber(ARGV[3]))

--- @include "write-deliveries"

local count = math.floor((#ARGV - 4) / 7)
if count < 1 then return {} end
local ids = {}
for i = 1, count do ids[i] = ARGV[4 + 7 * (i - 1) + 1] end
local raws = rcall('HMGET', KEYS[2], unpack(ids))

-- Each delivery's state, decoded once. An id twice in one call is settled as
-- two calls in a row would: the first that holds the claim clears its token,
-- so a second outcome for it finds no claim (0).
local states = {}
local function state(i)
  local id = ids[i]
  local st = states[id]
  if st == nil then
    st = raws[i] and cjson.decode(raws[i]) or false
    states[id] = st
  end
  return st
end

local out, changed, gone, unqueued, due, done, dead = {}, {}, {}, {}, {}, {}, {}
for i = 1, count do
  local a = 4 + 7 * (i - 1)
  local id, outcome = ids[i], ARGV[a + 3]
  local st = state(i)
  if not st or st.k ~= ARGV[a + 2] then
    out[i] = 0
  elseif outcome == 'dropped' then
    states[id] = false
    gone[#gone + 1] = id
    out[i] = 1
  elseif outcome == 'released' then
    st.k = nil
    st.n = math.max(0, (st.n or 1) - 1)
    changed[#changed + 1] = id
    due[#due + 1] = ARGV[1]
    due[#due + 1] = id
    out[i] = 1
  else
    local status = outcome == 'delivered' and 'delivered' or (outcome == 'dead' and 'dead' or 'failed')
    rcall('XADD', KEYS[5 + i], 'MAXLEN', '~', ARGV[4], '*',
      'delivery', id, 'event', st.e, 'type', st.t, 'attempt', tostring(st.n), 'status', status,
      'code', ARGV[a + 5], 'duration_ms', ARGV[a + 6], 'error', ARGV[a + 7])
    st.k = nil
    st.c = ARGV[a + 5]
    st.d = tonumber(ARGV[a + 6])
    st.err = ARGV[a + 7]
    st.at = now
    if outcome == 'delivered' then
      st.st = 'delivered'
      unqueued[#unqueued + 1] = id
      done[#done + 1] = forgetDelivered
      done[#done + 1] = id
    elseif outcome == 'dead' then
      st.st = 'dead'
      unqueued[#unqueued + 1] = id
      dead[#dead + 1] = ARGV[1]
      dead[#dead + 1] = id
      done[#done + 1] = forgetDead
      done[#done + 1] = id
    else
      st.st = 'pending'
      due[#due + 1] = tonumber(ARGV[a + 4])
      due[#due + 1] = id
    end
    changed[#changed + 1] = id
    out[i] = 1
  end
end

-- At most one outcome per id holds its claim (see state()), so no id is both written and gone.
local written = {}
for _, id in ipairs(changed) do
  written[#written + 1] = id
  written[#written + 1] = cjson.encode(states[id])
end
writeDeliveries({ gone = gone, unqueued = unqueued, written = written, due = due, dead = dead, done = done })
return out
