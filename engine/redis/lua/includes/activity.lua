--[[
  Fragment (included by scripts.ts at load time): the domain event and the
  dashboard counters a session change writes, in the script that makes the
  change, so no reader ever sees the change without them (or them without
  the change). Event stream fields: engine/events/types.ts (EVENT_FIELD);
  counter fields: engine/redis/records.ts (ACTIVITY, perSite).

  Every key comes from the caller (KEYS): the bucket keys depend on `now`,
  which only the caller turns into a minute and an hour (engine/events/
  activity-keys.ts), so a script never builds a key (Redis Cluster).

  The table `k` the functions take: events (stream), minute and hour
  (activity buckets), devices, ssid, ap (live hashes). Scripts build it with
  activityKeys(firstIndex) from six consecutive KEYS in that order.

  emitEvent(k, type, ts, site, data)   XADD to the tenant's event stream
  countActivity(k, hs, f1, n1, ...)    HINCRBY each field tenant-wide and as
                                       <field>@<hs>, in both buckets
  countMinute(k, f1, n1, ...)          HINCRBY each field tenant-wide, in the
  countHour(k, f1, n1, ...)            minute (hour) bucket only: for a field
                                       read only there and not per hotspot (a
                                       session start: the live panel's connects
                                       per minute; an end: its disconnects per
                                       minute, its ends and durations of 24 h),
                                       one command where countActivity spends four
  moveLive(key, field, by)             HINCRBY a live count; never below 0,
                                       the field dropped at 0
]]

-- engine/redis/records.ts ACTIVITY_TTL (minute, hour): test/unit/activity-constants.test.ts holds them equal.
local ACTIVITY_TTL_MINUTE = 7320
local ACTIVITY_TTL_HOUR = 90600

local function activityKeys(first)
  return {events = KEYS[first], minute = KEYS[first + 1], hour = KEYS[first + 2],
    devices = KEYS[first + 3], ssid = KEYS[first + 4], ap = KEYS[first + 5]}
end

local function emitEvent(k, type, ts, site, data)
  -- No MAXLEN: the stream's one trimmer (engine/events/event-trimmer.ts) never drops what webhooks have not routed.
  rcall('XADD', k.events, '*',
    'type', type, 'ts', tostring(ts), 'site', site, 'data', cjson.encode(data))
end

-- The bucket's lifetime is set when a script creates one of its tenant-wide
-- fields, not on every write: a field that already existed means the bucket
-- did, and every writer (these scripts, the decision recorder's MULTI) sets the
-- lifetime in the same atomic step that creates a bucket. A bucket is written
-- only during its own minute or hour, so counted from its first write it still
-- outlives the widest window read from it (ACTIVITY_TTL); and accounting, the
-- most frequent writer, saves two commands a call.
local function countActivity(k, hs, ...)
  local f = {...}
  for b = 1, 2 do
    local key = b == 1 and k.minute or k.hour
    local created = false
    for i = 1, #f, 2 do
      if rcall('HINCRBY', key, f[i], f[i + 1]) == f[i + 1] then created = true end
      rcall('HINCRBY', key, f[i] .. '@' .. hs, f[i + 1])
    end
    if created then
      rcall('EXPIRE', key, b == 1 and ACTIVITY_TTL_MINUTE or ACTIVITY_TTL_HOUR)
    end
  end
end

-- One bucket, tenant-wide fields only; its lifetime set as countActivity sets it.
local function countIn(key, ttl, f)
  local created = false
  for i = 1, #f, 2 do
    -- An amount may come as text ('1'), which Redis takes without formatting a number.
    if rcall('HINCRBY', key, f[i], f[i + 1]) == tonumber(f[i + 1]) then created = true end
  end
  if created then rcall('EXPIRE', key, ttl) end
end

local function countMinute(k, ...)
  countIn(k.minute, ACTIVITY_TTL_MINUTE, {...})
end

local function countHour(k, ...)
  countIn(k.hour, ACTIVITY_TTL_HOUR, {...})
end

local function moveLive(key, field, by)
  if rcall('HINCRBY', key, field, by) <= 0 then
    rcall('HDEL', key, field)
  end
end
