--[[
  Fragment (included by scripts.ts at load time): fixed-window request
  limits, a hash per limited thing holding `n` (requests in the window) and
  `reset` (ms, when the window ends). Used by the code requests
  (request-otp-7.lua) and the sponsor requests (request-sponsor-7.lua).

  windowWait(key, max, now)
    0     the window has room (or max <= 0: the limit is off)
    ms    how long until it has room again
  windowCount(key, max, span, now)
    counts one request: a new window of `span` ms starts when the last one
    has ended. The hash expires a minute after its window. Nothing when the
    limit is off.

  A caller checks every limit first and counts only when all have room, so
  a refused request counts against none of them.
]]

local function windowWait(key, max, now)
  if max <= 0 then return 0 end
  local v = rcall('HMGET', key, 'n', 'reset')
  local reset = tonumber(v[2] or '0')
  if reset <= now then return 0 end
  if tonumber(v[1] or '0') >= max then return reset - now end
  return 0
end

local function windowCount(key, max, span, now)
  if max <= 0 then return end
  local reset = tonumber(rcall('HGET', key, 'reset') or '0')
  if reset <= now then
    reset = now + span
    rcall('HSET', key, 'n', 1, 'reset', reset)
  else
    rcall('HINCRBY', key, 'n', 1)
  end
  rcall('PEXPIRE', key, reset - now + 60000)
end
