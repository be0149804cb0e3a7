--[[
  Records when NAS clients were last heard from (a batch of them, one
  tenant), and appends nas.online for each that had been silent longer than
  the limit, or was never heard from: a batch flushed by several processes
  at once announces a NAS coming back once, since the first write moves its
  time and the others then see it recent.

  Event fields: engine/events/types.ts (EVENT_FIELD).

  KEYS[1] last heard per NAS (hash)   {t:T}:nas:seen   NAS id -> ms
  KEYS[2] the tenant's event stream   {t:T}:ev

  ARGV[1] silence after which a packet means "back online", ms
  ARGV[2] unused (0): the events stream is trimmed by engine/events/event-trimmer.ts only
  ARGV[3..] triples: NAS id, its hotspot id, when its packet came (ms)

  Returns how many NAS clients came (back) online.
]]
local rcall = redis.call
local silentMs = tonumber(ARGV[1])
local online = 0

for i = 3, #ARGV, 3 do
  local nas, hotspot, at = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local before = tonumber(rcall('HGET', KEYS[1], nas))
  -- Only forward: a batch that waited behind a newer one must not move the time back.
  if before == nil or at > before then
    rcall('HSET', KEYS[1], nas, ARGV[i + 2])
    if before == nil or at - before > silentMs then
      online = online + 1
      local silentSec = cjson.null
      if before ~= nil then silentSec = math.floor((at - before) / 1000) end
      rcall('XADD', KEYS[2], '*', 'type', 'nas.online', 'ts', ARGV[i + 2], 'site', hotspot,
        'data', cjson.encode({ nas_id = nas, hotspot_id = hotspot, silent_sec = silentSec }))
    end
  end
end
return online
