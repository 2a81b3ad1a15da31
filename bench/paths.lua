-- wrk script: cycles through the request paths of the file named by $BENCH_PATHS (one
-- path a line), and prints one JSON line (prefixed "JSON ") with requests/s, latency
-- percentiles in microseconds and every error count. Use with one wrk thread (-t1), so
-- the cycle is the file's order and done() sees every request.
local paths = {}
local i = 0

function init(args)
  for line in io.lines(os.getenv("BENCH_PATHS")) do
    paths[#paths + 1] = line
  end
end

function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"bytes":%d,' ..
    '"p50us":%d,"p99us":%d,"p999us":%d,"maxus":%d,' ..
    '"errConnect":%d,"errRead":%d,"errWrite":%d,"errStatus":%d,"errTimeout":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    summary.bytes, latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
