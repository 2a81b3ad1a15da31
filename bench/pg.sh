#!/usr/bin/env bash
# `make bench-pg`: the PostgreSQL store next to SQLite, measured side by side in one run on
# this machine (docs/PERFORMANCE.md, "PostgreSQL store"). Writes bench/work/pg/results.json
# and prints it.
#
#   1. Import + publish of 1M items (.cache/datasets/packages-1m.jsonl): `suggestd import
#      --replace` through a `suggestd control` on SQLite (--data-dir) and on PostgreSQL
#      (--database, a throwaway cluster from scripts/pg.sh), then POST …/versions and
#      polling until the version is active. Wall-clock seconds of each.
#   2. Control-plane requests per second with wrk (BENCH_SECONDS, default 10; 2 threads,
#      16 keep-alive connections): item writes (POST …/items, a new value each) and list
#      reads (GET /api/v1/lists), with a secret key, rate limits off; on SQLite with one
#      process, on PostgreSQL with one and with two `suggestd control` processes on one
#      database (each its own data dir, one edge directory) behind haproxy (round robin).
#
# Loopback only; every process this script starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
W=$ROOT/bench/work/pg
BIN=${BENCH_SUGGESTD:-$ROOT/build/suggestd}
SECONDS_WRK=${BENCH_SECONDS:-10}
DATA=$ROOT/.cache/datasets/packages-1m.jsonl
log() { printf 'bench-pg: %s\n' "$*" >&2; }
for t in wrk haproxy jq curl; do
  command -v "$t" >/dev/null || { log "missing $t (scripts/deps.sh installs it)"; exit 1; }
done
[ -s "$DATA" ] || scripts/datasets.sh
# BENCH_SKIP_IMPORT=1 keeps section 1's figures from the last run and measures section 2 only.
if [ "${BENCH_SKIP_IMPORT:-0}" = 1 ]; then
  rm -rf "$W"/rps* "$W"/cluster
else
  rm -rf "$W"
fi
mkdir -p "$W"
PIDS=()
PG=$W/cluster
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  scripts/pg.sh stop "$PG" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
wait_up() {
  for _ in $(seq 400); do curl -sf "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.05; done
  log "port $1 never answered"; exit 1
}

PGURL=$(scripts/pg.sh start "$PG")
psql -X -q -d "$PGURL" -c 'CREATE DATABASE bench_import' -c 'CREATE DATABASE bench_rps'
log "PostgreSQL at $PGURL"

# start_control NAME PORT [FLAGS]…: a control plane logging to $W/NAME.log.
start_control() {
  local name=$1 port=$2
  shift 2
  "$BIN" control --control-listen "127.0.0.1:$port" --control-rate-key 0 --control-rate-ip 0 \
    "$@" 2>"$W/$name.log" &
  PIDS+=($!)
  wait_up "$port"
}

# tenant DIR FLAGS…: workspace, application, secret key (file DIR/key) and a list (DIR/list).
tenant() {
  local dir=$1 port=$2
  shift 2
  local ws app
  ws=$("$BIN" admin workspace create --name Bench "$@" | jq -r .id)
  app=$("$BIN" admin application create --workspace "$ws" --name bench "$@" | jq -r .id)
  (umask 077 && "$BIN" admin secret-key create --application "$app" "$@" | jq -r .secretKey >"$dir/key")
  curl -sf -X POST "http://127.0.0.1:$port/api/v1/lists" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $(cat "$dir/key")" -d '{"name":"Packages"}' | jq -r .id >"$dir/list"
}

# ---- 1. import + publish of 1M items ------------------------------------------------------
import_publish() { # NAME FLAGS…
  local name=$1
  shift
  local d=$W/$name port
  port=$(free_port)
  mkdir -p "$d"
  start_control "$name-control" "$port" "$@"
  tenant "$d" "$port" "$@"
  local key list t0 t1 t2 num state
  key=$(cat "$d/key")
  list=$(cat "$d/list")
  log "$name: import 1M items"
  t0=$(now_ms)
  "$BIN" import --control-url "http://127.0.0.1:$port" --secret-key-file "$d/key" --list "$list" \
    --replace "$DATA" >"$d/import.json" 2>"$d/import.err"
  t1=$(now_ms)
  log "$name: publish"
  num=$(curl -sf -X POST "http://127.0.0.1:$port/api/v1/lists/$list/versions" \
    -H "Authorization: Bearer $key" | jq -r .versionNumber)
  state=queued
  for _ in $(seq 12000); do # at most 20 minutes
    state=$(curl -sf "http://127.0.0.1:$port/api/v1/lists/$list/versions/$num" \
      -H "Authorization: Bearer $key" | jq -r .state)
    [ "$state" = queued ] || [ "$state" = staged ] || break
    sleep 0.1
  done
  t2=$(now_ms)
  [ "$state" = active ] || { log "$name: publish ended $state"; exit 1; }
  jq -n --arg name "$name" --argjson imp "$(cat "$d/import.json")" --arg i "$((t1 - t0))" \
    --arg p "$((t2 - t1))" '{store: $name, items: $imp.created, importSeconds: (($i|tonumber)/1000),
      publishSeconds: (($p|tonumber)/1000)}' >"$d/figures.json"
  kill "${PIDS[-1]}"
  wait "${PIDS[-1]}" 2>/dev/null || true
  unset 'PIDS[-1]'
}
if [ "${BENCH_SKIP_IMPORT:-0}" != 1 ]; then
  import_publish sqlite --data-dir "$W/sqlite/data"
  import_publish postgres --data-dir "$W/postgres/data" --database "${PGURL%/postgres}/bench_import"
fi

# ---- 2. control-plane requests per second -------------------------------------------------
wrk_run() { # LABEL PORT MODE
  local out
  out=$(BENCH_MODE=$3 BENCH_KEY=$(cat "$W/rps/key") BENCH_LIST=$(cat "$W/rps/list") \
    wrk -t2 -c16 -d"${SECONDS_WRK}s" -s bench/control.lua "http://127.0.0.1:$2" | grep '^JSON ' | cut -c6-)
  jq -n --arg setup "$1" --arg mode "$3" --argjson r "$out" '{setup: $setup, mode: $mode} + $r'
}
rps() { # LABEL PORT
  wrk_run "$1" "$2" write
  wrk_run "$1" "$2" read
}
mkdir -p "$W/rps" "$W/rps-sqlite"
{
  # SQLite, one process (its only layout).
  P=$(free_port)
  start_control rps-sqlite "$P" --data-dir "$W/rps-sqlite/data"
  tenant "$W/rps" "$P" --data-dir "$W/rps-sqlite/data"
  rps "sqlite, 1 process" "$P"
  kill "${PIDS[-1]}"
  # PostgreSQL: one process, then two behind haproxy, on one database and one edge.
  DB=(--database "${PGURL%/postgres}/bench_rps" --edge "$W/rps-edge")
  P1=$(free_port)
  P2=$(free_port)
  start_control rps-pg-a "$P1" --data-dir "$W/rps-a" "${DB[@]}"
  tenant "$W/rps" "$P1" --data-dir "$W/rps-a" "${DB[@]}"
  rps "postgres, 1 process" "$P1"
  start_control rps-pg-b "$P2" --data-dir "$W/rps-b" "${DB[@]}"
  HP=$(free_port)
  cat >"$W/haproxy.cfg" <<EOF
global
  maxconn 256
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
frontend fe
  bind 127.0.0.1:$HP
  default_backend controls
backend controls
  balance roundrobin
  http-reuse always
  server a 127.0.0.1:$P1
  server b 127.0.0.1:$P2
EOF
  haproxy -f "$W/haproxy.cfg" -db 2>"$W/haproxy.log" &
  PIDS+=($!)
  wait_up "$HP"
  rps "postgres, 2 processes (haproxy)" "$HP"
} >"$W/rps.jsonl"

jq -n --slurpfile imp <(cat "$W"/sqlite/figures.json "$W"/postgres/figures.json) \
  --slurpfile rps "$W/rps.jsonl" --arg cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --arg pg "$(psql -X -At -d "$PGURL" -c 'SHOW server_version')" \
  '{cpus: ($cpus|tonumber), loadAverageAtEnd: $load, postgres: $pg, importPublish: $imp, controlRps: $rps}' \
  >"$W/results.json"
cat "$W/results.json"
