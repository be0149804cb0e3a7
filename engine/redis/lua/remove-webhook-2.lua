--[[
  Takes a subscription out of the routing script's view (deleted, or
  disabled by a 410). When the tenant has no subscription left, the webhook
  consumer group goes too: a group nobody advances would hold the events
  trimmer back for ever (engine/webhooks/event-trimmer.ts). Owed deliveries
  of the subscription stay queued; the dispatcher drops or dead-letters them
  when it claims them.

  KEYS[1] subscriptions hash   {t:T}:wh:subs
  KEYS[2] events stream        {t:T}:ev

  ARGV[1] subscription id
  ARGV[2] consumer group name

  Returns the number of subscriptions left.
]]
local rcall = redis.call
rcall('HDEL', KEYS[1], ARGV[1])
local left = rcall('HLEN', KEYS[1])
if left == 0 and rcall('EXISTS', KEYS[2]) == 1 then
  -- NOGROUP (never made, or gone) is fine: the point is that none remains.
  redis.pcall('XGROUP', 'DESTROY', KEYS[2], ARGV[2])
end
return left
