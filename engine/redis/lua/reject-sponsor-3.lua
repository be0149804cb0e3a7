--[[
  A sponsor's rejection: uses the link up by marking the request rejected
  in one step (a link is used at most once, whichever button wins, see
  approve-sponsor-15.lua), with the sponsor.rejected and jit.decided events.

  KEYS[1] link           {t:T}:sp:l:<sha256 of the token>
  KEYS[2] request hash   {t:T}:sp:r:<request id>
  KEYS[3] event stream   {t:T}:ev

  ARGV[1] now, ms
  ARGV[2] request id (the link must stand for it)
  ARGV[3] sha256 of the presented token (hex)
  ARGV[4] reason (sponsor_rejected)

  Returns
    {'ok', hotspot_id, mac}   the request is rejected
    {'unknown'}               no such link
    {'used'}                  the link was used already
    {'expired'}               past the link's lifetime
]]
local rcall = redis.call
--- @include "activity"

local now = tonumber(ARGV[1])
if rcall('GET', KEYS[1]) ~= ARGV[2] then return {'unknown'} end
local r = rcall('HMGET', KEYS[2], 'status', 'th', 'exp', 'mac', 'hs', 'guest', 'sponsor')
if not r[1] or r[2] ~= ARGV[3] then return {'unknown'} end
if r[1] ~= 'pending' then return {'used'} end
if tonumber(r[3]) <= now then return {'expired'} end
rcall('HSET', KEYS[2], 'status', 'rejected', 'decided', now, 'reason', ARGV[4])
local k = {events = KEYS[3]}
emitEvent(k, 'sponsor.rejected', now, r[5], {request_id = ARGV[2], hotspot_id = r[5], mac = r[4],
  sponsor_email = r[7], guest_name = r[6], reason = ARGV[4]})
emitEvent(k, 'jit.decided', now, r[5], {request_id = ARGV[2], decision = 'rejected'})
return {'ok', r[5], r[4]}
