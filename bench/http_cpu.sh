#!/usr/bin/env bash
# Requests/s, p99 and server CPU per request of nginx `return 200` and runtime builds side
# by side, outside `make bench`:
#
#   bench/http_cpu.sh ARTIFACT QUERIES SECONDS ROUNDS NAME=BINARY[:THREADS] [...]
#
# ARTIFACT, QUERIES: as for bench/http_mix.sh. Every BINARY runs `suggestd runtime
# --threads THREADS` (default 2; access log on, as by default, written to a file) on one
# hand-built edge directory, next to nginx with 2 workers and a 1,057-byte body. Per round,
# each target gets 1 s of the mix unmeasured, then `wrk -t1 -c32 -dSECONDS --latency`
# over the first HTTP_CPU_PATHS paths of QUERIES (default 3,000: the repeating mix; 16654
# for all of bench/run.sh's city prefixes), cycled. Prints one line per run: requests/s,
# p99, and the server's CPU per request (utime + stime of all its threads, from /proc,
# over the run, ÷ requests).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
[ $# -ge 5 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
ART=$1 QUERIES=$2 SECS=$3 ROUNDS=$4
shift 4
W=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT
. bench/bench_edge.sh
bench_edge "$W/data/edge" "$ART"
python3 - "$QUERIES" "$PK" "$W/paths" "${HTTP_CPU_PATHS:-3000}" <<'PY'
import sys, urllib.parse
queries, key, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
qs = [l for l in open(queries, encoding="utf-8").read().split("\n") if l][:n]
open(out, "w").writelines(f"/v1/query?key={key}&q={urllib.parse.quote(q, safe='')}\n" for q in qs)
PY
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
NAMES=() PORTS=() RPIDS=()
for t in "$@"; do
  name=${t%%=*} rest=${t#*=}
  bin=${rest%%:*} threads=2
  [ "$rest" != "$bin" ] && threads=${rest##*:}
  port=$(free_port)
  "$bin" runtime --data-dir "$W/data" --runtime-listen "127.0.0.1:$port" --threads "$threads" \
    --state-dir "$W/state-$name" 2>"$W/$name.log" &
  PIDS+=("$!")
  NAMES+=("$name") PORTS+=("$port") RPIDS+=("$!")
done
NPORT=$(free_port)
bench_nginx "$W/nginx" "$NPORT"
NPID=$NGINX_PID
PIDS+=("$NPID")
for p in "${PORTS[@]}"; do
  for _ in $(seq 400); do
    curl -s "http://127.0.0.1:$p/v1/query?key=$PK&q=par" | grep -q itemId && break
    sleep 0.05
  done
done
for _ in $(seq 400); do curl -s -o /dev/null "http://127.0.0.1:$NPORT/" && break; sleep 0.05; done
ticks() { # the CPU ticks of every thread of the given processes
  local t=0 p k
  for p in "$@"; do
    for k in /proc/"$p"/task/*; do t=$((t + $(awk '{print $14 + $15}' "$k/stat"))); done
  done
  echo "$t"
}
run() { # run NAME PORT PID...
  local name=$1 port=$2
  shift 2
  BENCH_PATHS=$W/paths timeout 30 wrk -t1 -c32 -d1s -s "$ROOT/bench/paths.lua" \
    "http://127.0.0.1:$port" >/dev/null 2>&1 || true
  local a b
  a=$(ticks "$@")
  BENCH_PATHS=$W/paths timeout $((SECS + 30)) wrk -t1 -c32 -d"${SECS}s" --latency \
    -s "$ROOT/bench/paths.lua" "http://127.0.0.1:$port" >"$W/wrk.out" 2>&1
  b=$(ticks "$@")
  awk -v name="$name" -v ticks=$((b - a)) -v hz="$(getconf CLK_TCK)" '
    /requests in/ {n = $1} /Requests\/sec/ {rps = $2} $1 == "99%" {p99 = $2}
    END {printf "%-12s %9.0f req/s  p99 %9s  CPU/request %.2f us\n", name, rps, p99, ticks / hz * 1e6 / n}' "$W/wrk.out"
}
for r in $(seq "$ROUNDS"); do
  echo "round $r"
  run nginx "$NPORT" $(pgrep -P "$NPID")
  for i in "${!NAMES[@]}"; do run "${NAMES[$i]}" "${PORTS[$i]}" "${RPIDS[$i]}"; done
done
