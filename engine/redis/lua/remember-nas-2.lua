--[[
  Records what the NAS says of a live session: which NAS speaks for it, the
  User-Name it uses for it (what a Disconnect or CoA must carry) and, when the
  NAS names one (Called-Station-Id, RFC 3580 §3.20), the SSID the device is
  on: the network's word, which replaces whatever the portal was told. Only
  while the grant still holds that session. A plain HSET could re-create the
  hash of a session that ended a moment before (an Access-Request racing a
  disconnect) as a fragment with no session and no expiry.

  A new SSID moves the session in the live-per-SSID hash, as accounting moves
  it between access points (includes/activity.lua).

  Grant fields: engine/redis/records.ts (GRANT).

  KEYS[1] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[2] live per SSID hash     {t:T}:lss

  ARGV[1] session id
  ARGV[2] NAS id
  ARGV[3] the NAS's User-Name for the session ('' unknown)
  ARGV[4] the SSID the NAS names ('': none named, the grant's stays)

  Returns 1 when recorded, 0 when the grant no longer holds that session.
]]
local rcall = redis.call
--- @include "activity"

local g = rcall('HMGET', KEYS[1], 'sid', 'ssid', 'hs')
if g[1] ~= ARGV[1] then
  return 0
end
rcall('HSET', KEYS[1], 'nas', ARGV[2], 'nuser', ARGV[3])
local was = g[2] or ''
if ARGV[4] ~= '' and ARGV[4] ~= was then
  rcall('HSET', KEYS[1], 'ssid', ARGV[4])
  local hs = g[3] or ''
  moveLive(KEYS[2], hs .. '|' .. ARGV[4], 1)
  moveLive(KEYS[2], hs .. '|' .. was, -1)
end
return 1
