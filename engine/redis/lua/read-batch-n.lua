--[[
  The reads of one dashboard request, in one command (engine/dashboard/read-batch.ts).
  Read-only. A dashboard answer reads a few dozen counters, buckets and live
  sets of one tenant; sent as that many commands, the client's cost of
  building, writing and parsing each one was most of the request's CPU. Here
  they are one EVALSHA with one reply: the caller lists the reads, this
  script runs them in order and returns each read's reply as Redis gave it
  (values are not summed or converted here, so a float or a very large
  counter reaches the caller exactly as stored).

  The key count `n` is the caller's (ioredis passes numkeys first): it is
  set by the tenant's sites, NAS clients and the windows read, never by its
  sessions. Every key is the caller's tenant's ({t:T} hash tag, one slot).

  KEYS[1..n] the keys of the reads below, in their order (each read takes
             `nkeys` of them)

  ARGV       the reads, one after another, each as
             op, nkeys, nargs, arg 1 .. arg nargs
    hmget    nkeys keys (hashes), args: fields -> per key, its HMGET reply (nil for an absent field)
    mget     nkeys keys (strings), no args   -> MGET reply
    zcount   nkeys keys (sorted sets), args: min, max -> per key, its ZCOUNT
    hlen     1 key (hash), no args           -> integer
    hgetall  1 key (hash), no args           -> flat field, value list
    lag      1 key (the outbox stream), args: the sink's consumer group
             -> { first id or nil, 1 when the group exists else 0,
                  smallest pending id or nil, first id after the group's last-delivered-id or nil }
             (engine/dashboard/audit-lag.ts dates the backlog from them)

  A read of many keys names its fields (or bounds) once: the activity
  windows read the same fields of 15 to 60 buckets.

  Returns a list with one entry per read, in order.
  Error: `ERR read-batch: unknown op <op>` for an op not listed above.
]]
local rcall = redis.call

-- The outbox's unwritten entries (audit-lag.ts): what a pipeline of XRANGE, XINFO GROUPS,
-- XPENDING and a second XRANGE would return, without the second round trip.
local function lag(key, group)
  local first = rcall('XRANGE', key, '-', '+', 'COUNT', 1)[1]
  -- XINFO GROUPS fails on a missing key: an empty (or absent) stream has nothing unwritten.
  if first == nil then return { false, 0, false, false } end
  local delivered = nil
  for _, g in ipairs(rcall('XINFO', 'GROUPS', key)) do
    local name, last = nil, nil
    for j = 1, #g, 2 do
      if g[j] == 'name' then name = g[j + 1] elseif g[j] == 'last-delivered-id' then last = g[j + 1] end
    end
    if name == group then delivered = last or '0-0' end
  end
  if delivered == nil then return { first[1], 0, false, false } end
  local pending = rcall('XPENDING', key, group)[2] or false
  -- The first entry after last-delivered-id: the stream's first when nothing of it was delivered yet.
  local after = rcall('XRANGE', key, '(' .. delivered, '+', 'COUNT', 1)[1]
  return { first[1], 1, pending, after and after[1] or false }
end

local out = {}
local k, i = 1, 1
while i <= #ARGV do
  local op, nk, na = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local key = KEYS[k]
  local reply
  if op == 'hmget' then
    local fields = { unpack(ARGV, i + 3, i + 2 + na) }
    reply = {}
    for j = k, k + nk - 1 do reply[#reply + 1] = rcall('HMGET', KEYS[j], unpack(fields)) end
  elseif op == 'mget' then
    reply = rcall('MGET', unpack(KEYS, k, k + nk - 1))
  elseif op == 'zcount' then
    reply = {}
    for j = k, k + nk - 1 do reply[#reply + 1] = rcall('ZCOUNT', KEYS[j], ARGV[i + 3], ARGV[i + 4]) end
  elseif op == 'hlen' then
    reply = rcall('HLEN', key)
  elseif op == 'hgetall' then
    reply = rcall('HGETALL', key)
  elseif op == 'lag' then
    reply = lag(key, ARGV[i + 3])
  else
    return redis.error_reply('ERR read-batch: unknown op ' .. tostring(op))
  end
  out[#out + 1] = reply
  k = k + nk
  i = i + 3 + na
end
return out
