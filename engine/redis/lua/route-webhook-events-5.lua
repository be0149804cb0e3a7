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

  Returns {events read, deliveries made}. A missing group (the server lost
  it) is made again at the stream's end, and {0, 0} returned.
]]
local rcall = redis.call
--- @include "many-fields"
local subs = rcall('HGETALL', KEYS[2])
if #subs == 0 then return { 0, 0 } end
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
    return { 0, 0 }
  end
  return redis.error_reply(r.err)
end
if not r then return { 0, 0 } end

local entries = r[1][2]
local now = tonumber(ARGV[3])
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
      local n = #states
      states[n + 1] = did
      states[n + 2] = cjson.encode({ s = s.id, e = id, t = etype, ts = ts, n = 0, st = 'pending' })
      bodies[n + 1] = did
      bodies[n + 2] = data
      due[n + 1] = now
      due[n + 2] = did
    end
  end
end
many('HSET', KEYS[4], states)
many('HSET', KEYS[5], bodies)
many('ZADD', KEYS[3], due)
return { #entries, #states / 2 }
