#!/usr/bin/env bash
# The scale-out figures of `make bench` (bench/run.sh calls it; it also runs alone):
#
#   bench/scale_out.sh OUT.json
#
# One Redis (scripts/redis.sh: the edge and the shared state), one `suggestd control` on
# its own data dir, two `suggestd runtime --threads 1` with empty data dirs, haproxy
# (round robin, keep-alive to the backends) in front. The 135k-city list is imported and
# published through the control plane. Then:
#   - wrk (1 thread, 32 keep-alive connections, SO_SECONDS s, SO_ROUNDS rounds) on
#     /v1/query against one runtime alone, one runtime behind haproxy, two behind haproxy;
#   - the time from POST /versions to both runtimes serving the new version (bootstrap
#     reports its hash), SO_PUBLISHES times.
# Loopback only; every wait is bounded; every process it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: bench/scale_out.sh OUT.json}
SECONDS_RUN=${SO_SECONDS:-10}
ROUNDS=${SO_ROUNDS:-3}
PUBLISHES=${SO_PUBLISHES:-3}
BIN=${BENCH_SUGGESTD:-$ROOT/build/suggestd}
W=$ROOT/bench/work/scale-out
log() { printf 'bench scale-out: %s\n' "$*" >&2; }
for t in redis-server haproxy wrk jq curl; do
  command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || { log "no $t (scripts/deps.sh installs it)"; exit 3; }
done
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
rm -rf "$W"
mkdir -p "$W"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  scripts/redis.sh stop "$W/redis" 2>/dev/null || true
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
wait_http() { # wait_http PORT: until /healthz answers (bounded at 10 s)
  for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  log "nothing answers on port $1"
  exit 1
}

URL=$(scripts/redis.sh start "$W/redis")
CPORT=$(free_port)
"$BIN" control --data-dir "$W/control" --edge "$URL" --control-listen "127.0.0.1:$CPORT" \
  --control-rate-key 0 --control-rate-ip 0 2>"$W/control.log" &
PIDS+=("$!")
wait_http "$CPORT"
adm() { "$BIN" admin "$@" --data-dir "$W/control" --edge "$URL"; }
WSP=$(adm workspace create --name Bench | jq -r .id)
APP=$(adm application create --workspace "$WSP" --name bench | jq -r .id)
(umask 077 && adm secret-key create --application "$APP" | jq -r .secretKey >"$W/secret-key")
api() { # api METHOD PATH [JSON]
  curl -sf -X "$1" "http://127.0.0.1:$CPORT/api/v1$2" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $(cat "$W/secret-key")" ${3:+-d "$3"}
}
LST=$(api POST /lists '{"name":"Cities"}' | jq -r .id)
api PATCH "/lists/$LST" '{"visibility":"public"}' >/dev/null
PK=$(adm publishable-key create --application "$APP" --list "$LST" | jq -r .publishableKey)
log "import + publish cities"
timeout 600 "$BIN" import --control-url "http://127.0.0.1:$CPORT" --secret-key-file "$W/secret-key" \
  --list "$LST" --replace --publish .cache/datasets/cities.jsonl >"$W/import.json" 2>"$W/import.err"
jq -e '.version.state == "active"' "$W/import.json" >/dev/null ||
  { log "publish did not end active: $(cat "$W/import.json" "$W/import.err")"; exit 1; }

# Two runtimes with empty data dirs: everything comes from Redis.
RP=()
for n in 1 2; do
  p=$(free_port)
  "$BIN" runtime --data-dir "$W/rt$n" --edge "$URL" --runtime-listen "127.0.0.1:$p" \
    --threads 1 --quiet 2>"$W/rt$n.log" &
  PIDS+=("$!")
  RP+=("$p")
done
boot() { curl -s "http://127.0.0.1:$1/v1/bootstrap?key=$PK" | jq -r '.activeVersionHash // empty'; }
want=$(jq -r .version.contentHash "$W/import.json")
for p in "${RP[@]}"; do
  wait_http "$p"
  for _ in $(seq 1200); do [ "$(boot "$p")" = "$want" ] && break; sleep 0.05; done
  [ "$(boot "$p")" = "$want" ] || { log "runtime $p never served $want"; exit 1; }
done

# haproxy: one thread, keep-alive to the backends, round robin; one frontend per setup.
H1=$(free_port)
H2=$(free_port)
cat >"$W/haproxy.cfg" <<EOF
global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  option http-keep-alive
  http-reuse always
frontend one
  bind 127.0.0.1:$H1
  default_backend one
frontend two
  bind 127.0.0.1:$H2
  default_backend two
backend one
  server r1 127.0.0.1:${RP[0]}
backend two
  balance roundrobin
  server r1 127.0.0.1:${RP[0]}
  server r2 127.0.0.1:${RP[1]}
EOF
"$HAPROXY" -f "$W/haproxy.cfg" -db >"$W/haproxy.log" 2>&1 &
PIDS+=("$!")
wait_http "$H1"
wait_http "$H2"

# Request paths: every prefix of the 2,000 most populous city names when `make bench`
# left them (bench/work/cities.queries), else every prefix of the dataset's first names.
Q=$ROOT/bench/work/cities.queries
if [ ! -s "$Q" ]; then
  Q=$W/queries
  head -n 2000 .cache/datasets/cities.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    v = json.loads(line)["value"]
    for i in range(1, len(v) + 1):
        print(v[:i])' >"$Q"
fi
python3 - "$Q" "$PK" >"$W/paths" <<'PY'
import sys, urllib.parse
key = sys.argv[2]
for q in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if q:
        print(f"/v1/query?key={key}&q={urllib.parse.quote(q, safe='')}")
PY
: >"$W/wrk.jsonl"
run_wrk() { # run_wrk NAME PORT SECONDS ROUND
  BENCH_PATHS=$W/paths timeout $(($3 + 30)) wrk -t1 -c32 -d"$3s" --latency \
    -s "$ROOT/bench/paths.lua" "http://127.0.0.1:$2" >"$W/wrk.out" 2>&1
  grep '^JSON ' "$W/wrk.out" | sed 's/^JSON //' |
    jq -c --arg n "$1" --argjson r "$4" '. + {target: $n, round: $r}' >>"$W/wrk.jsonl"
}
log "warm-up"
run_wrk alone "${RP[0]}" 2 0
run_wrk haproxy-1 "$H1" 2 0
run_wrk haproxy-2 "$H2" 2 0
for r in $(seq "$ROUNDS"); do
  log "round $r/$ROUNDS"
  run_wrk alone "${RP[0]}" "$SECONDS_RUN" "$r"
  run_wrk haproxy-1 "$H1" "$SECONDS_RUN" "$r"
  run_wrk haproxy-2 "$H2" "$SECONDS_RUN" "$r"
done

# Publish to every runtime serving: add one item, POST /versions (asynchronous for 135k
# items), then poll the version until active and both runtimes' bootstrap until they
# report its hash (every 10 ms, bounded at 120 s).
: >"$W/publish.jsonl"
for i in $(seq "$PUBLISHES"); do
  api POST "/lists/$LST/items" "{\"value\":\"Benchville $i\"}" >/dev/null
  t0=$(now_ms)
  V=$(api POST "/lists/$LST/versions" | jq -r .versionNumber)
  hash=""
  for _ in $(seq 12000); do
    v=$(api GET "/lists/$LST/versions/$V")
    if [ "$(jq -r .state <<<"$v")" = active ]; then hash=$(jq -r .contentHash <<<"$v"); break; fi
    sleep 0.01
  done
  [ -n "$hash" ] || { log "version $V never became active"; exit 1; }
  t_active=$(now_ms)
  for p in "${RP[@]}"; do
    for _ in $(seq 12000); do [ "$(boot "$p")" = "$hash" ] && break; sleep 0.01; done
    [ "$(boot "$p")" = "$hash" ] || { log "runtime $p never served version $V"; exit 1; }
  done
  t1=$(now_ms)
  printf '{"version":%s,"activeMs":%d,"allServingMs":%d}\n' "$V" $((t_active - t0)) $((t1 - t0)) \
    >>"$W/publish.jsonl"
done

jq -n --slurpfile wrk "$W/wrk.jsonl" --slurpfile pub "$W/publish.jsonl" \
  --slurpfile imp "$W/import.json" --arg paths "$(wc -l <"$W/paths")" \
  --arg seconds "$SECONDS_RUN" --arg rounds "$ROUNDS" \
  '{wrk: $wrk, publishes: $pub, items: $imp[0].lines, paths: ($paths|tonumber),
    seconds: ($seconds|tonumber), rounds: ($rounds|tonumber)}' >"$OUT"
log "done: $OUT"
