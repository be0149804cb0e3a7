--[[
  Puts an active webhook subscription where the routing script sees it, and
  makes sure the tenant's events stream has the webhook consumer group. A
  group made here starts at the stream's end ('$'): events before the
  first subscription are nobody's. Postgres holds the subscription; this is
  its mirror for route-webhook-events-5.lua (engine/webhooks/webhook-store.ts).

  KEYS[1] subscriptions hash   {t:T}:wh:subs   id -> "<created ms> <type,type,...>"
  KEYS[2] events stream        {t:T}:ev

  ARGV[1] subscription id (whk_...)
  ARGV[2] the event types it wants, comma separated
  ARGV[3] consumer group name (keys.ts WEBHOOK_GROUP)

  The creation time is this server's clock (TIME), the clock of the stream's
  entry ids: every event added after this script is owed to the subscription.

  Returns 1 when the group was made now, 0 when it was there.
]]
local rcall = redis.call
local t = rcall('TIME')
rcall('HSET', KEYS[1], ARGV[1], (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) .. ' ' .. ARGV[2])
local made = redis.pcall('XGROUP', 'CREATE', KEYS[2], ARGV[3], '$', 'MKSTREAM')
if type(made) == 'table' and made.err then
  -- BUSYGROUP: the group is there already; anything else is a real failure.
  if string.find(made.err, 'BUSYGROUP', 1, true) then return 0 end
  return redis.error_reply(made.err)
end
return 1
