#!/usr/bin/env bash
# `make bench`: measures suggestd side by side with what users would pick instead and
# writes bench/RESULTS.md. Every figure comes from this one run on this machine.
#
#   1. Publish: `suggestd compile` time and peak RSS, artifact bytes per item and the
#      ratio to the items' JSONL bytes, runtime activation time; SQLite FTS5 index build
#      time on the same items (bench/query_bench.c).
#   2. Lookup: in-process normalise + lookup + response assembly per query (median,
#      p99), against SQLite FTS5 on the same query mix (bench/query_bench.c); the typo
#      mix (the same queries with 1 or 2 edits) next to the exact mix; the filter by
#      ancestor (`within`) on the cities with their countries as parents, with and
#      without the subtree index (bench/within_bench.c).
#   3. HTTP: wrk (1 thread, 32 keep-alive connections, 10 s, 5 alternating rounds)
#      against the runtime listener of `suggestd serve` (access log on, as by default)
#      /v1/query on the 135k-city list (exact mix, and the typo mix as suggestd-typo), created and published through the control plane
#      (admin CLI, POST/PATCH /lists, `suggestd import --replace --publish`), next to
#      nginx answering the same byte size with `return 200` and with a static file.
#      Then issue 23's two mixes (bench/http_mix.sh): the repeating one (3,000 city
#      prefixes cycled) and one in which no request repeats, each beside nginx in at least
#      5 alternating rounds, with the server-side median and p99 from the access log.
#   4. Scale-out (bench/scale_out.sh): /v1/query throughput of one runtime alone, one and
#      two runtimes behind haproxy (Redis edge), and publish → every runtime serving.
#   5-7. What search analytics cost (bench/analytics_overhead.sh), tiers 3 and 4
#      (bench/words.sh), activation and a cold runtime on Redis (bench/load.sh).
#   8. PostgreSQL beside SQLite (bench/pg.sh, also `make bench-pg`): the 1M-line import
#      and single-item writes, when the PostgreSQL server binaries are installed.
#
# Installs wrk and nginx with apt-get when missing and fetches the datasets. Loopback
# only (127.0.0.1); every loop is bounded; the whole run takes about an hour on 2 CPUs.
# Environment: BENCH_SETS="cities packages-1m packages" limits the datasets,
# BENCH_HTTP_SECONDS (10) and BENCH_HTTP_ROUNDS (5) shorten the HTTP part for a try-out.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/bench_edge.sh # nginx_conf (its PK is replaced below by the published key)
ROOT=$PWD
W=$ROOT/bench/work
SETS=${BENCH_SETS:-"cities packages-1m packages"}
HTTP_SECONDS=${BENCH_HTTP_SECONDS:-10}
HTTP_ROUNDS=${BENCH_HTTP_ROUNDS:-5}
CONNS=32
# BENCH_SUGGESTD points at another build of the binary (recorded in RESULTS.md).
BIN=${BENCH_SUGGESTD:-$ROOT/build/suggestd}
mkdir -p "$W"
log() { printf 'bench: %s\n' "$*" >&2; }

# ---- tools and data ----------------------------------------------------------------------
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v curl >/dev/null || need+=(curl)
command -v jq >/dev/null || need+=(jq)
pkg-config --exists sqlite3 || need+=(libsqlite3-dev)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y "${need[@]}" >/dev/null; } ||
    { [[ " ${need[*]} " == *" nginx-light "* ]] &&
      apt-get install -y "${need[@]/nginx-light/nginx}" >/dev/null; }
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
scripts/datasets.sh
make --no-print-directory -s all
QB=$W/query_bench
cc -std=c17 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Isrc \
  $(pkg-config --cflags jansson libutf8proc sqlite3) bench/query_bench.c build/libsuggestd.a \
  $(pkg-config --libs jansson libutf8proc libsodium libcrypto sqlite3) -lm -o "$QB"

# Every process this script starts is recorded here and stopped on exit.
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }

# ---- 1 + 2: publish and lookup, per dataset ------------------------------------------------
for set in $SETS; do
  items=.cache/datasets/$set.jsonl
  art=$W/$set.art
  log "compile $set"
  /usr/bin/time -f '{"compileSeconds":%e,"peakRssKb":%M}' -o "$W/$set.time.json" \
    "$BIN" compile --input "$items" --output "$art" >"$W/$set.compile.json"
  jq -n --slurpfile t "$W/$set.time.json" --slurpfile c "$W/$set.compile.json" \
    --arg raw "$(stat -c %s "$items")" --arg lines "$(wc -l <"$items")" \
    '$t[0] + {artifactBytes: $c[0].bytes, contentHash: $c[0].contentHash,
              itemCount: $c[0].itemCount, rawBytes: ($raw|tonumber), lines: ($lines|tonumber)}' \
    >"$W/$set.publish.json"
  mix=spread
  [ "$set" = cities ] && mix=top
  log "lookup + FTS5 $set"
  "$QB" --artifact "$art" --items "$items" --fts-db "$W/$set.fts.db" --mix "$mix" \
    --names 2000 --rounds 3 --fts-max 3000 --fts-seconds 60 --fts-rounds 5 \
    --content-hash "$(jq -r .contentHash "$W/$set.compile.json")" \
    --queries-out "$W/$set.queries" --typo-queries-out "$W/$set.typo" >"$W/$set.lookup.json"
  rm -f "$W/$set.fts.db"
done

# ---- 2b: the filter by ancestor (bench/within_bench.c) ------------------------------------
# The cities with their countries as parents, every country as ancestor; the same queries
# on the list compiled without the subtree index (the member scan), interleaved, and the
# checksums of both (they must be equal).
rm -f "$W/within.json"
if [[ " $SETS " == *" cities "* ]]; then
  log "within (filter by ancestor)"
  cc -std=c17 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Isrc $(pkg-config --cflags jansson libutf8proc) \
    bench/within_bench.c build/libsuggestd.a $(pkg-config --libs jansson libutf8proc libsodium libcrypto) -lm \
    -o "$W/within_bench"
  "$W/within_bench" --items .cache/datasets/cities.jsonl --rounds 3 --unfiltered 0 >"$W/within.json"
fi

# ---- 3: HTTP ---------------------------------------------------------------------------
# Activation (section 1): a `suggestd runtime` serves a hand-built edge directory written
# the way the edge store writes it (temp file + rename, REVISION bump), so the figure is
# the runtime's alone. The HTTP runs then use a list published through the control plane.
HTTP_STATUS=skipped
THREADS=$(nproc)
# The runtime lands on main separately; without it the HTTP table says so.
if ! "$BIN" runtime 2>&1 | grep -q 'unknown command'; then HTTP_STATUS=run; fi
if [ "$HTTP_STATUS" = run ] && [[ " $SETS " == *" cities "* ]]; then
  D=$W/http
  rm -rf "$D"
  E=$D/data/edge
  for k in artifacts lists keys apps workspaces subscriptions signing-keys; do mkdir -p "$E/$k"; done
  put() { # put FILE CONTENT: atomic write, then bump REVISION
    printf '%s' "$2" >"$1.tmp-bench" && mv "$1.tmp-bench" "$1"
    rev=$(cat "$E/REVISION" 2>/dev/null || echo 0)
    printf '%s\n' $((rev + 1)) >"$E/REVISION.tmp-bench" && mv "$E/REVISION.tmp-bench" "$E/REVISION"
  }
  put_artifact() { # put_artifact PATH -> prints sha256:<hex>
    local h
    h=$(sha256sum "$1" | cut -d' ' -f1)
    cp "$1" "$E/artifacts/$h.sga.tmp-bench" && mv "$E/artifacts/$h.sga.tmp-bench" "$E/artifacts/$h.sga"
    echo "sha256:$h"
  }
  list_rec() { # list_rec HASH|null
    local h=null
    [ "$1" != null ] && h="\"$1\""
    printf '{"id":"lst_bench","workspaceId":"wsp_bench","visibility":"public","status":"active",'
    printf '"queryPolicy":{"minQueryChars":1,"debounceMs":150},'
    printf '"localePolicy":{"defaultLocale":"en","supportedLocales":["en"]},'
    printf '"activeVersionNumber":%s,"activeContentHash":%s}' "$([ "$h" = null ] && echo null || echo 1)" "$h"
  }
  PK=pk_bench_public_0123456789abcdef
  put "$E/workspaces/wsp_bench.json" '{"id":"wsp_bench","status":"active"}'
  put "$E/apps/app_bench.json" '{"id":"app_bench","workspaceId":"wsp_bench","status":"active","monthlyQuota":null}'
  put "$E/lists/lst_bench.json" "$(list_rec null)"
  put "$E/keys/$(printf '%s' "$PK" | sha256sum | cut -d' ' -f1).json" \
    '{"id":"pk_bench","applicationId":"app_bench","listId":"lst_bench","status":"active","origins":[]}'

  RPORT=$(free_port)
  "$BIN" runtime --data-dir "$D/data" --runtime-listen "127.0.0.1:$RPORT" --threads "$THREADS" \
    --quiet 2>"$D/runtime.log" &
  RPID=$!
  PIDS+=("$RPID")
  for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$RPORT/healthz" >/dev/null 2>&1 && break
    sleep 0.05
  done
  boot() { curl -s "http://127.0.0.1:$RPORT/v1/bootstrap?key=$PK" | jq -r '.activeVersionHash // empty'; }

  # Activation: from the list record naming a new artifact to the runtime serving it
  # (bootstrap reports its hash). Bounded at 120 s per artifact.
  activate() { # activate ARTIFACT -> prints {"hash":…,"activateMs":…}
    local h t0 t1
    h=$(put_artifact "$1")
    t0=$(now_ms)
    put "$E/lists/lst_bench.json" "$(list_rec "$h")"
    for _ in $(seq 12000); do
      [ "$(boot)" = "$h" ] && break
      sleep 0.01
    done
    t1=$(now_ms)
    [ "$(boot)" = "$h" ] || { log "activation of $1 timed out"; exit 1; }
    printf '{"hash":"%s","activateMs":%d}\n' "$h" $((t1 - t0))
  }
  for set in $SETS; do
    [ "$set" = cities ] && continue
    log "activate $set"
    activate "$W/$set.art" >"$W/$set.activate.json"
  done
  log "activate cities"
  activate "$W/cities.art" >"$W/cities.activate.json"
  # The activation figures are taken; the HTTP runs use a list published for real.
  kill "$RPID"
  wait "$RPID" 2>/dev/null || true

  # The list the HTTP runs query is published through the real pipeline, on a fresh data
  # dir: `suggestd serve` (control plane + runtime in one process, as `make run` starts
  # it), the admin CLI for the tenant and the publishable key, the control API for the
  # list, `suggestd import --replace --publish` for the 135k items. cities.jsonl lines
  # ({id, value, displayValue, rank}) are item bodies as the import takes them (`id` is
  # ignored). The runtime's access log stays on, as `serve` runs by default: one JSON line
  # per request, stderr redirected to a file (serve.log).
  S=$D/serve
  mkdir -p "$S"
  CPORT=$(free_port)
  RPORT=$(free_port)
  "$BIN" serve --data-dir "$S/data" --control-listen "127.0.0.1:$CPORT" \
    --runtime-listen "127.0.0.1:$RPORT" --control-rate-key 0 --control-rate-ip 0 \
    2>"$S/serve.log" &
  RPID=$!
  PIDS+=("$RPID")
  for port in "$CPORT" "$RPORT"; do
    for _ in $(seq 200); do
      curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
      sleep 0.05
    done
  done
  adm() { "$BIN" admin "$@" --data-dir "$S/data"; }
  WSP=$(adm workspace create --name Bench | jq -r .id)
  APP=$(adm application create --workspace "$WSP" --name bench | jq -r .id)
  (umask 077 && adm secret-key create --application "$APP" | jq -r .secretKey >"$S/secret-key")
  api() { # api METHOD PATH JSON
    curl -sf -X "$1" "http://127.0.0.1:$CPORT/api/v1$2" -H 'Content-Type: application/json' \
      -H "Authorization: Bearer $(cat "$S/secret-key")" -d "$3"
  }
  LST=$(api POST /lists '{"name":"Cities"}' | jq -r .id)
  api PATCH "/lists/$LST" '{"visibility":"public"}' >/dev/null
  PK=$(adm publishable-key create --application "$APP" --list "$LST" | jq -r .publishableKey)
  log "import + publish cities through the control plane"
  timeout 600 "$BIN" import --control-url "http://127.0.0.1:$CPORT" --secret-key-file "$S/secret-key" \
    --list "$LST" --replace --publish .cache/datasets/cities.jsonl >"$S/import.json" 2>"$S/import.err"
  jq -e '.version.state == "active"' "$S/import.json" >/dev/null ||
    { log "publish did not end active: $(cat "$S/import.json" "$S/import.err")"; exit 1; }
  # From the import's end to the runtime answering with the new hash (bounded at 60 s).
  want=$(jq -r .version.contentHash "$S/import.json")
  t0=$(now_ms)
  for _ in $(seq 1200); do
    [ "$(boot)" = "$want" ] && break
    sleep 0.05
  done
  [ "$(boot)" = "$want" ] || { log "the runtime never served $want"; exit 1; }
  jq --arg ms "$(($(now_ms) - t0))" '. + {servedAfterImportMs: ($ms|tonumber)}' "$S/import.json" \
    >"$S/import.tmp" && mv "$S/import.tmp" "$S/import.json"

  # Request paths: every prefix of the 2,000 most populous city names, in that order.
  python3 - "$W/cities.queries" "$PK" >"$D/paths" <<'PY'
import sys, urllib.parse
key = sys.argv[2]
for q in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if q:
        print(f"/v1/query?key={key}&q={urllib.parse.quote(q, safe='')}")
PY
  # The typo mix over HTTP: the same prefixes with 1 or 2 edits (bench/query_bench.c),
  # run next to the exact mix in every round.
  python3 - "$W/cities.typo" "$PK" >"$D/paths-typo" <<'PY'
import sys, urllib.parse
key = sys.argv[2]
for q in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if q:
        print(f"/v1/query?key={key}&q={urllib.parse.quote(q, safe='')}")
PY
  # Mean body size over the first 2,000 paths (one keep-alive connection; bounded).
  BODY=$(python3 - "$D/paths" "$RPORT" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[2]), timeout=10)
n = total = bad = 0
for path in open(sys.argv[1]).read().split("\n")[:2000]:
    if not path:
        continue
    c.request("GET", path)
    r = c.getresponse()
    total += len(r.read())
    bad += r.status != 200
    n += 1
print(json.dumps({"meanBytes": total // n, "sampled": n, "non200": bad}))
PY
)
  BYTES=$(jq -r .meanBytes <<<"$BODY")

  # nginx: its own config on loopback, worker_processes = runtime threads, no access log.
  NG=$D/nginx
  mkdir -p "$NG/www" "$NG/tmp"
  head -c "$BYTES" /dev/zero | tr '\0' 'a' >"$NG/www/body.json"
  NPORT_R=$(free_port)
  NPORT_F=$(free_port)
  nginx_conf "$NG" "$THREADS" "$NPORT_R" "$NG/www" "$NPORT_F"
  "$NGINX" -c "$NG/nginx.conf" -p "$NG" &
  PIDS+=("$!")
  for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$NPORT_F/x" >/dev/null 2>&1 && break
    sleep 0.05
  done

  # One worker each: wrk fills one of the machine's CPUs, so with one worker a server has
  # the other CPU to itself, while with one worker per CPU three busy threads share two.
  # Same list: a `suggestd runtime --threads 1` on the serve process's data dir (it reads
  # the edge directory only; access log on, to a file), and an nginx with one worker.
  NG1=$D/nginx1
  NPORT_R1=$(free_port)
  nginx_conf "$NG1" 1 "$NPORT_R1" "$NG/www"
  "$NGINX" -c "$NG1/nginx.conf" -p "$NG1" &
  PIDS+=("$!")
  RPORT1=$(free_port)
  "$BIN" runtime --data-dir "$S/data" --runtime-listen "127.0.0.1:$RPORT1" --threads 1 \
    --state-dir "$D/runtime1-state" 2>"$D/runtime1.log" &
  PIDS+=("$!")
  for port in "$NPORT_R1" "$RPORT1"; do
    for _ in $(seq 200); do
      curl -s -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null && break
      sleep 0.05
    done
  done

  rss() { awk '/^VmRSS/ {print $2}' "/proc/$RPID/status"; }
  hwm() { awk '/^VmHWM/ {print $2}' "/proc/$RPID/status"; }
  run_wrk() { # run_wrk NAME PORT SECONDS [PATHS] -> appends one JSON line to $D/wrk.jsonl
    BENCH_PATHS=${4:-$D/paths} timeout $(($3 + 30)) wrk -t1 -c$CONNS -d"$3s" --latency \
      -s "$ROOT/bench/paths.lua" "http://127.0.0.1:$2" >"$D/wrk.out" 2>&1
    grep '^JSON ' "$D/wrk.out" | sed 's/^JSON //' |
      jq -c --arg n "$1" --argjson r "${ROUND:-0}" '. + {target: $n, round: $r}' >>"$D/wrk.jsonl"
  }
  : >"$D/wrk.jsonl"
  log "HTTP warm-up"
  # Both mixes the rounds run: the typo mix reaches queries the repeating one never does,
  # and the memory that follows the work (the analytics cells of one 5 s shipment, the
  # connections) grows to its high-water mark during the first shipment that sees it.
  # Longer than one shipment, so "flat RSS" below measures what the rounds leave, not that.
  ROUND=0 run_wrk suggestd "$RPORT" 2
  ROUND=0 run_wrk suggestd-typo "$RPORT" 6 "$D/paths-typo"
  ROUND=0 run_wrk suggestd-1w "$RPORT1" 2
  errs() { grep -c '"error"' "$S/serve.log" || true; }
  logn() { grep -c '"path":"/v1/query"' "$S/serve.log" || true; }
  not200() { grep -c '"path":"/v1/query","status":[^2]' "$S/serve.log" || true; }
  ERR0=$(errs) LOG0=$(logn) BAD0=$(not200)
  RSS0=$(rss)
  for r in $(seq "$HTTP_ROUNDS"); do
    log "HTTP round $r/$HTTP_ROUNDS"
    ROUND=$r run_wrk suggestd "$RPORT" "$HTTP_SECONDS"
    ROUND=$r run_wrk suggestd-typo "$RPORT" "$HTTP_SECONDS" "$D/paths-typo"
    ROUND=$r run_wrk nginx-return "$NPORT_R" "$HTTP_SECONDS"
    ROUND=$r run_wrk nginx-static "$NPORT_F" "$HTTP_SECONDS"
    ROUND=$r run_wrk suggestd-1w "$RPORT1" "$HTTP_SECONDS"
    ROUND=$r run_wrk nginx-return-1w "$NPORT_R1" "$HTTP_SECONDS"
  done
  RSS1=$(rss)
  ERR1=$(errs) LOG1=$(logn) BAD1=$(not200)
  ERR_1W=$(grep -c '"error"' "$D/runtime1.log" || true)
  jq -n --argjson body "$BODY" --arg rss0 "$RSS0" --arg rss1 "$RSS1" --arg hwm "$(hwm)" \
    --arg err "$((ERR1 - ERR0 + ERR_1W))" --arg logged "$((LOG1 - LOG0))" --arg bad "$((BAD1 - BAD0))" \
    --slurpfile imp "$S/import.json" --arg threads "$THREADS" --arg paths "$(wc -l <"$D/paths")" \
    '{body: $body, rssBeforeKb: ($rss0|tonumber), rssAfterKb: ($rss1|tonumber),
      hwmKb: ($hwm|tonumber), runtimeErrors: ($err|tonumber), threads: ($threads|tonumber),
      paths: ($paths|tonumber), accessLogLines: ($logged|tonumber),
      accessLogNon200: ($bad|tonumber), import: $imp[0]}' >"$D/http.json"
  cleanup
  PIDS=()
fi

# ---- 3b: the two mixes of issue 23 beside nginx (bench/http_mix.sh) ------------------------
# The repeating mix (3,000 city prefixes cycled) and the mix in which no request repeats
# (every prefix of every city with one- and two-edit variants, shuffled), each beside nginx
# `return 200` in alternating rounds (at least 3), access log on as by default, so every run
# also gives the server-side median and p99 (durationUs); RESULTS.md section 3.
rm -f "$W/http-mix.jsonl"
if [[ " $SETS " == *" cities "* ]] && [ -s "$W/cities.art" ] && [ -s "$W/cities.queries" ]; then
  log "HTTP: the repeating and the non-repeating mix"
  HTTP_MIX_ACCESS_LOG=1 bench/http_mix.sh "$W/cities.art" "$W/cities.queries" "$HTTP_SECONDS" \
    "$((HTTP_ROUNDS < 3 ? 3 : HTTP_ROUNDS))" suggestd="$BIN" >"$W/http-mix.jsonl" ||
    log "the two HTTP mixes not measured (see the lines above)"
fi

# ---- 4: scale-out (bench/scale_out.sh) -------------------------------------------------------
# One Redis, one control process, two runtimes behind haproxy; needs redis-server and
# haproxy (scripts/deps.sh). Without them the table says it was not run.
rm -f "$W/scale-out.json"
if [[ " $SETS " == *" cities "* ]]; then
  log "scale-out"
  SO_SECONDS=$HTTP_SECONDS SO_ROUNDS=$HTTP_ROUNDS bench/scale_out.sh "$W/scale-out.json" ||
    log "scale-out not measured (see the lines above)"
fi

# ---- 5: what search analytics cost (bench/analytics_overhead.sh, issue 25) ------------------
# Analytics on, off, and on again (the noise) beside nginx, 9 interleaved rounds of the
# repeating city mix; printed here and appended to RESULTS.md.
rm -f "$W/analytics.json"
if [[ " $SETS " == *" cities "* ]] && [ -s "$W/cities.art" ] && [ -s "$W/cities.queries" ]; then
  log "analytics on / off"
  bench/analytics_overhead.sh "$W/cities.art" "$W/cities.queries" "$HTTP_SECONDS" 9 \
    "$W/analytics.json" || log "analytics overhead not measured (see the lines above)"
fi

# ---- 6: activation and cold fleet (bench/load.sh, issue 23) --------------------------------
# Activation on an edge directory, a cold runtime pulling from Redis, the RSS after a swap,
# beside `openssl dgst -sha256` of the same artifact; appended to RESULTS.md.
rm -f "$W/load.json"
LOAD_LIST=""
for s in packages-1m packages; do [[ " $SETS " == *" $s "* ]] && LOAD_LIST="$LOAD_LIST $s"; done
if [ -n "$LOAD_LIST" ]; then
  log "activation and cold fleet"
  LOAD_SETS="$LOAD_LIST" bench/load.sh "$W/load.json" || log "activation not measured (see the lines above)"
fi

# ---- 7: tiers 3 and 4 (bench/words.sh, issue 24) -----------------------------------------
# Compile with and without their sections (cities, package names), the tier 3 and 4 mixes
# and an unaffected mix on both artifacts; RESULTS.md section 6.
rm -f "$W/words.json"
if [[ " $SETS " == *" packages "* ]]; then
  log "tiers 3 and 4"
  BENCH_SUGGESTD=$BIN bench/words.sh "$W/words.json" || log "tiers 3 and 4 not measured (see above)"
fi

# ---- 8: the PostgreSQL store beside SQLite (bench/pg.sh, `make bench-pg`) ------------------
# 1M-line import and single-item writes on both stores; RESULTS.md section 8. Needs the
# PostgreSQL server binaries (scripts/deps.sh installs them).
rm -f "$W/pg/results.json"
if [[ " $SETS " == *" packages-1m "* ]] && { command -v pg_ctl >/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; }; then
  log "PostgreSQL beside SQLite"
  BENCH_SUGGESTD=$BIN bench/pg.sh >/dev/null || log "PostgreSQL not measured (see the lines above)"
fi

# ---- RESULTS.md ----------------------------------------------------------------------------
log "writing bench/RESULTS.md"
COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src bench Makefile || echo "+dirty")
BENCH_BIN=$BIN python3 bench/report.py "$W" "$HTTP_STATUS" "$COMMIT" "$SETS" "$HTTP_SECONDS" "$HTTP_ROUNDS" \
  >bench/RESULTS.md
log "done: bench/RESULTS.md"
