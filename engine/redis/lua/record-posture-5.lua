--[[
  Records a device's posture verdict: its latest verdict, the per-verdict
  device counts, the fail/drift activity counter and the posture.verdict
  event, in one step, so the counts always sum to the devices recorded and
  no reader sees a verdict without its event.

  Records: engine/redis/records.ts (ACTIVITY.postureFail, perSite);
  event fields: engine/events/types.ts (EVENT_FIELD).

  KEYS[1] latest verdict per device (hash)  {t:T}:pos       MAC -> "<verdict> <ms> <hotspot or ''>"
  KEYS[2] devices per verdict (hash)         {t:T}:pos:n     verdict -> count
  KEYS[3] activity of this minute (hash)     {t:T}:am:<minute>
  KEYS[4] activity of this hour (hash)       {t:T}:ah:<hour>
  KEYS[5] the tenant's event stream          {t:T}:ev

  ARGV[1] MAC (canonical)
  ARGV[2] verdict: pass, fail or drift
  ARGV[3] now, ms
  ARGV[4] hotspot id ('' none)
  ARGV[5] minute bucket TTL, s
  ARGV[6] hour bucket TTL, s
  ARGV[7] unused (0): the events stream is trimmed by engine/events/event-trimmer.ts only
  ARGV[8] reason ('' none)

  Returns the device's previous verdict ('' when it had none).
]]
local rcall = redis.call
local mac, verdict, now, hotspot = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local before = rcall('HGET', KEYS[1], mac)
local previous = ''
if before then
  previous = string.match(before, '^(%S+)') or ''
end
rcall('HSET', KEYS[1], mac, verdict .. ' ' .. now .. ' ' .. hotspot)

if previous ~= verdict then
  if previous ~= '' then
    -- Never below zero, and no field left at zero: the counts are what HGETALL shows.
    if rcall('HINCRBY', KEYS[2], previous, -1) <= 0 then
      rcall('HDEL', KEYS[2], previous)
    end
  end
  rcall('HINCRBY', KEYS[2], verdict, 1)
end

if verdict == 'fail' or verdict == 'drift' then
  for i, ttl in ipairs({ ARGV[5], ARGV[6] }) do
    local bucket = KEYS[2 + i]
    rcall('HINCRBY', bucket, 'pfail', 1)
    if hotspot ~= '' then
      rcall('HINCRBY', bucket, 'pfail@' .. hotspot, 1)
    end
    rcall('EXPIRE', bucket, ttl)
  end
end

local data = { mac = mac, verdict = verdict, previous = previous, hotspot_id = hotspot, reason = ARGV[8] }
rcall('XADD', KEYS[5], '*',
  'type', 'posture.verdict', 'ts', now, 'site', hotspot, 'data', cjson.encode(data))
return previous
