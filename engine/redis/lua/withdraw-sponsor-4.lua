--[[
  Withdraws a sponsor request whose e-mail could not be sent (nobody can
  answer it): deletes the request, its link and its place in the recent
  list, and appends jit.decided (decision withdrawn), in one step, so the
  jit.requested that request-sponsor-7.lua appended is closed and no
  JIT-approval reader keeps a request that no longer exists.

  KEYS[1] request hash   {t:T}:sp:r:<request id>
  KEYS[2] link           {t:T}:sp:l:<sha256 of the token>
  KEYS[3] recent zset    {t:T}:sp:recent
  KEYS[4] event stream   {t:T}:ev

  ARGV[1] now, ms
  ARGV[2] request id

  Returns 1 withdrawn, 0 no such request (nothing written)
]]
local rcall = redis.call
--- @include "activity"

local hs = rcall('HGET', KEYS[1], 'hs')
if not hs then return 0 end
rcall('DEL', KEYS[1], KEYS[2])
rcall('ZREM', KEYS[3], ARGV[2])
emitEvent({events = KEYS[4]}, 'jit.decided', tonumber(ARGV[1]), hs, {request_id = ARGV[2], decision = 'withdrawn'})
return 1
