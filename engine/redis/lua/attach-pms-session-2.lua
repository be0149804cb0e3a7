--[[
  Ties a session that room sign-in just started to the reservation it
  matched, if and only if the reservation is still in house: a check-out
  that ran between the match and this step (check-out-pms-guest-3.lua) has
  removed it, and the caller then ends the session itself. Atomic with the
  check-out, so a session is either ended by the check-out or by its
  sign-in, never by neither.

  KEYS[1] in-house guests of the hotel, reservation -> JSON  {t:T}:pms:g:<hotspot>
  KEYS[2] the reservation's sessions (set of session ids)    {t:T}:pms:s:<hotspot>:<reservation>

  ARGV[1] reservation
  ARGV[2] session id

  Returns 1 attached, 0 the reservation is gone
]]
local rcall = redis.call
if rcall('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
rcall('SADD', KEYS[2], ARGV[2])
return 1
