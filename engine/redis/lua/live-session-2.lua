--[[
  A device's session as its actor takes it into memory: the grant hash, only
  while its session is in the hotspot's live set. One round trip where the
  actor asked twice (HGETALL, then ZSCORE of the id it read), before it could
  answer the device's first Access-Request.

  Grant fields: engine/redis/records.ts (GRANT).

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] hotspot live zset      {t:T}:live:<hotspot>

  Returns the hash as HGETALL does (field, value, ...), or an empty array
  when there is none or its session is not live.
]]
local sid = redis.call('HGET', KEYS[1], 'sid')
if not sid or not redis.call('ZSCORE', KEYS[2], sid) then
  return {}
end
return redis.call('HGETALL', KEYS[1])
