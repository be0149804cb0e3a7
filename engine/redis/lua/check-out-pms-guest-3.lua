--[[
  Checks a reservation out of the in-house list and hands back its sessions
  to end, in one step with attach-pms-session-2.lua (a sign-in racing the
  check-out either attaches first and is ended here, or finds the guest gone).

  KEYS[1] in-house guests of the hotel, reservation -> JSON  {t:T}:pms:g:<hotspot>
  KEYS[2] the room's reservations (set)                      {t:T}:pms:r:<hotspot>:<room>
  KEYS[3] the reservation's sessions (set of session ids)    {t:T}:pms:s:<hotspot>:<reservation>

  ARGV[1] reservation
  ARGV[2] the room the caller read for it (the field "rn" of its JSON)

  Returns
    {'gone'}                       not in house
    {'moved'}                      its room is no longer ARGV[2]: read again and retry
    {'out', sid1, sid2, ...}       removed; its sessions' ids (set deleted)
]]
local rcall = redis.call
local g = rcall('HGET', KEYS[1], ARGV[1])
if not g then
  return {'gone'}
end
if cjson.decode(g).rn ~= ARGV[2] then
  return {'moved'}
end
rcall('HDEL', KEYS[1], ARGV[1])
rcall('SREM', KEYS[2], ARGV[1])
local out = {'out'}
for _, sid in ipairs(rcall('SMEMBERS', KEYS[3])) do
  out[#out + 1] = sid
end
rcall('DEL', KEYS[3])
return out
