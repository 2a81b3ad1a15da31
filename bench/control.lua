-- wrk script for the control plane (bench/pg.sh). BENCH_MODE=write: POST /api/v1/lists/$BENCH_LIST/items
-- with a value unique per thread and request; BENCH_MODE=read: GET /api/v1/lists. Both
-- with the secret key of $BENCH_KEY. Prints one JSON line (prefixed "JSON ") with
-- requests/s, latency percentiles in microseconds and the error counts (a non-2xx answer
-- counts in errStatus).
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end

local n = 0
local write = os.getenv("BENCH_MODE") == "write"
local path = write and ("/api/v1/lists/" .. os.getenv("BENCH_LIST") .. "/items") or "/api/v1/lists"
local run = tostring(os.time())

function init(args)
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY")
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  if not write then
    return wrk.format("GET", path)
  end
  n = n + 1
  return wrk.format("POST", path, nil,
    string.format('{"value":"bench %s %d %d","rank":%d}', run, tid, n, n % 100))
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50us":%d,"p99us":%d,' ..
    '"errConnect":%d,"errRead":%d,"errWrite":%d,"errStatus":%d,"errTimeout":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), e.connect, e.read, e.write, e.status,
    e.timeout))
end
