--[[
  Fragment (included by scripts.ts at load time): one command for many
  fields, used by the webhook queue scripts (route-webhook-events-5.lua,
  claim-webhook-deliveries-6.lua, and through write-deliveries.lua also
  settle-webhook-deliveries-n.lua) to write a whole batch of deliveries with
  one HSET, ZADD, ZREM or HDEL per key instead of one command per delivery:
  a command run from Lua costs Redis about as much as the field it writes.

  many(cmd, key, args)
    runs `cmd key args...`, in slices of SLICE arguments (Lua's unpack, and
    so a command's argument count, has a limit); nothing when args is empty.
    SLICE is even, so a slice never splits a field from its value.
]]

local SLICE = 1000
local function many(cmd, key, args)
  for i = 1, #args, SLICE do
    rcall(cmd, key, unpack(args, i, math.min(#args, i + SLICE - 1)))
  end
end
