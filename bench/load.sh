#!/usr/bin/env bash
# The activation and cold-fleet rows of `make bench` (bench/run.sh calls it; it also runs
# alone, after `make all`):
#
#   bench/load.sh OUT.json
#
# For each set of LOAD_SETS (default "packages-1m packages"; artifacts compiled into
# bench/work/<set>.art unless bench/run.sh left them there), with BENCH_SUGGESTD (the
# build under test) and, when LOAD_BASE names another binary, that one too, in turn:
#   - activation: a `suggestd runtime` on an edge directory; from the list record naming
#     the artifact to bootstrap answering its hash (bench/wait_hash.py: polled every 5 ms
#     over one keep-alive connection), the median of ACTIVATIONS (3) per set, then the
#     runtime's RSS ÷ the artifact's bytes (the sets are activated in turn on one list, so
#     every set after the first is a swap);
#   - cold fleet: the same artifact in a throwaway Redis (scripts/redis.sh), a runtime
#     started on an empty data dir; from its start to bootstrap answering the hash, and the
#     pull rate it logs ("artifact fetched");
#   - the reference, in the same run: `openssl dgst -sha256` of the artifact file (what
#     checking its hash costs on this CPU at best).
# Loopback only; every wait is bounded; every process started here is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: bench/load.sh OUT.json}
SETS=${LOAD_SETS:-"packages-1m packages"}
BIN=${BENCH_SUGGESTD:-$ROOT/build/suggestd}
BASE=${LOAD_BASE:-}
W=$ROOT/bench/work/load
log() { printf 'bench load: %s\n' "$*" >&2; }
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
PUT=$W/edge_put
cc -std=c17 -D_GNU_SOURCE -O2 -Isrc bench/edge_put.c build/libsuggestd.a \
  $(pkg-config --libs libmicrohttpd jansson sqlite3 libpq hiredis libsodium libcrypto libutf8proc libcurl) \
  -lhttp_parser -lpthread -lm -o "$PUT"

for set in $SETS; do
  [ -s "bench/work/$set.art" ] || { log "compile $set"; "$BIN" compile --input ".cache/datasets/$set.jsonl" --output "bench/work/$set.art" >/dev/null; }
done

PK=pk_bench_public_0123456789abcdef
KEYID=$(printf '%s' "$PK" | sha256sum | cut -d' ' -f1)
list_rec() {
  printf '{"id":"lst_bench","workspaceId":"wsp_bench","visibility":"public","status":"active",'
  printf '"queryPolicy":{"minQueryChars":1,"debounceMs":150},'
  printf '"localePolicy":{"defaultLocale":"en","supportedLocales":["en"]},'
  printf '"activeVersionNumber":1,"activeContentHash":"%s"}' "$1"
}
tenant() { # tenant EDGE: workspace, app, key, list without a version
  "$PUT" "$1" record workspaces wsp_bench '{"id":"wsp_bench","status":"active"}'
  "$PUT" "$1" record apps app_bench '{"id":"app_bench","workspaceId":"wsp_bench","status":"active","monthlyQuota":null}'
  "$PUT" "$1" record keys "$KEYID" '{"id":"pk_bench","applicationId":"app_bench","listId":"lst_bench","status":"active","origins":[]}'
  "$PUT" "$1" record lists lst_bench '{"id":"lst_bench","workspaceId":"wsp_bench","visibility":"public","status":"active","queryPolicy":{"minQueryChars":1,"debounceMs":150},"localePolicy":{"defaultLocale":"en","supportedLocales":["en"]},"activeVersionNumber":null,"activeContentHash":null}'
}
wait_hash() { # wait_hash PORT HASH: bootstrap polled every 5 ms on one connection, bounded at 120 s
  python3 bench/wait_hash.py "$1" "$PK" "$2" 120 || { log "port $1 never served $2"; exit 1; }
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

: >"$W/rows.jsonl"
URL=$(scripts/redis.sh start "$W/redis")
tenant "$URL"
declare -A HASH
for set in $SETS; do
  t0=$(now_ms); openssl dgst -sha256 "bench/work/$set.art" >/dev/null; t1=$(now_ms)
  HASH[$set]=$("$PUT" "$URL" artifact "bench/work/$set.art")
  jq -nc --arg s "$set" --arg b "$(stat -L -c %s "bench/work/$set.art")" --arg ms $((t1 - t0)) \
    '{kind:"ref", set:$s, bytes:($b|tonumber), opensslMs:($ms|tonumber)}' >>"$W/rows.jsonl"
done
n=0
for build in new ${BASE:+base}; do
  exe=$BIN
  [ "$build" = base ] && exe=$BASE
  # Activation on an edge directory.
  n=$((n + 1))
  D=$W/dir$n
  mkdir -p "$D/data"
  tenant "$D/data/edge"
  p=$(free_port)
  "$exe" runtime --data-dir "$D/data" --runtime-listen "127.0.0.1:$p" --threads 2 --quiet 2>"$D/runtime.log" &
  rp=$!
  PIDS+=("$rp")
  for _ in $(seq 200); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
  # Each set ACTIVATIONS times (default 3), the sets in turn, so every activation after
  # the very first is a swap; the row is the median, the RSS the one after its last swap
  # (one activation per set read anywhere from 294 to 587 ms for the same build).
  declare -A MS=()
  for a in $(seq "${ACTIVATIONS:-3}"); do
    for set in $SETS; do
      h=$("$PUT" "$D/data/edge" artifact "bench/work/$set.art")
      sleep 1
      t0=$(now_ms)
      "$PUT" "$D/data/edge" record lists lst_bench "$(list_rec "$h")"
      wait_hash "$p" "$h"
      t1=$(now_ms)
      sleep 1
      MS[$set]="${MS[$set]:-} $((t1 - t0))"
      log "$build activate $set ($a): $((t1 - t0)) ms"
      [ "$a" = "${ACTIVATIONS:-3}" ] || continue
      ms=$(printf '%s\n' ${MS[$set]} | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
      jq -nc --arg b "$build" --arg s "$set" --arg ms "$ms" --arg all "${MS[$set]}" \
        --arg rss "$(rss_kb "$rp")" \
        '{kind:"activate", build:$b, set:$s, ms:($ms|tonumber), rssKb:($rss|tonumber),
          runs:($all | split(" ") | map(select(. != "") | tonumber))}' >>"$W/rows.jsonl"
    done
  done
  kill "$rp"; wait "$rp" 2>/dev/null || true
  # Cold fleet: a runtime with an empty data dir, everything from Redis.
  for set in $SETS; do
    "$PUT" "$URL" record lists lst_bench "$(list_rec "${HASH[$set]}")"
    C=$W/cold-$build-$set
    p=$(free_port)
    t0=$(now_ms)
    "$exe" runtime --data-dir "$C" --edge "$URL" --runtime-listen "127.0.0.1:$p" --threads 2 --quiet 2>"$C.log" &
    rp=$!
    PIDS+=("$rp")
    wait_hash "$p" "${HASH[$set]}"
    t1=$(now_ms)
    mbs=$(grep -o '"msg":"artifact fetched".*' "$C.log" | grep -o '"mbPerSecond":[0-9.]*' | head -1 | cut -d: -f2)
    jq -nc --arg b "$build" --arg s "$set" --arg ms $((t1 - t0)) --arg mbs "${mbs:-null}" \
      '{kind:"cold", build:$b, set:$s, readyMs:($ms|tonumber), pullMBs:($mbs|fromjson)}' >>"$W/rows.jsonl"
    log "$build cold $set: ready $((t1 - t0)) ms, pull ${mbs:-?} MB/s"
    kill "$rp"; wait "$rp" 2>/dev/null || true
  done
done
jq -s '.' "$W/rows.jsonl" >"$OUT"
log "done: $OUT"
