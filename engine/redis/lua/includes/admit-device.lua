--[[
  Fragment (included by scripts.ts at load time): whether a device may start
  a session at all, the first step of every sign-in script.

  admitDevice(loadedKey, blockKey)
    nil                     go on
    {'not_loaded', run_id}  this Redis server may not hold the tenant's vouchers and
                            blocks as Postgres has them: the marker is missing (new or
                            emptied Redis) or names another server (a restart or
                            failover, which may have lost the last writes). Load them
                            from Postgres, set the marker to run_id, and retry
    {'blocked'}             the MAC is on the tenant's block list
    an error reply          ERR admit-device: INFO server shows no run_id (no Redis
                            server does this; a proxy in front of one might)
  The caller returns whatever non-nil answer it gets.
]]

-- The marker alone cannot tell a restarted Redis: the AOF keeps the marker,
-- written long ago, while `everysec` may have dropped the last second of uses,
-- some of them already copied to Postgres. A restart or failover always
-- changes the server's run_id, so the tenant counts as loaded only into the
-- server that runs this script now. It is read here, not passed in: a caller's
-- remembered run_id can be stale (ioredis resends commands that were in flight
-- across a reconnect), and a stale id would match the surviving marker.
-- The INFO costs 3-4 µs of Redis per use (issue 22: bench/results/portal-verify.md,
-- "The restart guard"). Nothing cheaper tells a script which server runs it:
-- Lua state cannot outlive a call (Redis 7's script globals are read-only), a
-- key kept out of the AOF (redis.set_repl) still survives in an RDB snapshot,
-- an AOF rewrite or a full resync, and LASTSAVE moves with every save and
-- counts whole seconds. So the guard keeps its one INFO per use.
local function admitDevice(loadedKey, blockKey)
  local info = rcall('INFO', 'server')
  local at = string.find(info, 'run_id:', 1, true)
  if not at then
    return redis.error_reply('ERR admit-device: INFO server shows no run_id')
  end
  local runId = string.sub(info, at + 7, at + 46)
  if rcall('GET', loadedKey) ~= runId then
    return {'not_loaded', runId}
  end
  if rcall('EXISTS', blockKey) == 1 then
    return {'blocked'}
  end
  return nil
end
