#!/usr/bin/env bash
# The two HTTP mixes of issue 23 side by side, outside `make bench`:
#
#   bench/http_mix.sh ARTIFACT QUERIES SECONDS ROUNDS NAME=BINARY [NAME=BINARY ...]
#
# ARTIFACT: a compiled cities artifact; QUERIES: bench/run.sh's cities.queries (every
# prefix of the 2,000 most populous names, query_bench --queries-out). Every BINARY
# (e.g. main's and a branch's build/suggestd) runs `suggestd runtime --threads 2 --quiet`
# on one hand-built edge directory (as bench/run.sh builds it; default typo policy), next
# to an nginx `return 200` with 2 workers and a 1,057-byte body. Per round, each target
# gets `wrk -t1 -c32 -dSECONDS --latency -s bench/paths.lua` on
# - the repeating mix: the first 3,000 paths of QUERIES, cycled, after 1 s of it unmeasured
#   (the non-repeating runs in between would leave a runtime's answer cache cold);
# - the non-repeating mix (not for nginx): every prefix of every city displayValue, with a
#   one-edit variant from 4 code points and a two-edit one from 8 (fixed seed),
#   deduplicated and shuffled; each run gets its own slice (200,000 paths, fewer when
#   ROUNDS x builds runs would not fit: 1.76M paths), so no path repeats within a server.
# Prints one JSON line per run (target, mix, round, requests/s, latencies in µs, errors).
# HTTP_MIX_MIXES=repeat leaves the non-repeating runs out (bench/analytics_overhead.sh).
# HTTP_MIX_ACCESS_LOG=1 runs the runtimes with their access log on (the default of
# `suggestd runtime`; otherwise --quiet) and adds each run's server-side durations
# (`durationUs` of its /v1/query access lines: serverP50us, serverP99us, serverRequests).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
[ $# -ge 5 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
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

python3 - "$QUERIES" .cache/datasets/cities.jsonl "$PK" "$W" <<'PY'
import json, random, sys, urllib.parse
queries, items, key, w = sys.argv[1:5]
path = lambda q: f"/v1/query?key={key}&q={urllib.parse.quote(q, safe='')}\n"
qs = [l for l in open(queries, encoding="utf-8").read().split("\n") if l]
with open(f"{w}/repeat", "w") as f:
    f.writelines(path(q) for q in qs[:3000])
rnd = random.Random(23)
alpha = "abcdefghijklmnopqrstuvwxyz"
def edit(s):
    if len(s) < 2:
        return s
    i, op = rnd.randrange(1, len(s)), rnd.randrange(4)
    if op == 0: return s[:i] + rnd.choice(alpha) + s[i:]
    if op == 1: return s[:i] + s[i + 1:]
    if op == 2: return s[:i] + rnd.choice(alpha) + s[i + 1:]
    return s[:i] + s[i + 1] + s[i] + s[i + 2:] if i + 1 < len(s) else s
seen, out = set(), []
for line in open(items, encoding="utf-8"):
    n = json.loads(line)["displayValue"]
    for l in range(1, len(n) + 1):
        p = n[:l]
        for v in (p, edit(p) if l >= 4 else p, edit(edit(p)) if l >= 8 else p):
            if v not in seen:
                seen.add(v)
                out.append(v)
rnd.shuffle(out)
with open(f"{w}/nonrepeat", "w") as f:
    f.writelines(path(q) for q in out)
PY

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
NAMES=() PORTS=()
for t in "$@"; do
  name=${t%%=*} bin=${t#*=} port=$(free_port)
  quiet=--quiet
  [ "${HTTP_MIX_ACCESS_LOG:-0}" = 1 ] && quiet=
  "$bin" runtime --data-dir "$W/data" --runtime-listen "127.0.0.1:$port" --threads 2 $quiet \
    --state-dir "$W/state-$name" 2>"$W/$name.log" &
  PIDS+=("$!")
  NAMES+=("$name") PORTS+=("$port")
done
NPORT=$(free_port)
bench_nginx "$W/nginx" "$NPORT"
PIDS+=("$NGINX_PID")
for p in "${PORTS[@]}" "$NPORT"; do
  for _ in $(seq 400); do curl -s -o /dev/null "http://127.0.0.1:$p/healthz" && break; sleep 0.05; done
done
for p in "${PORTS[@]}"; do
  for _ in $(seq 400); do
    curl -s "http://127.0.0.1:$p/v1/query?key=$PK&q=par" | grep -q itemId && break
    sleep 0.05
  done
done
run() { # run TARGET MIX ROUND PORT PATHS [RUNTIME_LOG]
  # The repeating mix is measured warm: a non-repeating run in between fills a runtime's
  # answer cache with other queries, and its first pass of the 3,000 would be searched.
  # Every target (nginx too) gets the same 1 s of the mix first.
  if [ "$2" = repeat ]; then
    BENCH_PATHS=$5 timeout 30 wrk -t1 -c32 -d1s -s "$ROOT/bench/paths.lua" \
      "http://127.0.0.1:$4" >/dev/null 2>&1 || true
  fi
  local from=0 extra='{}'
  [ -n "${6:-}" ] && { sleep 0.3; from=$(wc -l <"$6"); } # after the warm-up's lines
  BENCH_PATHS=$5 timeout $((SECS + 30)) wrk -t1 -c32 -d"${SECS}s" --latency \
    -s "$ROOT/bench/paths.lua" "http://127.0.0.1:$4" 2>&1 | grep '^JSON ' | sed 's/^JSON //' >"$W/run.json"
  if [ -n "${6:-}" ] && [ "${HTTP_MIX_ACCESS_LOG:-0}" = 1 ]; then
    sleep 0.3 # the last access lines
    extra=$(tail -n +"$((from + 1))" "$6" | python3 "$ROOT/bench/access_pct.py")
  fi
  jq -c --arg t "$1" --arg m "$2" --argjson r "$3" --argjson x "$extra" \
    '{target: $t, mix: $m, round: $r} + . + $x' "$W/run.json"
}
slice=0
# Every run its own slice, however many rounds and builds (past 8 runs of 200,000 the
# last slices were empty and wrk answered nothing but errors).
per=$(( $(wc -l <"$W/nonrepeat") / (ROUNDS * $#) ))
[ "$per" -le 200000 ] || per=200000
for r in $(seq "$ROUNDS"); do
  run nginx-return repeat "$r" "$NPORT" "$W/repeat"
  for i in "${!NAMES[@]}"; do
    run "${NAMES[$i]}" repeat "$r" "${PORTS[$i]}" "$W/repeat" "$W/${NAMES[$i]}.log"
  done
  [ "${HTTP_MIX_MIXES:-repeat nonrepeat}" = repeat ] && continue
  for i in "${!NAMES[@]}"; do
    sed -n "$((slice * per + 1)),$(((slice + 1) * per))p" "$W/nonrepeat" >"$W/slice"
    slice=$((slice + 1))
    run "${NAMES[$i]}" nonrepeat "$r" "${PORTS[$i]}" "$W/slice" "$W/${NAMES[$i]}.log"
  done
done
