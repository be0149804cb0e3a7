--[[
  Records which NAS speaks for a live session, and the User-Name it uses for
  it (what a Disconnect or CoA must carry), only while the grant still holds
  that session. A plain HSET could re-create the hash of a session that ended
  a moment before (an Access-Request racing a disconnect) as a fragment with
  no session and no expiry.

  Grant fields: engine/redis/records.ts (GRANT).

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>

  ARGV[1] session id
  ARGV[2] NAS id
  ARGV[3] the NAS's User-Name for the session ('' unknown)

  Returns 1 when recorded, 0 when the grant no longer holds that session.
]]
local rcall = redis.call

if rcall('HGET', KEYS[1], 'sid') ~= ARGV[1] then
  return 0
end
rcall('HSET', KEYS[1], 'nas', ARGV[2], 'nuser', ARGV[3])
return 1
