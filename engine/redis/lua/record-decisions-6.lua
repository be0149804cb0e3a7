--[[
  Records a batch of decisions of one tenant that fall in one 10-second
  step (engine/decisions/decision-recorder.ts), all in one step: each entry
  listed, each sign-in also emitted as auth.success / auth.failure, and the
  batch counted into the step counter and the activity buckets. One call
  per batch instead of two stream writes and a handful of counters per
  decision: the client encodes one command, not dozens (the recorder's
  share of a portal verify's CPU, measured in bench/portal-verify).

  An entry stands for `count` decisions: 1 for a sign-in; for a NAS asking
  again about a device (mac_auth, uam_login, flags without 's') the number of
  alike answers the recorder folded into it (same hotspot, method, outcome
  and reason in one flush). Such an entry is listed once, with its count,
  and emits no event: a MAC-auth venue's re-checks are most of its RADIUS
  traffic, and an event or a list row per packet cost the Access-Request
  path half its rate (bench/results/radius-vs-freeradius.md).

  Sign-ins are also counted per 10-second step inside the minute bucket
  (`acc~<k>`, `rej~<k>`, k = the step's place in its minute, 0-5, taken from
  the first entry's `at`: every entry of a call is in one step), so the
  failure-surge detector judges a sliding window of steps, not a calendar
  minute (engine/dashboard/surge-window.ts). Those fields go to the minute
  bucket only: in the hour bucket k would name six different steps.

  Sign-ins are also counted per hotspot, method and outcome in the hour
  bucket only (`m:a:<method>@<hotspot>`, `m:r:...`, read back by parseSignInTally), which
  engine/reports/signin-mover.ts copies into Postgres (report_signins) for
  the console's reports: a guessing storm costs Redis one HINCRBY per field
  and flush, never a Postgres write per attempt.

  Records: engine/redis/records.ts (ACTIVITY, perSite, perMethod,
  rejectReason, perStep, parseSignInTally); event fields: engine/events/types.ts (EVENT_FIELD).

  KEYS[1] the tenant's decisions stream   {t:T}:dec
  KEYS[2] the tenant's event stream       {t:T}:ev
  KEYS[3] activity of the step's minute   {t:T}:am:<minute>
  KEYS[4] activity of the step's hour     {t:T}:ah:<hour>
  KEYS[5] the step's decision counter     {t:T}:ad:<step>
  KEYS[6] the tenant's applied calls     {t:T}:decb   recorder -> its last call applied

  A call is applied once: the recorder sends a failed call again (and
  ioredis resends a call whose answer a dropped connection lost). Each
  recorder numbers its calls, and a tenant's calls reach Redis in their
  order (the recorder sends them one after another, a failed one and the
  ones behind it again before anything newer), so a call numbered no higher
  than the tenant's last applied one from the same recorder is a repeat: it
  changes nothing and returns 0. The number is stored last, so a call that
  stopped half-way is applied again whole. One hash per tenant, one field
  per recorder (process), kept ARGV[2] ms after its last call.

  ARGV[1] decisions stream MAXLEN (approximate)
  ARGV[2] how long the applied calls are remembered, ms (longer than the recorder retries a call);
          the events stream is trimmed by engine/events/event-trimmer.ts only
  ARGV[3] minute bucket TTL, s
  ARGV[4] hour bucket TTL, s
  ARGV[5] step counter TTL, s
  ARGV[6..8] the ACTIVITY field names for accepts, rejects and errors
  ARGV[9] the recorder's id, ARGV[10] the call's number (1, 2, ... per recorder)
  then per entry, 9 values: at (ms; of the last decision folded in),
  outcome (accept|reject), method, reason ('' for an accept), hotspot id,
  source (portal|otp|radius), flags ('s' when it was a sign-in: counted as an
  accept or reject, and emitted; 'e' too when a reject was our failure,
  counted as an error), count (decisions the entry stands for, >= 1),
  mac (the device, '' when unknown: only the event carries it, for the
  tenant's own integrations; the dashboard's list does not)

  Returns the number of decisions recorded (the entries' counts summed), 0
  when the batch was applied before.
]]
local rcall = redis.call
local applied = rcall('HGET', KEYS[6], ARGV[9])
if applied and tonumber(applied) >= tonumber(ARGV[10]) then return 0 end
local ACC, REJ, ERR = ARGV[6], ARGV[7], ARGV[8]
local counts = {}
local stepCounts = {}
local hourCounts = {}
local n = 0
local function add(field, c)
  counts[field] = (counts[field] or 0) + c
end
-- The step's place in its minute (six 10-second steps a minute), from the first entry's time.
local stepInMinute = ARGV[11] and tostring(math.floor(tonumber(ARGV[11]) / 10000) % 6) or '0'

for i = 11, #ARGV, 9 do
  local at, outcome, method, reason, hs, source, flags = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]
  local mac = ARGV[i + 8]
  local c = tonumber(ARGV[i + 7])
  local accept = outcome == 'accept'
  local field = accept and ACC or REJ
  local signIn = string.find(flags, 's', 1, true)
  if signIn then
    add(field, c)
    add(field .. '@' .. hs, c)
    local sf = field .. '~' .. stepInMinute
    stepCounts[sf] = (stepCounts[sf] or 0) + c
    local tf = 'm:' .. (accept and 'a' or 'r') .. ':' .. method .. '@' .. hs
    hourCounts[tf] = (hourCounts[tf] or 0) + c
    if string.find(flags, 'e', 1, true) then
      add(ERR, c)
      add(ERR .. '@' .. hs, c)
    end
  end
  add(field .. '#' .. method, c)
  if not accept then add('r:' .. reason, c) end
  rcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*',
    'at', at, 'outcome', outcome, 'method', method, 'reason', reason, 'hotspot', hs, 'source', source, 'count', c)
  if signIn then
    local d = {hotspot_id = hs, method = method, source = source}
    if not accept then d.reason = reason end
    if mac ~= '' then d.mac = mac end
    local data = cjson.encode(d)
    rcall('XADD', KEYS[2], '*',
      'type', accept and 'auth.success' or 'auth.failure', 'ts', at, 'site', hs, 'data', data)
  end
  n = n + c
end

for field, c in pairs(counts) do
  rcall('HINCRBY', KEYS[3], field, c)
  rcall('HINCRBY', KEYS[4], field, c)
end
for field, c in pairs(stepCounts) do
  rcall('HINCRBY', KEYS[3], field, c)
end
for field, c in pairs(hourCounts) do
  rcall('HINCRBY', KEYS[4], field, c)
end
rcall('EXPIRE', KEYS[3], ARGV[3])
rcall('EXPIRE', KEYS[4], ARGV[4])
rcall('INCRBY', KEYS[5], n)
rcall('EXPIRE', KEYS[5], ARGV[5])
rcall('HSET', KEYS[6], ARGV[9], ARGV[10])
rcall('PEXPIRE', KEYS[6], ARGV[2])
return n
