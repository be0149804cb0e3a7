--[[
  Fragment (included by scripts.ts at load time): a sliding-window limit on
  guesses (unknown codes), kept as a sorted set of the guesses' times.

  guessWait(key, limit, now, windowMs)
    nil   fewer than `limit` guesses in the window (or limit <= 0: off): go on
    ms    how long until the window holds fewer than `limit` again: the
          moment the guess that brings it down to limit-1 leaves it
  countGuess(key, limit, now, windowMs, member)
    records one guess at `now` (member: unique per call, e.g. the session id
    the call was given), drops the ones that left the window, and lets the
    set expire with the window. Nothing when the limit is off.

  The window is sliding, not fixed: a guess counts for exactly windowMs
  after it was made (score > now - windowMs), so a guesser cannot put two
  limits' worth into the seconds around a window boundary, and the wait
  told to the guest is the true one.
]]

local function guessWait(key, limit, now, windowMs)
  if limit <= 0 then return nil end
  local from = '(' .. (now - windowMs)
  local n = rcall('ZCOUNT', key, from, '+inf')
  if n < limit then return nil end
  -- Oldest first: once the (n - limit + 1) oldest have left, limit - 1 remain.
  local e = rcall('ZRANGEBYSCORE', key, from, '+inf', 'WITHSCORES', 'LIMIT', n - limit, 1)
  local wait = tonumber(e[2]) + windowMs - now
  if wait < 1 then wait = 1 end
  return wait
end

local function countGuess(key, limit, now, windowMs, member)
  if limit <= 0 then return end
  rcall('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  rcall('ZADD', key, now, member)
  rcall('PEXPIRE', key, windowMs)
end
