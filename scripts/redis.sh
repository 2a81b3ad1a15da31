#!/usr/bin/env bash
# A throwaway Redis 7 for tests and benchmarks: its own directory, a free port on
# 127.0.0.1, appendonly with fsync every write (acknowledged edge writes survive kill -9).
#
#   scripts/redis.sh start DIR   prints redis://127.0.0.1:PORT (DIR of a killed server:
#                                the same port and data again)
#   scripts/redis.sh kill DIR    kill -9, keeping DIR (outage tests)
#   scripts/redis.sh stop DIR    stops it and removes DIR
#   scripts/redis.sh url DIR     prints the URL of a running server
set -euo pipefail
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|kill|stop|url DIR" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "redis.sh: no redis-server (run scripts/deps.sh)" >&2; exit 3; }
url() { echo "redis://127.0.0.1:$(cat "$dir/port")"; }
case "$cmd" in
start)
  mkdir -p "$dir"
  for _ in 1 2 3 4 5; do
    if [ -f "$dir/port" ]; then port=$(cat "$dir/port"); else
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'); fi
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes \
      --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save '' \
      --appendonly yes --appendfsync always --protected-mode no >/dev/null || continue
    # A daemonized server that lost the race for its port exits after the fork; then
    # the server answering is another one (another test's), which the dir tells apart.
    want=$(cd "$dir" && pwd -P)
    for _ in $(seq 50); do
      if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
        [ "$(redis-cli -p "$port" config get dir 2>/dev/null | sed -n 2p)" = "$want" ] || break
        echo "$port" >"$dir/port"; url; exit 0
      fi
      sleep 0.1
    done
  done
  cat "$dir/redis.log" >&2; exit 1 ;;
stop)
  if [ -f "$dir/port" ]; then redis-cli -p "$(cat "$dir/port")" shutdown nosave >/dev/null 2>&1 || true; fi
  [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
  rm -rf "$dir" ;;
kill)
  [ -f "$dir/redis.pid" ] && kill -9 "$(cat "$dir/redis.pid")" 2>/dev/null || true
  rm -f "$dir/redis.pid" ;;
url) url ;;
*) echo "usage: $0 start|kill|stop|url DIR" >&2; exit 2 ;;
esac
