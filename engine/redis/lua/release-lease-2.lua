--[[
  Gives up a hotspot's actor lease at a graceful stop (SIGTERM): the holder
  deletes it only if it still holds it, so the process the hotspot's NASes
  reach now takes it at its next ask (within a second of its next packet)
  instead of a lease time later. A stopping process's own place in line goes
  too (a holder must not yield to a process that is leaving); another
  process's place is left as it is: that process takes the lease first.

  KEYS[1] lease         {t:T}:lease:<hotspot>       owner
  KEYS[2] next in line  {t:T}:lease-next:<hotspot>  owner

  ARGV[1] owner (engine process id)

  Returns 1 when the lease was ours and is gone; 0 when another process (or
  nobody) held it.
]]
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
