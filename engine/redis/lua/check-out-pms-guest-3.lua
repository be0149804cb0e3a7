--[[
  Checks a reservation out of the in-house list and hands back its sessions
  to end, in one step with attach-pms-session-2.lua (a sign-in racing the
  check-out either attaches first and is ended here, or finds the guest gone).

  KEYS[1] in-house guests of the hotel, reservation -> JSON  {t:T}:pms:g:<hotspot>
  KEYS[2] the room's reservations (set)                      {t:T}:pms:r:<hotspot>:<room>
  KEYS[3] the reservation's sessions (set of session ids)    {t:T}:pms:s:<hotspot>:<reservation>

  ARGV[1] reservation
  ARGV[2] the room the caller read for it (the field "rn" of its JSON; '' when
          the caller found the reservation gone: the room is read only for a
          guest in house)
  ARGV[3] how long the sessions' set is kept after the check-out, ms

  The sessions' set outlives the check-out by ARGV[3], and a reservation no
  longer in house whose set is still there answers 'out' with its sessions
  again: the same check-out sent again (ioredis resends a command whose
  answer a dropped connection lost; the PMS repeats a GO the link did not
  confirm) ends them, rather than 'gone' leaving them online. Ending a
  session that has ended already changes nothing. No sign-in adds to the
  set meanwhile (attach-pms-session-2.lua wants the guest in house).

  Returns
    {'gone'}                       not in house, and no sessions kept
    {'moved'}                      its room is no longer ARGV[2]: read again and retry
    {'out', sid1, sid2, ...}       removed (now, or within ARGV[3]); its sessions' ids
]]
local rcall = redis.call
local g = rcall('HGET', KEYS[1], ARGV[1])
if not g then
  local kept = rcall('SMEMBERS', KEYS[3])
  if #kept == 0 then return {'gone'} end
  return {'out', unpack(kept)}
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
rcall('PEXPIRE', KEYS[3], ARGV[3])
return out
