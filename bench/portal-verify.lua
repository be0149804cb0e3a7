--[[
  wrk script for bench/portal-verify.ts: every request is a portal voucher
  verification with its own (code, MAC) pair, so the service counts a new use
  each time (no "same device again" shortcut) and the echo server gets the
  very same bytes.

  wrk -t1 -c100 -d10s -s bench/portal-verify.lua <url> -- <hotspot_id> <codes file> <run byte>

  args[1] hotspot id, sent in the body
  args[2] a file with one voucher code per line
  args[3] 0-255, the MAC's second byte: distinct per run, so a run never
          repeats a MAC of an earlier run (a repeat would be the cheaper
          "reused" path)

  MAC: 02:<run>:<thread>:<24-bit counter>, locally administered, unique per
  thread and run. done() prints one line "WRK_JSON {...}" for the caller;
  latencies in microseconds. wrk counts responses with status > 399 in
  errors.status, which is how non-2xx answers show here (there are no 3xx).
]]

local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
  thread:set("tid", #threads)
end

local codes = {}
local hotspot, run
local counter = 0
local headers = { ["Content-Type"] = "application/json" }

function init(args)
  hotspot = args[1]
  for line in io.lines(args[2]) do
    if line ~= "" then codes[#codes + 1] = line end
  end
  run = tonumber(args[3]) or 0
  if not hotspot or #codes == 0 then
    error("usage: -- <hotspot_id> <codes file> <run byte>")
  end
end

function request()
  local n = counter
  counter = counter + 1
  local code = codes[(n % #codes) + 1]
  local mac = string.format("02:%02X:%02X:%02X:%02X:%02X", run, tid % 256,
    math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
  local body = '{"hotspot_id":"' .. hotspot .. '","code":"' .. code .. '","mac":"' .. mac .. '"}'
  return wrk.format("POST", nil, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean, latency.max))
end
