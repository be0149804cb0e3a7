--[[
  Uses a voucher for one device and starts its session: the only place a use
  counter is raised. Also the guessing limits' check and count (includes/
  guess-limit.lua): a device or source address past its limit of unknown
  codes is refused before the code is even looked up, so a valid code spends
  nothing then, and only an unknown code counts as a guess (an expired or
  used-up code is a real code, not a guess). Check, count and use are one
  step, so processes sharing the Redis share the limits exactly.

  The checks (block, expiry, the match-day window, SSID, remaining uses), the counter increment and
  the session start (includes/session-start.lua: the grant, the live set, the
  session ref, the session_start record that carries the start to Postgres,
  the session.start event and the dashboard's counters) happen in one script. So two devices using the same code at once
  can never push the counter past max_uses, and no guest is authorised
  without its session-start record queued. Records: engine/redis/records.ts.

  Events (docs/events.md), in this order and only for a spent use: the end of
  a replaced session (session.end), device.new (the tenant's first session of
  the MAC), session.start, voucher.redeemed. A device that gets its live
  session back spends nothing and emits nothing.

  KEYS[1] voucher hash           {t:T}:v:<code>
  KEYS[2] voucher devices hash   {t:T}:vd:<code>
  KEYS[3] session (grant) hash   {t:T}:g:<hotspot>:<mac>
  KEYS[4] outbox stream          {t:T}:outbox
  KEYS[5] tenant loaded marker   {t:T}:loaded, holding the run_id of the Redis
                                 server the tenant was loaded into
  KEYS[6] hotspot live zset      {t:T}:live:<hotspot>
  KEYS[7] session ref            {t:T}:sr:<new session id>
  KEYS[8] block marker           {t:T}:blk:<mac>
  KEYS[9] event stream          {t:T}:ev
  KEYS[10] activity, this minute  {t:T}:am:<floor(now / 60000)>
  KEYS[11] activity, this hour    {t:T}:ah:<floor(now / 3600000)>
  KEYS[12] live devices hash      {t:T}:ldev
  KEYS[13] live per SSID hash     {t:T}:lss
  KEYS[14] live per AP hash       {t:T}:lap
                                 (includes/activity.lua; engine/events/activity-keys.ts)
  KEYS[15] guesses by this device at this hotspot (zset)   {t:T}:gl:d:<hotspot>:<mac>
  KEYS[16] guesses from this source address (zset)        {t:T}:gl:a:<address>
                                 (never touched when ARGV[10] is 0: RADIUS has no
                                 source address of the guest)
  KEYS[17] refusals per hotspot, this refusal window (hash) {t:T}:gr:<floor(now / window)>
                                 (read by engine/dashboard/guessing-detector.ts)
  KEYS[18] known devices hash     {t:T}:kdev   MAC -> first seen (ms), for device.new
                                 (includes/session-start.lua)

  ARGV[1] now, ms since epoch
  ARGV[2] MAC (canonical)
  ARGV[3] hotspot id
  ARGV[4] client IP ('' when unknown)
  ARGV[5] SSID ('' when unknown)
  ARGV[6] session id for a new session (sess_...)
  ARGV[7] session minutes when the voucher sets none
  ARGV[8] idle timeout, seconds (0: none)
  ARGV[9]  unknown codes allowed per device and hotspot in the window (0: no limit)
  ARGV[10] unknown codes allowed per source address in the window (0: no limit)
  ARGV[11] the guessing window, ms
  ARGV[12] how long KEYS[17] lives, ms
  ARGV[13] device type the browser claimed (ios, android, windows, macos, other; '' none): reports only

  Returns
    {'ok', session_id, grant_until_ms, current_uses, max_uses, 1}
        the device already had a live session from this voucher: it gets it
        back and no use is counted
    {'ok', session_id, grant_until_ms, current_uses, max_uses, 0, replaced_session_id}
        a new use and session; replaced_session_id is '' or the device's
        previous live session at this hotspot, which this script has ended
        (its session_end record queued before the new start, with its bytes):
        the caller only tells the hotspot's actor to forget it
        (max_uses is -1 when unlimited)
    {'not_found'}
    {'not_loaded', run_id}            see includes/admit-device.lua
    {'blocked'}                       the MAC is on the tenant's block list
    {'expired', expires_at_ms}        expires_at or the window's end (valid_until),
                                      the earlier of the two that has passed
    {'not_yet_valid', valid_from_ms}  before the match-day window opens: no use
                                      counted, and not a guess (a real code)
    {'ssid'}                          the voucher is limited to other SSIDs
    {'exhausted', max_uses, current_uses}
    {'too_many_attempts', wait_ms, 'device' | 'address', refusals}
        a limit is reached: nothing was looked up or used; wait_ms is when
        the guest may try again (both limits clear), refusals how many this
        hotspot has refused in KEYS[17]'s window, this one included

  Errors
    ERR admit-device: INFO server shows no run_id
]]
local rcall = redis.call
--- @include "admit-device"
--- @include "session-start"
--- @include "guess-limit"

local refused = admitDevice(KEYS[5], KEYS[8])
if refused then
  return refused
end

local now = tonumber(ARGV[1])
local perDevice, perAddress, windowMs = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local waitDevice = guessWait(KEYS[15], perDevice, now, windowMs)
local waitAddress = guessWait(KEYS[16], perAddress, now, windowMs)
if waitDevice or waitAddress then
  local wait, which = waitDevice or 0, 'device'
  if waitAddress and waitAddress > wait then wait, which = waitAddress, 'address' end
  local refusals = rcall('HINCRBY', KEYS[17], ARGV[3], 1)
  if refusals == 1 then rcall('PEXPIRE', KEYS[17], ARGV[12]) end
  return {'too_many_attempts', wait, which, refusals}
end

local v = rcall('HMGET', KEYS[1], 'id', 'max', 'uses', 'exp', 'ssids', 'dur', 'down', 'up', 'quota', 'profile', 'code', 'squota', 'vfrom', 'vuntil')
local id = v[1]
if not id then
  -- A guess. The session id (fresh per call) makes the entry unique.
  countGuess(KEYS[15], perDevice, now, windowMs, ARGV[6])
  countGuess(KEYS[16], perAddress, now, windowMs, ARGV[6])
  return {'not_found'}
end
local exp = tonumber(v[4])
-- The window's end is an expiry too: the earlier of the two ends counts.
-- A definition written before windows has no vfrom/vuntil: open.
local vuntil = tonumber(v[14]) or 0
if vuntil > 0 and (exp <= 0 or vuntil < exp) then exp = vuntil end
-- Valid strictly before the end; at the end it is expired.
if exp > 0 and now >= exp then
  return {'expired', tostring(exp)}
end
-- Valid from valid_from on, that instant included. Before it the code is
-- real (no guess counted) and nothing is spent.
local vfrom = tonumber(v[13]) or 0
if vfrom > 0 and now < vfrom then
  return {'not_yet_valid', tostring(vfrom)}
end
local ssids = v[5]
if ssids ~= '' then
  -- The list is newline separated: an SSID holding a newline would match two
  -- listed names at once, so it matches none.
  if ARGV[5] == '' or string.find(ARGV[5], '\n', 1, true)
    or not string.find('\n' .. ssids .. '\n', '\n' .. ARGV[5] .. '\n', 1, true) then
    return {'ssid'}
  end
end

local mac = ARGV[2]
local max = tonumber(v[2])
local uses = tonumber(v[3])

-- The same device again while its session from this voucher is live gets
-- that session back; no use is counted (multi-use means several devices).
local prior = rcall('HGET', KEYS[2], mac)
if prior then
  local g = rcall('HMGET', KEYS[3], 'sid', 'until')
  if g[1] == prior and tonumber(g[2]) > now then
    return {'ok', prior, g[2], uses, max, 1}
  end
end

if max >= 0 and uses >= max then
  return {'exhausted', max, uses}
end

uses = rcall('HINCRBY', KEYS[1], 'uses', '1')
local sid = ARGV[6]
local dur = tonumber(v[6])
if dur <= 0 then dur = tonumber(ARGV[7]) end
local untilMs = now + dur * 60000

rcall('HSET', KEYS[2], mac, sid)
local k = activityKeys(9)
k.known = KEYS[18]
local replaced = startSession(KEYS[3], KEYS[6], KEYS[7], KEYS[4], k, {
  sid = sid, hs = ARGV[3], mac = mac, now = now, untilMs = untilMs, method = 'voucher', user = v[11], vid = id,
  down = v[7], up = v[8], quota = v[9],
  -- Only the voucher sets a session quota. A definition written before
  -- vouchers had one has no `squota` field: none.
  squota = tonumber(v[12]) or 0,
  idle = ARGV[8], profile = v[10], ip = ARGV[4], ssid = ARGV[5], dt = ARGV[13],
  -- The list goes with the session: the NAS's Called-Station-Id is checked against it on every
  -- Access-Request (decide.ts), since the SSID checked above is only what the portal was told.
  ssids = ssids})
-- After the start, so a reader of the stream meets the session before the use that made it.
local unlimited = max < 0
emitEvent(k, 'voucher.redeemed', ARGV[1], ARGV[3], {
  voucher_id = id, code = v[11], session_id = sid, mac = mac, hotspot_id = ARGV[3], uses = uses,
  max_uses = unlimited and cjson.null or max, uses_left = unlimited and cjson.null or max - uses})

return {'ok', sid, tostring(untilMs), uses, max, 0, replaced}
