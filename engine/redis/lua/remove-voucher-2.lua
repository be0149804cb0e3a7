--[[
  Removes a voucher from Redis, only if the code still belongs to it. Live
  grants it created are left alone: deleting a voucher stops new uses, it does
  not cut off guests already online (an operator ends those as sessions).

  KEYS[1] voucher hash          {t:T}:v:<code>
  KEYS[2] voucher devices hash  {t:T}:vd:<code>

  ARGV[1] voucher id

  Returns 1 when removed, 0 when the code held another voucher or nothing.
]]
local rcall = redis.call

if rcall('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return 0
end
rcall('DEL', KEYS[1], KEYS[2])
return 1
