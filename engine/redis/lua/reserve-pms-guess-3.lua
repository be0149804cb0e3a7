--[[
  Room sign-in's guessing limits (engine/pms/pms-method.ts), checked and
  counted before the in-house list is read: an attempt takes a place in both
  sliding windows at once, so concurrent guesses cannot all slip under a
  limit. A room and surname that match give their place back
  (ZREM of ARGV[5] from both keys by the caller); only misses stay counted.

  KEYS[1] the device's room guesses at this hotspot  {t:T}:pms:gl:d:<hotspot>:<mac>
  KEYS[2] the source address's room guesses          {t:T}:pms:gl:a:<address>
  KEYS[3] refusals per hotspot, this window          {t:T}:gr:<window>  (read by the signin_guessing detector)

  ARGV[1] now, ms
  ARGV[2] window, ms
  ARGV[3] limit per device (0: off)
  ARGV[4] limit per address (0: off; 0 when the request has no source address)
  ARGV[5] member: unique per attempt
  ARGV[6] hotspot id
  ARGV[7] refusals hash TTL, ms

  Returns
    {'ok'}                                   counted; go on
    {'too_many_attempts', wait_ms, 'device'|'address'}   refused, nothing counted
]]
local rcall = redis.call
--- @include "guess-limit"

local now = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local perDevice = tonumber(ARGV[3])
local perAddress = tonumber(ARGV[4])

local wait = guessWait(KEYS[1], perDevice, now, windowMs)
local which = 'device'
if not wait then
  wait = guessWait(KEYS[2], perAddress, now, windowMs)
  which = 'address'
end
if wait then
  rcall('HINCRBY', KEYS[3], ARGV[6], 1)
  rcall('PEXPIRE', KEYS[3], ARGV[7])
  return {'too_many_attempts', wait, which}
end
countGuess(KEYS[1], perDevice, now, windowMs, ARGV[5])
countGuess(KEYS[2], perAddress, now, windowMs, ARGV[5])
return {'ok'}
