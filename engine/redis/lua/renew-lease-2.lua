--[[
  Takes or keeps the lease on a hotspot's actor: exactly one engine process
  owns a hotspot at a time. Succeeds when the lease is ours, or free and no
  other process is next in line for it, and (re)sets its time to live.

  Next in line: a process refused while it serves the hotspot (it lost the
  lease, or the hotspot's requests reach it and are answered 503) asks to be
  next, so that when the holder's lease goes it takes the hotspot back before
  a process that merely woke it (every engine wakes every hotspot with live
  sessions when it starts) can take it in the moment the lease is free. Its
  place outlives the lease it waits for by ARGV[4], time for its clock to ask
  again; the first to ask keeps it until then.

  KEYS[1] lease         {t:T}:lease:<hotspot>       owner
  KEYS[2] next in line  {t:T}:lease-next:<hotspot>  owner

  ARGV[1] owner (engine process id)
  ARGV[2] time to live, ms
  ARGV[3] 1: if refused, be next in line (the caller serves the hotspot); 0: not
  ARGV[4] how long a place in line outlives the lease it waits for, ms
  ARGV[5] optional, 1: the holder yields: if another process is next in line
          (its requests for the hotspot reach it) the holder gives the lease up
          instead of renewing it. The caller sets it when none of the
          hotspot's requests reached it for a while: the hotspot follows its
          traffic (a NAS that failed over to another process and stayed there)
          instead of leaving that process answering 503 for the holder's life.
          Absent or 0: renew as before.

  Returns 1 when we hold the lease; 0 when we held it and gave it up (ARGV[5]);
  otherwise minus the ms until it is worth asking again (the time left of the
  holder's lease, or of the place in line of the process next; at least 1).
]]
local rcall = redis.call
local owner = ARGV[1]

local holder = rcall('GET', KEYS[1])
local waiting = rcall('GET', KEYS[2])
if holder == owner and ARGV[5] == '1' and waiting and waiting ~= owner then
  rcall('DEL', KEYS[1])
  return 0
end
if holder == owner or (not holder and (not waiting or waiting == owner)) then
  rcall('SET', KEYS[1], owner, 'PX', ARGV[2])
  if waiting == owner then rcall('DEL', KEYS[2]) end
  return 1
end

if not holder then
  -- Free, but kept for the process next in line until its place runs out.
  return -math.max(rcall('PTTL', KEYS[2]), 1)
end

local left = rcall('PTTL', KEYS[1])
if left < 0 then left = tonumber(ARGV[2]) end -- a lease without a time to live: ask again after one lease's time
if ARGV[3] == '1' and (not waiting or waiting == owner) then
  rcall('SET', KEYS[2], owner, 'PX', left + tonumber(ARGV[4]))
end
return -math.max(left, 1)
