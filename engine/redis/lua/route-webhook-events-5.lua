--[[
  Moves the tenant's new domain events into owed webhook deliveries, one per
  event and subscription that names its type, and advances the webhook
  consumer group past them, in one step. Read with NOACK: nothing is left
  pending, because the read, the deliveries and the cursor's move are one
  atomic script; a process that dies before or after it leaves the events
  either all unread or all routed. An event older than a subscription (its
  id's time before the subscription's creation) is not owed to it.

  A delivery's id is derived from the event and the subscription
  ("dlv_<event id>_<subscription suffix>"), so it is the same on every
  attempt (X-Webhook-Id, webhook-id).

  The caller may claim what it routes in the same step (ARGV[4] > 0): the
  first ARGV[4] new deliveries are written already claimed, as
  claim-webhook-deliveries-6.lua would have claimed them a round trip later
  (attempt 1 counted, the claim's token, due when the lease ends), and
  returned with their state and data. A claim of its own would read back
  every state and body just written and write them again: at a few thousand
  deliveries a second that was a third of a delivery's Redis time
  (bench/results/webhooks.md). Only when nothing else is due: an older due
  delivery (a retry, one given back) goes first, through the claim script.

  The deliveries of a call are written with one HSET per hash and one ZADD
  (many fields each), not three commands per delivery: a command run from
  Lua costs Redis about as much as the field it writes, so at a few thousand
  deliveries a second the per-delivery commands were most of routing's cost.

  KEYS[1] events stream        {t:T}:ev
  KEYS[2] subscriptions hash   {t:T}:wh:subs     id -> "<created ms> <type,...>"
  KEYS[3] queue zset           {t:T}:wh:q        delivery id -> due ms
  KEYS[4] deliveries hash      {t:T}:wh:d        delivery id -> JSON state
  KEYS[5] bodies hash          {t:T}:wh:b        delivery id -> the event's data JSON

  ARGV[1] consumer group name
  ARGV[2] at most this many events
  ARGV[3] now, ms
  ARGV[4] claim at most this many of the new deliveries (0: none)
  ARGV[5] the claim's lease, ms
  ARGV[6] the claim's token: the same call again (a resend after its answer was
          lost) reads no events and gets back what it claimed, {0, 0, due, ...}
          (includes/claim-memory.lua)

  Returns {events read, deliveries made, 1 if a delivery is due unclaimed
  after the call else 0, then per claimed delivery: id, state JSON, data
  JSON}. A missing group (the server lost it) is made again at the
  stream's end, and {0, 0, due} returned.
]]
local rcall = redis.call
--- @include "many-fields"
--- @include "claim-memory"
local now = tonumber(ARGV[3])
local function dueLeft()
  return #rcall('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1)
end
-- The same call again (its answer lost): no events read, what it claimed given back.
if ARGV[6] ~= '' then
  local recalled = recallClaim(KEYS[3], KEYS[4], KEYS[5], tostring(now + (tonumber(ARGV[5]) or 0)), ARGV[6])
  if recalled then
    local out = { 0, 0, dueLeft() }
    for i = 1, #recalled do out[#out + 1] = recalled[i] end
    return out
  end
end
local subs = rcall('HGETALL', KEYS[2])
if #subs == 0 then return { 0, 0, dueLeft() } end
local list = {}
for i = 1, #subs, 2 do
  local v = subs[i + 1]
  local sp = string.find(v, ' ', 1, true)
  if sp then
    local wanted = {}
    for t in string.gmatch(string.sub(v, sp + 1), '[^,]+') do wanted[t] = true end
    list[#list + 1] = { id = subs[i], suffix = string.sub(subs[i], 5), created = tonumber(string.sub(v, 1, sp - 1)), wanted = wanted }
  end
end

local r = redis.pcall('XREADGROUP', 'GROUP', ARGV[1], 'route', 'COUNT', tonumber(ARGV[2]), 'NOACK', 'STREAMS', KEYS[1], '>')
if type(r) == 'table' and r.err then
  if string.find(r.err, 'NOGROUP', 1, true) then
    redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '$', 'MKSTREAM')
    return { 0, 0, dueLeft() }
  end
  return redis.error_reply(r.err)
end
if not r then return { 0, 0, dueLeft() } end

local entries = r[1][2]
-- Claimed here only while nothing older is due (its order kept), and only as many as asked.
local dueBefore = dueLeft()
local claimLeft = dueBefore > 0 and 0 or (tonumber(ARGV[4]) or 0)
-- Scores as text, made once: Redis's Lua formats a number given to a command with printf, per use.
local leaseEnd, token = tostring(now + (tonumber(ARGV[5]) or 0)), ARGV[6]
local out = { #entries, 0, 0 }
local states, bodies, due = {}, {}, {}
for _, e in ipairs(entries) do
  local id, f = e[1], e[2]
  local etype, ts, data = '', 0, '{}'
  for j = 1, #f, 2 do
    local k = f[j]
    if k == 'type' then etype = f[j + 1]
    elseif k == 'ts' then ts = tonumber(f[j + 1]) or 0
    elseif k == 'data' then data = f[j + 1] end
  end
  local ms = tonumber(string.sub(id, 1, string.find(id, '-', 1, true) - 1))
  for _, s in ipairs(list) do
    if s.wanted[etype] and ms >= s.created then
      local did = 'dlv_' .. id .. '_' .. s.suffix
      local raw, score
      if claimLeft > 0 then
        claimLeft = claimLeft - 1
        raw = cjson.encode({ s = s.id, e = id, t = etype, ts = ts, n = 1, st = 'pending', k = token })
        score = leaseEnd
        out[#out + 1] = did
        out[#out + 1] = raw
        out[#out + 1] = data
      else
        raw = cjson.encode({ s = s.id, e = id, t = etype, ts = ts, n = 0, st = 'pending' })
        score = ARGV[3]
      end
      local n = #states
      states[n + 1] = did
      states[n + 2] = raw
      bodies[n + 1] = did
      bodies[n + 2] = data
      due[n + 1] = score
      due[n + 2] = did
    end
  end
end
many('HSET', KEYS[4], states)
many('HSET', KEYS[5], bodies)
many('ZADD', KEYS[3], due)
out[2] = #states / 2
-- Due and unclaimed now: what was due before, or new deliveries beyond the claim.
out[3] = (dueBefore > 0 or out[2] > (#out - 3) / 3) and 1 or 0
return out
