--[[
  Trims a tenant's events stream to about `maxlen` entries, never past an
  entry the webhook consumer group has not read: the one trimmer of the
  stream (writers add without MAXLEN), run by engine/webhooks/event-trimmer.ts.
  Redis 7.0 has no trimming that respects groups, so the rule is here:
    - no webhook group: MAXLEN ~ maxlen, as writers did before;
    - the group's lag (unread entries, Redis >= 7.0) known and <= maxlen:
      the unread are among the newest maxlen, so MAXLEN ~ maxlen keeps them;
    - otherwise (lag above maxlen, or unknown): MINID ~ the group's
      last-delivered id, which drops only entries the group has read.
  `~` trims whole macro nodes only, never more than the exact form would.

  KEYS[1] events stream   {t:T}:ev

  ARGV[1] maxlen
  ARGV[2] consumer group name

  Returns the number of entries trimmed.
]]
local rcall = redis.call
local maxlen = tonumber(ARGV[1])
if rcall('XLEN', KEYS[1]) <= maxlen then return 0 end
local group
for _, g in ipairs(rcall('XINFO', 'GROUPS', KEYS[1])) do
  local fields = {}
  for i = 1, #g, 2 do fields[g[i]] = g[i + 1] end
  if fields['name'] == ARGV[2] then group = fields end
end
if not group then return rcall('XTRIM', KEYS[1], 'MAXLEN', '~', maxlen) end
local lag = group['lag']
if type(lag) == 'number' and lag <= maxlen then return rcall('XTRIM', KEYS[1], 'MAXLEN', '~', maxlen) end
return rcall('XTRIM', KEYS[1], 'MINID', '~', group['last-delivered-id'])
