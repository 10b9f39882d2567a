-- wrk script for `Tools/bench --service-only`: posts the batches of the file named by BODIES
-- (each a line with its length in bytes, then that many bytes) to /v1/readings one after another,
-- in the file's order, on one connection (run it as `wrk -t1 -c1`), since ingest needs each
-- device's readings in event time. When the last batch is answered it prints
--   batches N failed F seconds S
-- timed from the first request to the last answer, and the caller stops wrk (which otherwise
-- waits out its -d duration).
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } fenceline_timespec;
  int clock_gettime(int clock, fenceline_timespec *time);
]]

local bodies = {}
local answered = 0
local failed = 0
local started = nil
local headers = {
  ["Authorization"] = "Bearer " .. os.getenv("TOKEN"),
  ["Content-Type"] = "application/x-ndjson",
}

local function now()
  local time = ffi.new("fenceline_timespec")
  ffi.C.clock_gettime(1, time) -- CLOCK_MONOTONIC
  return tonumber(time.tv_sec) + tonumber(time.tv_nsec) / 1e9
end

function init(args)
  local file = assert(io.open(os.getenv("BODIES"), "rb"))
  while true do
    local size = file:read("*l")
    if not size then break end
    bodies[#bodies + 1] = file:read(tonumber(size))
  end
  file:close()
end

function request()
  if started == nil then started = now() end
  -- The first batch not answered: after a reconnect wrk asks again for the one it lost. Past
  -- the last (until the thread stops) an empty body, which applies nothing.
  return wrk.format("POST", "/v1/readings", headers, bodies[answered + 1] or "")
end

function response(status, headers, body)
  answered = answered + 1
  if status ~= 200 then failed = failed + 1 end
  if answered == #bodies then
    io.write(string.format("batches %d failed %d seconds %.6f\n", answered, failed, now() - started))
    io.flush()
    wrk.thread:stop()
  end
end
