--[[
  Fragment (included by scripts.ts at load time): a batch's changes to a
  tenant's owed webhook deliveries, written with one command per key and
  kind (many-fields.lua), by claim-webhook-deliveries-6.lua and
  settle-webhook-deliveries-n.lua. Both name the keys alike:
    KEYS[1] queue zset, KEYS[2] deliveries hash, KEYS[3] bodies hash,
    KEYS[4] done zset, KEYS[5] dead zset.

  writeDeliveries(w), each field a flat list (empty: nothing written):
    w.gone      ids forgotten: off the queue, their state and body deleted
    w.unqueued  ids off the queue (delivered, dead)
    w.written   id, state JSON, ... (the deliveries hash)
    w.due       score, id, ... (the queue: due ms, or the lease's end)
    w.dead      died at ms, id, ...
    w.done      forget at ms, id, ...
  An id is in at most one of gone and written (the callers' branches), so
  the order of the commands does not matter.
]]
--- @include "many-fields"

local function writeDeliveries(w)
  many('ZREM', KEYS[1], w.gone)
  many('HDEL', KEYS[2], w.gone)
  many('HDEL', KEYS[3], w.gone)
  many('ZREM', KEYS[1], w.unqueued)
  many('HSET', KEYS[2], w.written)
  many('ZADD', KEYS[1], w.due)
  many('ZADD', KEYS[5], w.dead)
  many('ZADD', KEYS[4], w.done)
end
