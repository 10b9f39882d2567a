-- wrk script for `Tools/bench --service-only`: each thread (run it as `wrk -tN -cN`, one
-- connection a thread) posts the bodies of the file BODIES .. its number (each body's length on a
-- line, then the body) to /v1/readings one at a time, in the file's order, since ingest needs a
-- device's readings in event time: an ingest run's batches on one thread, or a device's single
-- readings on each. When its last body is answered a thread prints
--   posted N failed F start S end E latencies L1 L2 ...
-- (CLOCK_MONOTONIC seconds from its first request to its last answer; latencies in ms, each from
-- a request's sending to its answer) and stops; the caller stops wrk once every thread has
-- printed (it would otherwise wait out its -d duration).
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } fenceline_timespec;
  int clock_gettime(int clock, fenceline_timespec *time);
]]

local threads = 0
local bodies = {}
local latencies = {}
local answered = 0
local failed = 0
local started = nil
local sent = nil
local headers = {
  ["Authorization"] = "Bearer " .. os.getenv("TOKEN"),
  ["Content-Type"] = "application/x-ndjson",
}

local function now()
  local time = ffi.new("fenceline_timespec")
  ffi.C.clock_gettime(1, time) -- CLOCK_MONOTONIC
  return tonumber(time.tv_sec) + tonumber(time.tv_nsec) / 1e9
end

function setup(thread)
  thread:set("number", threads)
  threads = threads + 1
end

function init(args)
  local file = assert(io.open(os.getenv("BODIES") .. number, "rb"))
  while true do
    local size = file:read("*l")
    if not size then break end
    bodies[#bodies + 1] = file:read(tonumber(size))
  end
  file:close()
end

function request()
  sent = now()
  if started == nil then started = sent end
  -- The first body not answered (after a reconnect wrk asks again for the one it lost); past the
  -- last, until the thread stops, an empty body, which applies nothing.
  return wrk.format("POST", "/v1/readings", headers, bodies[answered + 1] or "")
end

function response(status, headers, body)
  if answered >= #bodies then return end
  local finished = now()
  answered = answered + 1
  latencies[#latencies + 1] = string.format("%.3f", (finished - sent) * 1000)
  if status ~= 200 then failed = failed + 1 end
  if answered == #bodies then
    io.write(string.format("posted %d failed %d start %.6f end %.6f latencies %s\n", answered, failed, started,
      finished, table.concat(latencies, " ")))
    io.flush()
    wrk.thread:stop()
  end
end
