--[[
  Checks a presented code against an identity's live code and consumes it
  on a match: the only place a code is used, so of any number of concurrent
  verifies (from any number of engine processes) exactly one can succeed.

  The code itself never reaches Redis: the service sends the keyed hash of
  the presented code (HMAC-SHA256, see otp-code.ts) and the script compares
  it with the stored one without an early exit, so the time taken does not
  show how much of it matched.

  KEYS[1] code hash   {t:T}:otp:c:<hotspot>:<identity>   h, tries, exp, rid, ch

  ARGV[1] now, ms (the service's clock)
  ARGV[2] keyed hash of the presented code (hex)
  ARGV[3] wrong tries that kill a code (5)

  Returns
    {'ok', channel, request_id}   consumed: the key is gone
    {'expired'}                   no live code: never sent, already used, or past its validity
    {'invalid', attempts_left}    wrong code, counted
    {'locked'}                    the code took its last wrong try (now or before); it stays
                                  dead until it expires or a new code replaces it
]]
local rcall = redis.call
local now = tonumber(ARGV[1])
local max = tonumber(ARGV[3])

local v = rcall('HMGET', KEYS[1], 'h', 'tries', 'exp', 'ch', 'rid')
if not v[1] then return {'expired'} end
if tonumber(v[3]) <= now then
  rcall('DEL', KEYS[1])
  return {'expired'}
end
local tries = tonumber(v[2])
if tries >= max then return {'locked'} end

local a, b = v[1], ARGV[2]
local diff = (#a == #b) and 0 or 1
for i = 1, math.min(#a, #b) do
  diff = bit.bor(diff, bit.bxor(string.byte(a, i), string.byte(b, i)))
end
if diff == 0 then
  rcall('DEL', KEYS[1])
  return {'ok', v[4], v[5]}
end
tries = rcall('HINCRBY', KEYS[1], 'tries', 1)
if tries >= max then return {'locked'} end
return {'invalid', max - tries}
