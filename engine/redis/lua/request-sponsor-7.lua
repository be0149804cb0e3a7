--[[
  Files a guest's request for a sponsor's approval: counts it against the
  request limits (per source address, per device, per sponsor address) and,
  when none is reached, writes the request pending with the hash of its
  link's token, the link itself (token hash -> request id, expiring with the
  link's request), the request in the tenant's recent list, and the jit.requested
  event, all in one step: two concurrent requests never both pass a limit
  that has room for one more, and no reader sees a request without its link
  or event. Fixed windows as in request-otp-7.lua (n, reset ms); 0 turns a
  limit off.

  KEYS[1] request hash     {t:T}:sp:r:<request id>
  KEYS[2] link             {t:T}:sp:l:<sha256 of the token>; kept as long as the
                           request, so a used or expired link is told apart from none
  KEYS[3] recent zset      {t:T}:sp:recent
  KEYS[4] source limit     {t:T}:sp:lim:ip:<source address> (the request's peer, a fact)
  KEYS[5] device limit     {t:T}:sp:lim:mac:<hotspot>/<mac> (a claim: never the only guard)
  KEYS[6] sponsor limit    {t:T}:sp:lim:sponsor:<sponsor address> (no one's inbox is flooded)
  KEYS[7] event stream     {t:T}:ev

  ARGV[1]  now, ms
  ARGV[2]  request id
  ARGV[3]  sha256 of the link's token (hex)
  ARGV[4]  link lifetime, ms
  ARGV[5]  how long the request is kept for the console, ms (> ARGV[4])
  ARGV[6]  requests per source address per window (0: off)
  ARGV[7]  requests per device per window (0: off)
  ARGV[8]  requests per sponsor address per window (0: off)
  ARGV[9]  window of the limits, ms
  ARGV[10] hotspot id
  ARGV[11] MAC (canonical)
  ARGV[12] client IP ('' unknown)
  ARGV[13] SSID ('' unknown)
  ARGV[14] guest name
  ARGV[15] sponsor address
  ARGV[16] gateway parameters (query string, '' none), for the hand-back
  ARGV[17] language of the guest's page (tr, en)

  Returns
    {'ok'}
    {'limited', limit, retry_after_ms}   limit: ip | mac | sponsor; nothing counted
]]
local rcall = redis.call
--- @include "activity"
--- @include "fixed-window"

local now = tonumber(ARGV[1])

local span = tonumber(ARGV[9])
local checks = {
  {'ip', KEYS[4], tonumber(ARGV[6])},
  {'mac', KEYS[5], tonumber(ARGV[7])},
  {'sponsor', KEYS[6], tonumber(ARGV[8])},
}
for _, c in ipairs(checks) do
  local wait = windowWait(c[2], c[3], now)
  if wait > 0 then return {'limited', c[1], wait} end
end
for _, c in ipairs(checks) do windowCount(c[2], c[3], span, now) end

local ttl = tonumber(ARGV[4])
local keep = tonumber(ARGV[5])
local exp = now + ttl
rcall('HSET', KEYS[1], 'status', 'pending', 'at', now, 'exp', exp, 'th', ARGV[3],
  'hs', ARGV[10], 'mac', ARGV[11], 'ip', ARGV[12], 'ssid', ARGV[13], 'guest', ARGV[14], 'sponsor', ARGV[15],
  'gw', ARGV[16], 'lang', ARGV[17])
rcall('PEXPIRE', KEYS[1], keep)
rcall('SET', KEYS[2], ARGV[2], 'PX', keep)
rcall('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - keep)
rcall('ZADD', KEYS[3], now, ARGV[2])
rcall('PEXPIRE', KEYS[3], keep)
emitEvent({events = KEYS[7]}, 'jit.requested', now, ARGV[10], {request_id = ARGV[2], hotspot_id = ARGV[10],
  guest = ARGV[14], sponsor = ARGV[15], expires_ms = exp})
return {'ok'}
